/**
 * YAML plumbing on the `yaml` package's Document API, tuned so that a document
 * that is read and written without changes comes back byte for byte as kpt
 * (kyaml / go-yaml) wrote it. See docs/upstream-behaviour.md, "Comments and field order".
 */
import {
  CST,
  Document,
  isAlias,
  isMap,
  isPair,
  isSeq,
  Lexer,
  parseAllDocuments,
  parseDocument,
  parse as parseValue,
} from 'yaml'
import type { Node, ParsedNode, Tags } from 'yaml'
import { printSimpleWholeDocument } from './emit-node.js'
import { readPlainBlock, readPlainValue } from './plain-block.js'
import { printOptions } from './print-options.js'
import { fixCommentPlacement } from './comment-placement.js'
import { scalarKey } from './nodes.js'

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
 * JavaScript, or undefined when the text is not plain block YAML (see plain-block.ts).
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

/**
 * The value of a whole document's text (a Kptfile, say) read straight to plain JavaScript, or undefined
 * when it is not plain block YAML without comments (see plain-block.ts): the caller then parses it.
 */
export function readPlainDocumentValue(text: string): Record<string, unknown> | undefined {
  if (text.includes('#')) return undefined
  const schema = (plainTemplate ??= parseDocument('', plainParseOptions)).schema
  const value = readPlainValue(text, schema)
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined
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
