/**
 * Parsing the same text again, as a fleet does: every variant of an upstream
 * revision carries the same Kptfile, package context and injection points
 * until it edits them. From a text's second parse on, the parsed document is
 * kept pristine and each caller gets a clone of its nodes, made field by
 * field: about a tenth of a parse, where yaml's own `Document.clone()` costs
 * nearly a parse (it copies property descriptors).
 */
import { fastPath } from '../fast-paths.js'
import { Alias, Document, isAlias, isMap, isPair, isScalar, isSeq, Pair, Scalar, YAMLMap, YAMLSeq } from 'yaml'
import type { Schema } from 'yaml'
import { LRUCache } from 'lru-cache'
import { parseYamlDocument } from './documents.js'

/** yaml tells its nodes apart by these registered symbols (isDocument, isMap...). */
const nodeType = Symbol.for('yaml.node.type')
const documentType = Symbol.for('yaml.document')

/** Texts longer than this are parsed each time: the cache is for the many small documents of a fleet. */
const maxCachedLength = 64 * 1024
/**
 * Texts seen once, and documents parsed from texts seen twice; the most recently used kept. Budget: 2,000 of
 * each (a fleet has few distinct texts per revision), texts of at most 64 KB: a few MB for a fleet's small
 * documents. Made on first use, as a function that never parses a text twice pays nothing.
 */
const maxCachedDocuments = 2000

let seen: LRUCache<string, true> | undefined
let pristine: LRUCache<string, Document.Parsed> | undefined

/**
 * parseYamlDocument, with a text seen before answered by a clone of its first
 * parse. `check` (duplicate keys, alias bombs: see checkNode) runs on each
 * parse; a text is kept only once it has passed, so its clones need no check.
 */
export function parseRepeatedYamlDocument(
  text: string,
  source: string,
  check?: (doc: Document.Parsed) => void,
): Document.Parsed {
  // Without the fast path nothing is kept, so every text is parsed anew.
  const cacheable = fastPath('yaml') && text.length <= maxCachedLength
  const cached = pristine?.get(text)
  if (cached) return cloneDocument(cached)
  if (!cacheable || !seen?.has(text)) {
    if (cacheable) rememberSeen(text)
    const doc = parseYamlDocument(text, source)
    check?.(doc)
    return doc
  }
  const doc = parseYamlDocument(text, source)
  check?.(doc)
  ;(pristine ??= new LRUCache({ max: maxCachedDocuments })).set(text, doc)
  return cloneDocument(doc)
}

function rememberSeen(text: string): void {
  ;(seen ??= new LRUCache({ max: maxCachedDocuments })).set(text, true)
}

/** A deep copy of a parsed document: the same nodes, comments, styles, anchors and ranges, none of them shared. */
export function cloneDocument(doc: Document.Parsed): Document.Parsed {
  // The document's own fields as yaml's Document.clone() copies them, but for the schema: clones share it, as
  // documents made with the `schema` option do (nothing here changes a schema), where a copy costs about as
  // much as copying a small document's nodes.
  const copy = Object.create(Document.prototype, { [nodeType]: { value: documentType } }) as Document.Parsed
  copy.commentBefore = doc.commentBefore
  copy.comment = doc.comment
  copy.errors = doc.errors.slice()
  copy.warnings = doc.warnings.slice()
  copy.options = { ...doc.options }
  copy.directives = doc.directives.clone()
  copy.schema = doc.schema
  copy.contents = doc.contents === null ? null : (cloneNode(doc.contents, doc.schema) as typeof doc.contents)
  copy.range = [...doc.range]
  return copy
}

function cloneNode(node: unknown, schema: Schema): unknown {
  if (isScalar(node)) return copyFields(new Scalar(node.value), node)
  if (isMap(node)) {
    const map = copyFields(new YAMLMap(schema), node)
    map.items = node.items.map((pair) =>
      copyFields(new Pair(cloneNode(pair.key, schema), cloneNode(pair.value, schema)), pair),
    )
    return map
  }
  if (isSeq(node)) {
    const seq = copyFields(new YAMLSeq(schema), node)
    seq.items = node.items.map((item) => cloneNode(item, schema))
    return seq
  }
  // An alias names its anchor, which it finds in whichever document it is in.
  if (isAlias(node)) return copyFields(new Alias(node.source), node)
  if (isPair(node)) return copyFields(new Pair(cloneNode(node.key, schema), cloneNode(node.value, schema)), node)
  return node
}

/** The node's own fields (comments, spacing, style, tag, anchor, range) onto its copy; items, keys and values are copied by the caller. */
function copyFields<T extends object>(copy: T, node: object): T {
  const target = copy as Record<string, unknown>
  const source = node as Record<string, unknown>
  // for...in: a node's fields are its own enumerable ones (class methods are not enumerable), without an entries array per node.
  for (const key in source) {
    if (key === 'items' || key === 'key' || key === 'value') continue
    target[key] = key === 'range' ? (source[key] as number[]).slice() : source[key]
  }
  return copy
}
