/**
 * Parsing the same text again, as a fleet does: every variant of an upstream
 * revision carries the same Kptfile, package context and injection points
 * until it edits them. From a text's second parse on, the parsed document is
 * kept pristine and each caller gets a clone of its nodes, made field by
 * field: about a tenth of a parse, where yaml's own `Document.clone()` costs
 * nearly a parse (it copies property descriptors).
 */
import { Alias, isAlias, isMap, isPair, isScalar, isSeq, Pair, Scalar, YAMLMap, YAMLSeq } from 'yaml'
import type { Document, Schema } from 'yaml'
import { parseYamlDocument } from './yaml.js'

/** Texts longer than this are parsed each time: the cache is for the many small documents of a fleet. */
const maxCachedLength = 64 * 1024
/** Documents kept; the cache starts afresh when full (a fleet has few distinct texts per revision). */
const maxCachedDocuments = 2000

const seen = new Set<string>()
const pristine = new Map<string, Document.Parsed>()

/** parseYamlDocument, with a text seen before answered by a clone of its first parse. */
export function parseRepeatedYamlDocument(text: string, source: string): Document.Parsed {
  const cached = pristine.get(text)
  if (cached) return cloneDocument(cached)
  if (text.length > maxCachedLength || !seen.has(text)) {
    if (text.length <= maxCachedLength) rememberSeen(text)
    return parseYamlDocument(text, source)
  }
  const doc = parseYamlDocument(text, source)
  if (pristine.size >= maxCachedDocuments) pristine.clear()
  pristine.set(text, doc)
  return cloneDocument(doc)
}

function rememberSeen(text: string): void {
  if (seen.size >= maxCachedDocuments) seen.clear()
  seen.add(text)
}

/** A deep copy of a parsed document: the same nodes, comments, styles, anchors and ranges, none of them shared. */
export function cloneDocument(doc: Document.Parsed): Document.Parsed {
  // yaml's clone copies the document's own fields (options, directives, schema); its nodes are copied here.
  const contents = doc.contents
  doc.contents = null
  const copy = doc.clone() as Document.Parsed
  doc.contents = contents
  copy.contents = contents === null ? null : (cloneNode(contents, copy.schema) as typeof contents)
  return copy
}

function cloneNode(node: unknown, schema: Schema): unknown {
  if (isScalar(node)) return copyFields(new Scalar(node.value), node)
  if (isMap(node)) {
    const map = copyFields(new YAMLMap(schema), node)
    map.items = node.items.map((pair) => copyFields(new Pair(cloneNode(pair.key, schema), cloneNode(pair.value, schema)), pair))
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
