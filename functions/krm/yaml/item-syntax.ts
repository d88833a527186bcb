/**
 * A syntax-only proof, line by line, that a lazily kept item is well-formed
 * YAML: an item printed back verbatim must be as valid as a parsed one, and
 * a line check costs a fraction of building a document. It accepts only the
 * block style kpt writes (plain keys, one-line plain or quoted values, `{}`,
 * `[]`, `|`/`>` block scalars, compact `- ` entries, comments) with unique keys
 * and consistent indentation; anything else (flow collections, anchors,
 * aliases, tags, multi-line plain or quoted scalars...) returns false, and the
 * caller then parses the item in full to validate it.
 */

/**
 * The common line, matched at its start: indentation, an optional `- `, a
 * plain key, and nothing, a comment, or a simple one-line value (a plain word,
 * a quoted scalar without escapes, `{}`, `[]`) with an optional comment.
 * Group 1 is the dash, group 2 the key, group 3 (empty) is set when there is a
 * value; nothing else is captured, to spare allocations. Other lines take the
 * general path.
 */
const commonLine =
  // eslint-disable-next-line no-control-regex -- control characters are exactly what quoted scalars may not hold
  / *(?:(-) +)?([A-Za-z0-9_][A-Za-z0-9_./-]{0,200}):(?: +(?:(?:[A-Za-z0-9_./][A-Za-z0-9_./@+=-]*|'[^'\n\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff]*'|"[^"\\\n\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff]*"|\{\}|\[\])()(?: +#[^\n]*)?|#[^\n]*))? *\n/y
/** A plain key and its `:` (then a space or the line's end), matched at a position. */
const plainKeyAt = /[A-Za-z0-9_][A-Za-z0-9_./-]*:(?= |$)/y
/** How a one-line plain scalar may start: no indicator (`-` only before a non-space). */
const plainStart = /^(?:[A-Za-z0-9_./$~(+=^\\]|-\S)/
const blockScalarHeader = /^[|>][+-]?(?: +#.*)?$/
const doubleQuoteEscape = /\\(?:[0abtnvfre "/\\N_LP\t]|x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8})/y
// eslint-disable-next-line no-control-regex -- the characters YAML does not allow unescaped
const controlCharacter = /[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff]/
/** Keys near YAML's 1,024-character limit for implicit keys go to the parser. */
const maxKeyLength = 1000
/** Deeper blocks go to the parser, whose depth check (documents.ts) reports them. */
const maxBlockDepth = 100

interface Level {
  indent: number
  kind: 'map' | 'seq'
  keys?: string[] | Set<string>
}

/** A `|` or `>` scalar being skipped: its parent's column, and its content's once the first line sets it. */
interface BlockScalar {
  parentIndent: number
  contentIndent?: number
}

/** Where the line-by-line scan of one item stands: the blocks open around the line, and what the last line left. */
interface Scan {
  stack: Level[]
  /** The column of the key or dash on the previous line when its value is a block still to come. */
  open: number | undefined
  blockScalar: BlockScalar | undefined
}

/** True when `chunk` (a `- ` entry of the items block) is certainly well-formed YAML with unique keys. */
export function isPlainBlockItem(chunk: string): boolean {
  // One state object passed to module functions: no closures made per item.
  const scan: Scan = { stack: [{ indent: 0, kind: 'seq' }], open: undefined, blockScalar: undefined }
  let lineStart = 0
  while (lineStart < chunk.length) {
    if (!scan.blockScalar) {
      // Most lines: one match of the common shape, no slicing.
      commonLine.lastIndex = lineStart
      const m = commonLine.exec(chunk)
      if (m) {
        const next = commonLine.lastIndex
        if (!readCommonLine(scan, chunk, lineStart, m)) return false
        lineStart = next
        continue
      }
    }
    let lineEnd = chunk.indexOf('\n', lineStart)
    if (lineEnd < 0) lineEnd = chunk.length
    const line = chunk.slice(lineStart, lineEnd)
    lineStart = lineEnd + 1
    if (!readLine(scan, line)) return false
  }
  return true
}

/** A line `commonLine` matched (`m`) at `lineStart`: its key added to the map it continues, or opens after `- `. */
function readCommonLine(scan: Scan, chunk: string, lineStart: number, m: RegExpExecArray): boolean {
  let indent = 0
  while (chunk.charCodeAt(lineStart + indent) === 32) indent++
  let map: Level | undefined
  if (m[1] === undefined) map = enterMap(scan, indent)
  else if (enterSeq(scan, indent)) {
    let col = lineStart + indent + 1
    while (chunk.charCodeAt(col) === 32) col++
    map = { indent: col - lineStart, kind: 'map' }
    scan.stack.push(map)
  }
  if (!map || !addKey(map, m[2]!) || scan.stack.length > maxBlockDepth) return false
  scan.open = m[3] === undefined ? map.indent : undefined
  return true
}

/** Any other line (sliced, without its newline): blank, block scalar content, a comment, a `- ` entry or `key: value`. */
function readLine(scan: Scan, line: string): boolean {
  if (line === '') return true
  let indent = 0
  while (line.charCodeAt(indent) === 32) indent++
  if (indent === line.length) return false // whitespace-only lines: the parser knows their rules
  if (scan.blockScalar) {
    if (continuesBlockScalar(scan.blockScalar, indent)) return true
    scan.blockScalar = undefined
  }
  const first = line.charCodeAt(indent)
  if (first === 35 /* # */) return true
  if (isEntryDash(line, indent)) return readSeqEntry(scan, line, indent)
  const map = enterMap(scan, indent)
  if (!map) return false
  const keyEnd = keyEndAt(line, indent)
  return keyEnd !== undefined && readEntry(scan, map, line, indent, keyEnd) && scan.stack.length <= maxBlockDepth
}

/** Whether a line indented by `indent` is still block scalar content; the first deeper line sets the content's column. */
function continuesBlockScalar(blockScalar: BlockScalar, indent: number): boolean {
  const { parentIndent, contentIndent } = blockScalar
  if (contentIndent === undefined && indent > parentIndent) {
    blockScalar.contentIndent = indent
    return true
  }
  return contentIndent !== undefined && indent >= contentIndent
}

/** A `-` at `at` that starts a sequence entry: followed by a space or the line's end. */
function isEntryDash(line: string, at: number): boolean {
  return line.charCodeAt(at) === 45 /* - */ && (at + 1 === line.length || line.charCodeAt(at + 1) === 32)
}

/** A `- ` entry at `indent`: empty (its block to come), a one-line value, a block scalar, or a map's first entry. */
function readSeqEntry(scan: Scan, line: string, indent: number): boolean {
  if (!enterSeq(scan, indent)) return false
  let col = indent + 1
  while (line.charCodeAt(col) === 32) col++
  if (col === line.length || line.charCodeAt(col) === 35) {
    scan.open = indent
    return true
  }
  scan.open = undefined
  if (isEntryDash(line, col)) return false // `- - x`: the parser's
  const keyEnd = keyEndAt(line, col)
  if (keyEnd === undefined) {
    const value = line.slice(col)
    if (blockScalarHeader.test(value)) scan.blockScalar = { parentIndent: indent }
    else if (!isValue(value)) return false
    return true
  }
  const map: Level = { indent: col, kind: 'map' }
  scan.stack.push(map)
  return readEntry(scan, map, line, col, keyEnd) && scan.stack.length <= maxBlockDepth
}

/** Closes the blocks deeper than `col`; true when a sequence at `col` is then open (continued, or new). */
function enterSeq(scan: Scan, col: number): boolean {
  const { stack, open } = scan
  while (stack.length > 0 && stack[stack.length - 1]!.indent > col) stack.pop()
  const top = stack[stack.length - 1]
  if (!top) return false
  if (top.kind === 'seq' && top.indent === col) return true
  // A new sequence is the value of the key (or dash) just above: deeper, or at the key's own column.
  if (open !== undefined && (open < col || (open === col && top.kind === 'map' && top.indent === col))) {
    stack.push({ indent: col, kind: 'seq' })
    return true
  }
  return false
}

/** Closes the blocks deeper than `col` (and a sequence at it); the map at `col` (continued, or new), else undefined. */
function enterMap(scan: Scan, col: number): Level | undefined {
  const { stack } = scan
  const wasOpen = scan.open
  scan.open = undefined
  for (
    let top = stack[stack.length - 1];
    top && (top.indent > col || (top.indent === col && top.kind === 'seq'));
    top = stack[stack.length - 1]
  )
    stack.pop()
  const top = stack[stack.length - 1]
  if (top?.kind === 'map' && top.indent === col) return top
  if (wasOpen === undefined || wasOpen >= col) return undefined
  const map: Level = { indent: col, kind: 'map' }
  stack.push(map)
  return map
}

/** Reads `key: value` (the key from `start` to the colon at `keyEnd`); sets `open` or `blockScalar` for what follows. */
function readEntry(scan: Scan, map: Level, line: string, start: number, keyEnd: number): boolean {
  if (!addKey(map, line.slice(start, keyEnd))) return false
  let at = keyEnd + 1
  while (line.charCodeAt(at) === 32) at++
  if (at === line.length || line.charCodeAt(at) === 35) {
    scan.open = map.indent
    return true
  }
  scan.open = undefined
  const value = line.slice(at)
  if (blockScalarHeader.test(value)) {
    scan.blockScalar = { parentIndent: map.indent }
    return true
  }
  return isValue(value)
}

/** Records a key of a map; false for a duplicate, which goes to the parser (its check names it). */
function addKey(map: Level, key: string): boolean {
  // Small maps (nearly all) search an array.
  const keys = (map.keys ??= [])
  if (Array.isArray(keys)) {
    if (keys.includes(key)) return false
    keys.push(key)
    if (keys.length > 16) map.keys = new Set(keys)
  } else {
    if (keys.has(key)) return false
    keys.add(key)
  }
  return true
}

/** The position of the colon ending a plain key that starts at `start`, else undefined. */
function keyEndAt(line: string, start: number): number | undefined {
  plainKeyAt.lastIndex = start
  if (!plainKeyAt.test(line)) return undefined
  const colon = plainKeyAt.lastIndex - 1
  return colon - start > maxKeyLength ? undefined : colon
}

/** A one-line value: `{}`, `[]`, a plain scalar or a closed quoted scalar, then at most a comment. */
function isValue(text: string): boolean {
  if (text[0] === "'" || text[0] === '"') {
    const end = text[0] === "'" ? singleQuotedEnd(text) : doubleQuotedEnd(text)
    return end !== undefined && isCommentOrNothing(text.slice(end))
  }
  // YAML's white space is only space and tab: \s would also take U+2028 or U+00A0 before `#` for the start of a comment.
  const comment = text.indexOf('#') < 0 ? -1 : text.search(/[ \t]#/)
  const value = (comment >= 0 ? text.slice(0, comment) : text).replace(/[ \t]+$/, '')
  if (value === '{}' || value === '[]') return true
  return plainStart.test(value) && !value.includes(': ') && !value.endsWith(':') && !controlCharacter.test(value)
}

function isCommentOrNothing(text: string): boolean {
  return text === '' || /^ +(#.*)?$/.test(text)
}

function singleQuotedEnd(text: string): number | undefined {
  for (let i = 1; i < text.length; i++) {
    if (text[i] !== "'") continue
    if (text[i + 1] === "'") i++
    else return controlCharacter.test(text.slice(0, i)) ? undefined : i + 1
  }
  return undefined
}

function doubleQuotedEnd(text: string): number | undefined {
  for (let i = 1; i < text.length; i++) {
    const c = text[i]
    if (c === '"') return controlCharacter.test(text.slice(0, i)) ? undefined : i + 1
    if (c === '\\') {
      doubleQuoteEscape.lastIndex = i
      const escape = doubleQuoteEscape.exec(text)
      if (!escape) return undefined
      i += escape[0].length - 1
    }
  }
  return undefined
}
