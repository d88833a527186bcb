/**
 * YAML plumbing on the `yaml` package's Document API, tuned so that a document
 * that is read and written without changes comes back byte for byte as kpt
 * (kyaml / go-yaml) wrote it. See docs/upstream-behaviour.md, "Comments and field order".
 */
import {
  CST,
  Document,
  isAlias,
  isCollection,
  isMap,
  isPair,
  isScalar,
  isSeq,
  Lexer,
  Pair,
  parseAllDocuments,
  parseDocument,
  parse as parseValue,
  Scalar,
  visit,
  YAMLMap,
  YAMLSeq,
} from 'yaml'
import type { Node, ParsedNode, Tags } from 'yaml'
import { printSimpleWholeDocument } from './emit-node.js'
import { readPlainBlock } from './plain-block.js'
import { readPlainValue } from './plain-values.js'
import { printOptions } from './print-options.js'

/** Alias expansions allowed when converting to JS: stops "billion laughs" documents. */
export const maxAliasCount = 100

/**
 * Wraps the schema's tags so an unchanged number prints as its original text
 * (`0755`, `1e3`, `0xFF`, `.5`) instead of the library's canonical form.
 */
function keepNumberSource(tags: Tags): Tags {
  return tags.map((tag) => {
    if (typeof tag === 'string' || tag.tag === 'tag:yaml.org,2002:str' || !('stringify' in tag) || !tag.stringify)
      return tag
    const stringify = tag.stringify
    return {
      ...tag,
      stringify(item, ctx, onComment, onChompKeep) {
        const source = item.source
        if (typeof source === 'string' && typeof item.value === 'number' && sameNumber(source, item.value)) {
          return source
        }
        return stringify.call(this, item, ctx, onComment, onChompKeep)
      },
    }
  })
}

const numberSources = new Map<string, unknown>()

function sameNumber(source: string, value: number): boolean {
  let parsed = numberSources.get(source)
  if (parsed === undefined && !numberSources.has(source)) {
    try {
      parsed = parseValue(source)
    } catch {
      parsed = null
    }
    if (numberSources.size < 10_000) numberSources.set(source, parsed)
  }
  return parsed === value || (Number.isNaN(parsed) && Number.isNaN(value))
}

const plainParseOptions = {
  uniqueKeys: false,
  strict: true,
  customTags: keepNumberSource,
} as const

/**
 * With comments, the parser keeps each node's source tokens, which the
 * comment fix-ups read. Without a `#` there is no comment to fix, and the
 * tokens would only more than double what every parsed document keeps.
 */
const commentedParseOptions = { ...plainParseOptions, keepSourceTokens: true } as const

function parseOptionsFor(text: string): typeof plainParseOptions | typeof commentedParseOptions {
  return text.includes('#') ? commentedParseOptions : plainParseOptions
}

/** A YAML syntax problem, with a 1-based line and column when known. */
export class YamlSyntaxError extends Error {
  constructor(
    message: string,
    readonly line?: number,
    readonly column?: number,
  ) {
    super(message)
    this.name = 'YamlSyntaxError'
  }
}

/**
 * Nesting allowed before parsing: far beyond any real manifest, and well below
 * where the parser slows down or exhausts memory (a flow collection 10,000
 * deep kills the process outright, so this check runs before the parser).
 */
export const maxNestingDepth = 500

/**
 * Rejects text nested deeper than `maxNestingDepth`, counted without building
 * nodes: the flow brackets open at once (read by the library's own lexer, so
 * quotes and comments count right) plus half the widest run of indentation and
 * `- ` indicators that starts a line. An upper bound of the real depth.
 */
