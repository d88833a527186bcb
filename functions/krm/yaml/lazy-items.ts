/**
 * Lazy items: most functions read a few objects of a ResourceList and leave
 * the rest alone, and the `yaml` library's cold parse and print of a large
 * list cost more than the function itself. So when the list has the layout kpt
 * writes (`items:` at column 0, compact `- ` entries), each item is kept as its
 * source text, its identity (apiVersion, kind, metadata name, namespace,
 * labels, annotations) is read with a line scanner, and the item is parsed only
 * when a function reads anything else. Untouched items are printed back from
 * their source text, byte for byte.
 *
 * Anything the scanner does not fully understand makes it give up: the whole
 * list, or the one item, then goes through the full parser.
 */
import { fastPath } from '../fast-paths.js'

/** A ResourceList split into its shell (with `items: []`) and one source text per item. */
export interface SplitList {
  /** The list without its items: the `items:` block replaced by `items: []`. */
  shell: string
  /** Each item's exact source text, from its `- ` line to the line before the next item. */
  chunks: string[]
}

/** The shell's placeholder line, replaced by the items when printing. */
export const itemsPlaceholder = 'items: []'

/**
 * Splits a ResourceList whose `items:` is a block sequence at column 0 with
 * compact entries (`- ` at column 0), as kpt and kyaml write it. Returns
 * undefined for any other layout; the caller then parses the whole text.
 */
