/**
 * The SDK's YAML engine: text to `yaml` Documents and back, byte for byte as
 * kpt (kyaml / go-yaml) writes it, with fast paths for the plain block YAML
 * most Kubernetes objects are (read by plain-block.ts, printed by
 * emit-node.ts and emit.ts, each property-tested against the library).
 * Everything outside this folder imports the engine from here, and nothing
 * outside functions/krm/ imports the `yaml` package itself (a lint rule in
 * eslint.config.js, with its few exceptions).
 *
 * Two verbs, `parse` (text to documents) and `print` (documents to text), and
 * their plain-value forms, `parseValue` (text to the JavaScript value `parse`
 * reads) and `printValue` (a JavaScript value to a new document's text). The
 * rest, each group below, is what the SDK's objects and lists and the
 * orchestrator's clone and merge are built on: errors and limits, the
 * document model, nodes from plain values, items kept as text, read-back.
 */
import { stringify } from 'yaml'
import type { Document } from 'yaml'
import {
  maxAliasCount,
  parseYamlDocument,
  parseYamlDocuments,
  readPlainDocumentValue,
  stringifyYamlDocument,
  stringifyYamlDocuments,
} from './documents.js'

export interface ParseOptions {
  /** Names the text in errors (a file, `input`). */
  source?: string
}

/** Parses one YAML document for round-tripping; throws YamlSyntaxError on bad input. With `stream`, every document of a stream. */
export function parse(text: string, options?: ParseOptions & { stream?: false }): Document.Parsed
export function parse(text: string, options: ParseOptions & { stream: true }): Document.Parsed[]
export function parse(
  text: string,
  options: ParseOptions & { stream?: boolean } = {},
): Document.Parsed | Document.Parsed[] {
  return options.stream ? parseYamlDocuments(text, options.source) : parseYamlDocument(text, options.source)
}

export interface PrintOptions {
  /** Indents sequences under their key (kpt's `seqindent: wide`); the default is kpt's compact style. */
  wide?: boolean
}

/** Prints a document in kpt's style; a list of documents as a stream (those after the first carry their own `---`). */
export function print(doc: Document | readonly Document[], options: PrintOptions = {}): string {
  return Array.isArray(doc) ? stringifyYamlDocuments(doc, options) : stringifyYamlDocument(doc as Document, options)
}

/**
 * The plain JavaScript value of one YAML document (with `stream`, of every document), as `parse` reads it
 * (`toJS()`, aliases expanded up to `maxAliasCount`; a key given twice, the last wins): read straight to values
 * where the text is plain block YAML without comments. For files that are only read; throws YamlSyntaxError.
 */
export function parseValue(text: string, options?: ParseOptions & { stream?: false }): unknown
export function parseValue(text: string, options: ParseOptions & { stream: true }): unknown[]
export function parseValue(text: string, options: ParseOptions & { stream?: boolean } = {}): unknown {
  if (options.stream) return parseYamlDocuments(text, options.source).map((doc): unknown => doc.toJS({ maxAliasCount }))
  return readPlainDocumentValue(text) ?? (parseYamlDocument(text, options.source).toJS({ maxAliasCount }) as unknown)
}

/**
 * A plain JavaScript value printed as a new YAML document, as the `yaml` library prints new values
 * (strings YAML 1.1 would misread are not quoted: `toNode` and `print` quote them), never folding a line:
 * kpt's compact sequences, or `wide`. For files written whole (generated CRDs, snapshots, test input).
 */
export function printValue(value: unknown, options: PrintOptions = {}): string {
  return stringify(value, { indentSeq: options.wide ?? false, lineWidth: 0 })
}

// Errors and limits: the error every parse throws; the checks a function's input gets (duplicate keys,
// aliases, expansions), and the expansions allowed.
export { checkNode, maxAliasCount, YamlSyntaxError } from './documents.js'

// The document model: the `yaml` library's own classes and type guards, which `parse` returns and edits build.
export { Document, isAlias, isMap, isScalar, isSeq, Pair, Scalar, YAMLMap, YAMLSeq } from 'yaml'
export type { Node } from 'yaml'

// Nodes from plain values (new ones, safely quoted, or existing ones updated in place), a map key as a string,
// and the strings that need quoting.
export { newScalar, reconcileNode, scalarKey, toNode } from './nodes.js'
export { isAmbiguousString } from './ambiguous-string.js'

// Items kept as text: a ResourceList split into items, each item's identity scanned, the line check that proves
// one well-formed, new objects printed straight to text, and where a KubeObject's content lives.
export { itemsPlaceholder, scanHeader, splitItems, topLevelFieldText } from './lazy-items.js'
export type { ItemHeader } from './lazy-items.js'
export { isPlainBlockItem } from './item-syntax.js'
export { renderedHeader, renderFieldText, renderItemText } from './emit.js'
export type { SharedTexts } from './emit.js'
export { NodeBacking, SourceBacking } from './object-backing.js'
export type { ObjectBacking } from './object-backing.js'

// Read-back: whether a printed text parses, and printing without comments where it would not.
export { dropComments, printReadable, readsBack } from './read-back.js'