export function checkNestingDepth(text: string, source = 'input'): void {
  let lead = 0
  for (const match of text.matchAll(/^(?: |- |-$|\? |: )+/gm)) lead = Math.max(lead, match[0].length)
  const blockDepth = Math.ceil(lead / 2)
  let depth = blockDepth
  const tooDeep = () => new YamlSyntaxError(`${source}: nested deeper than ${maxNestingDepth} levels`)
  if (depth > maxNestingDepth) throw tooDeep()
  // Flow depth is at most the number of open brackets: only text with many runs the lexer.
  let brackets = 0
  for (let i = text.indexOf('[') < 0 && text.indexOf('{') < 0 ? text.length : 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if ((c === 91 || c === 123) && ++brackets + blockDepth > maxNestingDepth) break
  }
  if (brackets + blockDepth <= maxNestingDepth) return
  for (const token of new Lexer().lex(text)) {
    const type = CST.tokenType(token)
    if (type === 'flow-seq-start' || type === 'flow-map-start') {
      if (++depth > maxNestingDepth) throw tooDeep()
    } else if (type === 'flow-seq-end' || type === 'flow-map-end') {
      depth = Math.max(blockDepth, depth - 1)
    }
  }
}

/** Parses one YAML document for round-tripping; throws YamlSyntaxError on bad input. */
export function parseYamlDocument(text: string, source = 'input'): Document.Parsed {
  return readPlainDocument(text) ?? parseYamlDocumentWithLibrary(text, source)
}

/** Empty documents parsed with the options of a text without comments and of one with: each plain reading is a copy of one. */
let plainTemplate: Document.Parsed | undefined
let commentedTemplate: Document.Parsed | undefined

/**
 * The document the library would parse from `text`, read by plain-block.ts,
 * or undefined when the text is not plain block YAML (the library parses it).
 */
export function readPlainDocument(text: string): Document.Parsed | undefined {
  // The only comment the reader takes follows `key: ` (kpt's `metadata: # kpt-merge: ...`); a text with another
  // is declined here, before the copy below is made for nothing. One with it gets the options the library would.
  const commented = text.includes('#')
  if (commented && !text.includes(': #')) return undefined
  const template = commented
    ? (commentedTemplate ??= parseDocument('', commentedParseOptions))
    : (plainTemplate ??= parseDocument('', plainParseOptions))
  // A copy with a schema of its own, as the library gives each parse one (a declined text wastes only this).
  const doc = template.clone() as Document.Parsed
  const read = readPlainBlock(text, doc.schema)
  if (!read) return undefined
  doc.contents = read.contents as Document.Parsed['contents']
  doc.range = [0, read.end, read.end]
  return doc
}

/**
 * The value of a ResourceList item's text (one `- ` entry of a block sequence) read straight to plain
 * JavaScript, or undefined when the text is not plain block YAML (see plain-values.ts).
 */
export function readPlainItemValue(text: string): Record<string, unknown> | undefined {
  if (text.includes('#') && !text.includes(': #')) return undefined
  const schema = (plainTemplate ??= parseDocument('', plainParseOptions)).schema
  const value = readPlainValue(text, schema)
  return Array.isArray(value) &&
    value.length === 1 &&
    typeof value[0] === 'object' &&
    value[0] !== null &&
    !Array.isArray(value[0])
    ? value[0]
    : undefined
}

/** parseYamlDocument with the library alone (the plain reader is checked against it). */
export function parseYamlDocumentWithLibrary(text: string, source = 'input'): Document.Parsed {
  checkNestingDepth(text, source)
  let doc: Document.Parsed
  try {
    doc = parseDocument(text, parseOptionsFor(text))
  } catch (err) {
    // The parser throws (instead of reporting) on pathological input such as very deep nesting.
    throw new YamlSyntaxError(`${source}: cannot parse YAML: ${(err as Error).message}`)
  }
  throwFirstError(doc, source)
  fixCommentPlacement(doc)
  return doc
}

/** Parses a multi-document YAML stream; throws YamlSyntaxError on the first bad document. */
export function parseYamlDocuments(text: string, source = 'input'): Document.Parsed[] {
  checkNestingDepth(text, source)
  let docs: Document.Parsed[]
  try {
    const parsed = parseAllDocuments(text, parseOptionsFor(text))
    docs = Array.isArray(parsed) ? parsed : []
    if (!Array.isArray(parsed)) throwFirstError(parsed, source)
  } catch (err) {
    if (err instanceof YamlSyntaxError) throw err
    throw new YamlSyntaxError(`${source}: cannot parse YAML: ${(err as Error).message}`)
  }
  for (const doc of docs) {
    throwFirstError(doc, source)
    fixCommentPlacement(doc)
  }
  return docs
}

