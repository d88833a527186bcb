/**
 * kpt's merge-comment pass (`addmergecomment`): `kpt pkg get` and `kpt pkg
 * update` mark every resource with its upstream identity, which is what the
 * next update matches resources by:
 *
 * - `metadata: # kpt-merge: <namespace>/<name>` on the metadata key, unless a
 *   `kpt-merge:` comment is already there (it then stays the identity);
 * - the annotation `internal.kpt.dev/upstream-identifier: '<group>|<Kind>|<namespace or default>|<name>'`.
 *
 * Documents are edited in place, so every other byte stays as it was.
 */
import { isMap, isScalar, Pair, Scalar, scalarKey, YAMLMap } from '../../functions/krm/yaml/index.js'
import type { Document } from '../../functions/krm/yaml/index.js'

/** The annotation kpt sets on every fetched resource. */
export const upstreamIdentifierAnnotation = 'internal.kpt.dev/upstream-identifier'

/** The `namespace` and `name` a `kpt-merge:` comment records (split at the first `/`), or undefined. */
export function parseMergeComment(comment: string | null | undefined): { namespace: string; name: string } | undefined {
  if (!comment || !comment.includes('kpt-merge:')) return undefined
  const text = comment
    .replace(/^[\s#]+/, '')
    .replace(/^kpt-merge:/, '')
    .trim()
  const slash = text.indexOf('/')
  if (slash < 0) return undefined
  return { namespace: text.slice(0, slash), name: text.slice(slash + 1) }
}

/** The metadata pair of a document's root map, if the root is a map with a `metadata` key. */
export function metadataPair(doc: Document): Pair<Scalar, unknown> | undefined {
  const root = doc.contents
  if (!isMap(root)) return undefined
  const pair = root.items.find((p) => scalarKey(p.key) === 'metadata')
  return pair && isScalar(pair.key) ? (pair as Pair<Scalar, unknown>) : undefined
}

/**
 * Adds the kpt-merge comment and upstream-identifier annotation to one
 * document; returns false when the document is left alone (no metadata, or
 * metadata without name, namespace and labels).
 */
export function addMergeComment(doc: Document): boolean {
  const root = doc.contents
  const pair = metadataPair(doc)
  if (!isMap(root) || !pair || !isMap(pair.value)) return false
  const metadata = pair.value
  const name = stringField(metadata, 'name')
  const namespace = stringField(metadata, 'namespace')
  const labels = metadata.items.find((p) => scalarKey(p.key) === 'labels')?.value
  if (name === '' && namespace === '' && !(isMap(labels) && labels.items.length > 0)) return false
  if (!pair.key.comment?.includes('kpt-merge:')) pair.key.comment = ` kpt-merge: ${namespace}/${name}`
  // kpt prints a flow `metadata` with the comment inside it (invalid YAML); block style keeps it valid.
  metadata.flow = false
  const identity = parseMergeComment(pair.key.comment) ?? { namespace, name }
  const apiVersion = stringField(root, 'apiVersion')
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : ''
  const value = `${group}|${stringField(root, 'kind')}|${identity.namespace || 'default'}|${identity.name}`
  setIdentifier(metadata, value)
  return true
}

/** kyaml's SetAnnotation: an empty or missing annotations map is recreated at the end of metadata; a new entry is single-quoted. */
function setIdentifier(metadata: YAMLMap, value: string): void {
  let index = metadata.items.findIndex((p) => scalarKey(p.key) === 'annotations')
  let annotations = index >= 0 ? metadata.items[index]!.value : undefined
  if (!isMap(annotations) || annotations.items.length === 0) {
    if (index >= 0) metadata.items.splice(index, 1)
    annotations = new YAMLMap()
    metadata.items.push(new Pair(new Scalar('annotations'), annotations))
    index = metadata.items.length - 1
  }
  const map = annotations as YAMLMap
  const existing = map.items.find((p) => scalarKey(p.key) === upstreamIdentifierAnnotation)
  if (existing && isScalar(existing.value)) {
    const node = existing.value
    node.value = value
    // The old node keeps its style; a plain one that cannot hold the value is single-quoted, as go-yaml does.
    if ((node.type === undefined || node.type === Scalar.PLAIN) && !canBePlain(value)) node.type = Scalar.QUOTE_SINGLE
    return
  }
  const scalar = new Scalar(value)
  scalar.type = Scalar.QUOTE_SINGLE
  map.items.push(new Pair(new Scalar(upstreamIdentifierAnnotation), scalar))
}

/** True when go-yaml would write the string as a plain scalar (the identifier's characters only). */
function canBePlain(value: string): boolean {
  return /^[A-Za-z0-9_.-][A-Za-z0-9_.|/-]*$/.test(value) && !value.endsWith('|')
}

function stringField(map: YAMLMap, key: string): string {
  const node = map.items.find((p) => scalarKey(p.key) === key)?.value
  return isScalar(node) && node.value !== null && typeof node.value !== 'object' ? String(node.value) : ''
}
