/**
 * The SDK's YAML engine: text to `yaml` Documents and back, byte for byte as
 * kpt (kyaml / go-yaml) writes it, with fast paths for the plain block YAML
 * most Kubernetes objects are (read by plain-block.ts, printed by
 * emit-node.ts and emit.ts, each property-tested against the library).
 * Everything outside this folder imports the engine from here.
 *
 * Two verbs: `parse` (text to documents) and `print` (documents to text).
 * Below them, the parts the SDK's objects and lists are built on: lazily kept
 * items, object backings, printing plain values, nodes.
 */
import type { Document } from 'yaml'
import { parseYamlDocument, parseYamlDocuments, stringifyYamlDocument, stringifyYamlDocuments } from './documents.js'

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

// The parts the SDK's API builds on, and the older names of the verbs (parseYamlDocument(s), stringifyYamlDocument(s)).
export { isAmbiguousString } from './ambiguous-string.js'
export { fixCommentPlacement } from './comment-placement.js'
export {
  checkNode,
  maxAliasCount,
  parseYamlDocument,
  parseYamlDocuments,
  readPlainDocumentValue,
  stringifyYamlDocument,
  stringifyYamlDocuments,
  YamlSyntaxError,
} from './documents.js'
export { newScalar, reconcileNode, scalarKey, toNode } from './nodes.js'
export type { Node, ParsedNode } from './documents.js'
export { renderedHeader, renderFieldText, renderItemText } from './emit.js'
export type { SharedTexts } from './emit.js'
export { isPlainBlockItem } from './item-syntax.js'
export { itemsPlaceholder, scanHeader, splitItems, topLevelFieldText } from './lazy-items.js'
export type { ItemHeader } from './lazy-items.js'
export { NodeBacking, SourceBacking } from './object-backing.js'
export { dropComments, printReadable, readsBack } from './read-back.js'
export type { ObjectBacking } from './object-backing.js'