function throwFirstError(doc: Document.Parsed, source: string): void {
  const err = doc.errors[0]
  if (!err) return
  const pos = err.linePos?.[0]
  const where = pos ? `:${pos.line}:${pos.col}` : ''
  const firstLine = err.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')
  throw new YamlSyntaxError(`${source}${where}: ${firstLine}`, pos?.line, pos?.col)
}

/**
 * Checks what the parser accepts but kpt (go-yaml) does not, in an object a
 * function reads: a duplicate key (named by its field path), an alias to an
 * anchor not defined before it, and aliases expanding beyond `maxAliasCount`
 * (an alias bomb). Throws YamlSyntaxError.
 */
export function checkNode(node: Node, doc: Document, source: string): void {
  if (!checkKeys(node, [], source)) return
  try {
    node.toJS(doc, { maxAliasCount })
  } catch (err) {
    throw new YamlSyntaxError(`${source}: ${(err as Error).message}`)
  }
}

/**
 * Throws on the first duplicate key, in the order the library's `visit` meets
 * them (a map's own keys before its children's); returns whether there is an
 * alias. A plain recursion: `visit` copies the ancestor path at every node,
 * which cost more than the check on every document a render reads.
 */
function checkKeys(node: unknown, ancestors: unknown[], source: string): boolean {
  if (isAlias(node)) return true
  let hasAlias = false
  if (isMap(node)) {
    const seen = new Set<string>()
    for (const pair of node.items) {
      const key = scalarKey(pair.key)
      if (key === undefined) continue
      if (seen.has(key))
        throw new YamlSyntaxError(`${source}: duplicate key \`${fieldPathOf([...ancestors, node], key)}\``)
      seen.add(key)
    }
    ancestors.push(node, undefined)
    for (const pair of node.items) {
      ancestors[ancestors.length - 1] = pair
      if (checkKeys(pair.key, ancestors, source)) hasAlias = true
      if (checkKeys(pair.value, ancestors, source)) hasAlias = true
    }
    ancestors.length -= 2
  } else if (isSeq(node)) {
    ancestors.push(node)
    for (const item of node.items) if (checkKeys(item, ancestors, source)) hasAlias = true
    ancestors.length -= 1
  } else if (isPair(node)) {
    // A pair as a flow sequence's item (`[a: b]`).
    ancestors.push(node)
    if (checkKeys(node.key, ancestors, source)) hasAlias = true
    if (checkKeys(node.value, ancestors, source)) hasAlias = true
    ancestors.length -= 1
  }
  return hasAlias
}

/** The dotted path of `key` in the innermost map of `ancestors` (as visit passes them). */
function fieldPathOf(ancestors: readonly unknown[], key: string): string {
  let out = ''
  ancestors.forEach((node, i) => {
    const child = ancestors[i + 1]
    if (isPair(node)) {
      const k = scalarKey(node.key)
      if (k !== undefined) out += out === '' ? k : `.${k}`
    } else if (isSeq(node) && child !== undefined) {
      out += `[${node.items.indexOf(child)}]`
    }
  })
  return out === '' ? key : `${out}.${key}`
}

/**
 * Prints a document in kpt's style. `wide` indents sequences under their key
 * (kpt's `seqindent: wide`); the default is kpt's compact style.
 */
export function stringifyYamlDocument(doc: Document, options: { wide?: boolean } = {}): string {
  // Most documents are in the simple form, which prints without the library's printer at a fraction of its cost.
  return printSimpleWholeDocument(doc, options.wide ?? false) ?? stringifyWithLibrary(doc, options)
}

/** The library's print in kpt's style: what stringifyYamlDocument falls back to, and the fast printers are held to. */
export function stringifyWithLibrary(doc: Document, options: { wide?: boolean } = {}): string {
  return doc.toString(options.wide ? { ...printOptions, indentSeq: true } : printOptions)
}

/**
 * Moves two comment placements back to where go-yaml keeps them, so that kpt's
 * comment copy-back does not duplicate them (docs/upstream-behaviour.md, "Comments and field order"):
 * 1. `- # comment` before a map item: the comment belongs to the first key;
 * 2. `key: # comment` before a block collection: the comment belongs to the key.
 * The source tokens it reads are released afterwards: nothing else reads them,
 * and they are more than half of what a parsed document holds. A document
 * parsed without them (its text had no `#`) has no comment to move.
 */