export function splitItems(text: string): SplitList | undefined {
  if (!fastPath('yaml')) return undefined
  const lines = text.split('\n')
  const start = lines.findIndex((line) => line === 'items:' || line === 'items: ')
  if (start < 0 || lines.findIndex((line, i) => i > start && /^items\s*:/.test(line)) >= 0) return undefined
  if (lines.some((line) => line.startsWith('---') || line.startsWith('...') || line.includes('\t'))) return undefined
  const chunks: string[] = []
  let current: string[] | undefined
  let end = start + 1
  for (; end < lines.length; end++) {
    const line = lines[end]!
    if (line.startsWith('- ') || line === '-') {
      // Only map entries (`- key: ...` or `- # comment`) are kept lazily; the parser reports anything else.
      if (!/^- (#|[A-Za-z0-9_"'][^:]*:( |$))/.test(line)) return undefined
      if (current) chunks.push(`${current.join('\n')}\n`)
      current = [line]
    } else if (line === '' || line.startsWith(' ') || line.startsWith('#')) {
      if (!current) return undefined // comments or blank lines before the first item: leave it to the parser
      current.push(line)
    } else {
      break // the next top-level key
    }
  }
  if (!current) return undefined
  // Trailing blank lines belong after the block (the text's final newline).
  let trailing = 0
  while (current.length > 1 && current[current.length - 1] === '') {
    current.pop()
    trailing++
  }
  if (current[current.length - 1]!.trim() === '') return undefined // whitespace-only lines: let the parser normalise
  chunks.push(`${current.join('\n')}\n`)
  if (end < lines.length && !/^[A-Za-z_][A-Za-z0-9_]*\s*:/.test(lines[end]!)) return undefined
  const rest = lines.slice(end)
  const shellLines = [...lines.slice(0, start), itemsPlaceholder, ...rest]
  // `split` leaves one '' after the final newline; keep blank lines beyond it in the shell.
  if (end === lines.length && trailing > 1) shellLines.push(...Array<string>(trailing - 1).fill(''))
  if (end === lines.length) shellLines.push('')
  return { shell: shellLines.join('\n'), chunks }
}

/** What the line scanner read of an item: enough to select it without parsing. */
export interface ItemHeader {
  apiVersion?: string
  kind?: string
  name?: string
  namespace?: string
  labels?: Record<string, string>
  annotations?: Record<string, string>
}

const plainKey = /^[A-Za-z0-9_][A-Za-z0-9_./-]*$/
/** A plain scalar whose YAML 1.2 reading is certainly this very string. */
const safePlain = /^[A-Za-z_/][A-Za-z0-9_./:@+-]*$/
const plainKeywords = new Set(['true', 'True', 'TRUE', 'false', 'False', 'FALSE', 'null', 'Null', 'NULL'])

/**
 * Reads an item's identity fields from its source text, or returns undefined
 * when the text holds anything the scanner does not fully understand (flow
 * collections, block scalars in metadata, anchors, tags, odd indentation,
 * duplicate keys, escapes): the item is then parsed.
 */
export function scanHeader(chunk: string): ItemHeader | undefined {
  const header: ItemHeader = {}
  const lines = chunk.split('\n')
  const seenTop = new Set<string>()
  const seenMeta = new Set<string>()
  let topKey: string | undefined
  let metaKey: string | undefined
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!
    if (i === 0) {
      if (!line.startsWith('- ')) return undefined
      line = `  ${line.slice(2)}` // the first key sits right after the dash
    }
    const trimmed = line.trimStart()
    if (trimmed === '' || trimmed.startsWith('#')) continue
    const indent = line.length - trimmed.length
    if (indent < 2) return undefined
    const isSeqEntry = trimmed === '-' || trimmed.startsWith('- ')
    if (indent === 2 && !isSeqEntry) {
      const entry = parseEntry(trimmed)
      if (!entry || seenTop.has(entry.key)) return undefined
      seenTop.add(entry.key)
      topKey = entry.key
      metaKey = undefined
      if (entry.key === 'metadata' && entry.raw !== '') return undefined
      if (entry.key === 'apiVersion' || entry.key === 'kind') {
        if (entry.value === undefined) return undefined
        header[entry.key] = entry.value
      }
      continue
    }
    if (topKey !== 'metadata') {
      if (topKey === undefined) return undefined
      continue // content of spec, data...: not read here
    }
    // Inside metadata.
    if (indent === 4 && !isSeqEntry) {
      const entry = parseEntry(trimmed)
      if (!entry || seenMeta.has(entry.key)) return undefined
      seenMeta.add(entry.key)
      metaKey = entry.key
      if (entry.key === 'labels' || entry.key === 'annotations') {
        if (entry.raw !== '' && entry.raw !== '{}') return undefined
        header[entry.key] = {}
      } else if (entry.key === 'name' || entry.key === 'namespace') {
        if (entry.value === undefined) return undefined
        header[entry.key] = entry.value
      }
      continue
    }
    if (metaKey === 'labels' || metaKey === 'annotations') {
      const entry = indent === 6 && !isSeqEntry ? parseEntry(trimmed) : undefined
      const map = header[metaKey]!
      if (!entry || entry.value === undefined || Object.prototype.hasOwnProperty.call(map, entry.key)) return undefined
      map[entry.key] = entry.value
      continue
    }
    if (metaKey === undefined || metaKey === 'name' || metaKey === 'namespace' || indent < 4) return undefined
    // Content of other metadata keys (finalizers, ownerReferences...): not read here.
  }
  return header
}

/**
 * Parses `key: value # comment` where key and value are simple scalars.
 * `value` is undefined for `key:` (a nested block follows) and for values the
 * scanner cannot read; `raw` is the value text without its comment.
 */
function parseEntry(text: string): { key: string; value: string | undefined; raw: string } | undefined {
  let key: string
  let rest: string
  const quoted = readQuoted(text)
  if (quoted) {
    if (!text.slice(quoted.length).startsWith(':')) return undefined
    key = quoted.value
    rest = text.slice(quoted.length + 1)
  } else {
    const colon = text.indexOf(':')
    if (colon <= 0) return undefined
    key = text.slice(0, colon)
    if (!plainKey.test(key)) return undefined
    rest = text.slice(colon + 1)
  }
  if (rest !== '' && !rest.startsWith(' ')) return undefined
  rest = rest.trimStart()
  if (rest === '' || rest.startsWith('#')) return { key, value: undefined, raw: '' }
  const value = readQuoted(rest)
  if (value) {
    const after = rest.slice(value.length)
    if (after !== '' && !/^ +#/.test(after)) return undefined
    return { key, value: value.value, raw: rest.slice(0, value.length) }
  }
  const comment = rest.search(/ #/)
  const raw = (comment >= 0 ? rest.slice(0, comment) : rest).trimEnd()
  if (raw === '{}') return { key, value: undefined, raw }
  if (!safePlain.test(raw) || plainKeywords.has(raw)) return { key, value: undefined, raw }
  return { key, value: raw, raw }
}

/** Reads a single-quoted or escape-free double-quoted scalar at the start of `text`. */
function readQuoted(text: string): { value: string; length: number } | undefined {
  if (text.startsWith("'")) {
    let i = 1
    let value = ''
    while (i < text.length) {
      const c = text[i]!
      if (c === "'") {
        if (text[i + 1] === "'") {
          value += "'"
          i += 2
          continue
        }
        return { value, length: i + 1 }
      }
      value += c
      i++
    }
    return undefined
  }
  if (text.startsWith('"')) {
    const close = text.indexOf('"', 1)
    if (close < 0) return undefined
    const value = text.slice(1, close)
    if (value.includes('\\')) return undefined
    return { value, length: close + 1 }
  }
  return undefined
}

/**
 * The source lines of a top-level field of an item (`  key: ...` and the lines
 * under it, trailing blank lines excluded), or undefined when the item has no
 * such line. The first line of an item (`- key: ...`) is read as `  key: ...`.
 */
export function topLevelFieldText(chunk: string, key: string): string | undefined {
  const lines = chunk.split('\n')
  if (lines[0]?.startsWith('- ')) lines[0] = `  ${lines[0].slice(2)}`
  const start = lines.findIndex((line) => line === `  ${key}:` || line.startsWith(`  ${key}: `))
  if (start < 0) return undefined
  let end = start + 1
  while (end < lines.length) {
    const line = lines[end]!
    const atTop = line.startsWith('  ') && line[2] !== ' ' && line[2] !== '-' && line.trim() !== ''
    if (atTop || (line !== '' && !line.startsWith('  '))) break
    end++
  }
  while (end > start + 1 && lines[end - 1]!.trim() === '') end--
  return `${lines.slice(start, end).join('\n')}\n`
}