export function fixCommentPlacement(doc: Document): void {
  if (!doc.contents?.srcToken) return
  const release = (node: { srcToken?: unknown }) => void (node.srcToken = undefined)
  visit(doc, {
    Scalar: (_, scalar) => release(scalar),
    Alias: (_, alias) => release(alias),
    Pair: (_, pair) => release(pair),
    Seq(_, seq) {
      const token = seq.srcToken
      release(seq)
      if (token?.type !== 'block-seq') return
      seq.items.forEach((item, i) => {
        const itemToken = token.items[i]
        if (!itemToken || !isMap(item) || item.commentBefore == null || item.items.length === 0) return
        if (!hasCommentAfterDash(itemToken.start)) return
        const firstKey = item.items[0]!.key as Node
        firstKey.commentBefore = firstKey.commentBefore
          ? `${item.commentBefore}\n${firstKey.commentBefore}`
          : item.commentBefore
        item.commentBefore = undefined
      })
    },
    Map(_, map) {
      const token = map.srcToken
      release(map)
      if (token?.type !== 'block-map') return
      map.items.forEach((pair, i) => {
        const value = pair.value
        const itemToken = token.items[i]
        if (!itemToken || !isCollection(value) || value.commentBefore == null || !isScalar(pair.key)) return
        const inline = inlineComment(itemToken.sep)
        if (inline === undefined) return
        const [first, ...rest] = value.commentBefore.split('\n')
        if (first !== inline) return
        pair.key.comment = inline
        value.commentBefore = rest.length > 0 ? rest.join('\n') : undefined
      })
    },
  })
}

type SourceToken = { type: string; source?: string }

function hasCommentAfterDash(start: readonly SourceToken[]): boolean {
  let afterDash = false
  for (const t of start) {
    if (t.type === 'seq-item-ind') afterDash = true
    else if (t.type === 'newline') afterDash = false
    else if (afterDash && t.type === 'comment') return true
  }
  return false
}

function inlineComment(sep: readonly SourceToken[] | undefined): string | undefined {
  for (const t of sep ?? []) {
    if (t.type === 'newline') return undefined
    // The library stores an empty `#` comment as ' '.
    if (t.type === 'comment') return t.source!.slice(1) || ' '
  }
  return undefined
}

/**
 * True when YAML 1.1 (go-yaml v2, kubectl) would read this plain string as
 * something else: `yes`, `on`, `0755`, `2001-12-14`, `1e3`, `~`...
 */
export function isAmbiguousString(value: string): boolean {
  if (value === '' || /^\s|\s$/.test(value)) return true
  // Fast path: a word starting with a letter is a string unless it is a YAML 1.1 bool/null.
  if (/^[A-Za-z][A-Za-z0-9_/.-]*$/.test(value)) return yaml11Words.has(value)
  // Fast paths for sentences (result messages), which would otherwise each cost a parse:
  // words and spaces are a string; `: ` after a letter makes a map or an error.
  if (/^[A-Za-z][A-Za-z0-9 _/.@+=()-]*[A-Za-z0-9_/.)-]$/.test(value)) return false
  if (/^[A-Za-z][^\n"'\\]*: /.test(value)) return true
  // A line starting with a letter reads as a string (no YAML 1.1 number, date or null starts with one) unless it is a
  // keyword, or holds what makes it a map or a comment: field paths (`spec.x[0]`) and messages, without a parse each.
  if (/^[A-Za-z][\x20-\x7e]*$/.test(value) && !value.includes(': ') && !value.includes(' #') && !/[: ]$/.test(value))
    return yaml11Words.has(value)
  let ambiguous = ambiguousStrings.get(value)
  if (ambiguous !== undefined) return ambiguous
  try {
    ambiguous = typeof parseValue(value, { version: '1.1', uniqueKeys: false, logLevel: 'error' }) !== 'string'
  } catch {
    ambiguous = true
  }
  // Versions and other repeated values are parsed once.
  if (ambiguousStrings.size < 10_000 && value.length < 100) ambiguousStrings.set(value, ambiguous)
  return ambiguous
}

const ambiguousStrings = new Map<string, boolean>()

/** The words YAML 1.1 reads as booleans or null (`yes`, `on`, `Null`...): the only ambiguous plain words starting with a letter. */
export const yaml11Words: ReadonlySet<string> = new Set(
  'y Y yes Yes YES n N no No NO true True TRUE false False FALSE on On ON off Off OFF null Null NULL'.split(' '),
)

/** Sets a scalar's value in place, keeping its style where the style can still hold the value. */
function setScalarValue(node: Scalar, value: string | number | boolean | null): void {
  const wasBlock = node.type === Scalar.BLOCK_LITERAL || node.type === Scalar.BLOCK_FOLDED
  const wasPlain = node.type === undefined || node.type === Scalar.PLAIN
  node.value = value
  if (typeof value !== 'string') {
    node.type = undefined
  } else if (wasPlain || (wasBlock && !value.includes('\n'))) {
    node.type = isAmbiguousString(value) ? Scalar.QUOTE_DOUBLE : undefined
  }
}

/** A new scalar for a value, double-quoted when YAML 1.1 would misread it. */
export function newScalar(value: string | number | boolean | null): Scalar {
  const scalar = new Scalar(value)
  if (typeof value === 'string' && isAmbiguousString(value)) scalar.type = Scalar.QUOTE_DOUBLE
  return scalar
}

/** Builds fresh YAML nodes for a plain JS value (block style, safe quoting). */
export function toNode(value: unknown): Node {
  if (value === null || value === undefined) return new Scalar(null)
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    return newScalar(value)
  }
  if (Array.isArray(value)) {
    const seq = new YAMLSeq()
    for (const v of value) seq.items.push(toNode(v))
    return seq
  }
  if (typeof value === 'object') {
    const map = new YAMLMap()
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (v === undefined) continue
      map.items.push(new Pair(newScalar(k), toNode(v)))
    }
    return map
  }
  throw new TypeError(`cannot represent a ${typeof value} in YAML`)
}

/**
 * Makes `node` hold `value`, reusing existing nodes wherever the shape allows,
 * so comments, key order and scalar styles survive:
 * - a scalar keeps its node and style (a plain one is quoted if the new string is ambiguous);
 * - a map keeps its existing keys in place, drops keys not in `value`, appends new ones;
 * - a sequence is updated index by index.
 * Returns the node to store: `node` itself, or a fresh one when the kinds differ.
 */
export function reconcileNode(node: Node | null | undefined, value: unknown): Node {
  if (value === undefined) return toNode(null)
  if (isScalar(node) && (value === null || typeof value !== 'object')) {
    if (node.value !== value) setScalarValue(node, value as string | number | boolean | null)
    return node
  }
  if (isMap(node) && isPlainObject(value)) {
    const wanted = value as Record<string, unknown>
    const kept: Pair[] = []
    const seen = new Set<string>()
    for (const pair of node.items) {
      const key = scalarKey(pair.key)
      if (key === undefined || !(key in wanted) || wanted[key] === undefined || seen.has(key)) continue
      seen.add(key)
      pair.value = reconcileNode(pair.value as Node, wanted[key])
      kept.push(pair)
    }
    for (const [key, v] of Object.entries(wanted)) {
      if (seen.has(key) || v === undefined) continue
      kept.push(new Pair(newScalar(key), toNode(v)))
    }
    node.items = kept
    return node
  }
  if (isSeq(node) && Array.isArray(value)) {
    const items = value.map((v, i) => reconcileNode(node.items[i] as Node, v))
    node.items = items
    return node
  }
  return toNode(value)
}

/** The string form of a map key, or undefined for complex keys. */
export function scalarKey(key: unknown): string | undefined {
  if (isScalar(key)) return key.value === null ? '' : String(key.value)
  if (typeof key === 'string') return key
  return undefined
}

function isPlainObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

export type { Node, ParsedNode }

/** Prints a multi-document stream; documents after the first carry their own `---`. */
export function stringifyYamlDocuments(docs: readonly Document[], options: { wide?: boolean } = {}): string {
  return docs
    .map((doc, i) => {
      const text = stringifyYamlDocument(doc, options)
      return i === 0 || text.startsWith('---') ? text : `---\n${text}`
    })
    .join('')
}
