/**
 * The resource half of kpt's `resource-merge`, file by file: the documents of
 * the downstream (local), old upstream (origin) and new upstream (updated)
 * version of a YAML file are matched into resources, each resource is kept,
 * added, deleted or field-merged by kpt's table, and the file is written back
 * in the merged document order.
 *
 * kpt matches resources by group, kind, the namespace and name of the
 * `kpt-merge:` comment (the upstream identity, so a downstream rename still
 * matches) and the file path. Because the path is part of the identity, every
 * file merges on its own; and a file upstream did not change merges to the
 * downstream file, which is kept byte for byte.
 */
import { isMap, isScalar, parse, print, scalarKey } from '../../functions/krm/yaml/index.js'
import type { Document } from '../../functions/krm/yaml/index.js'
import { readableDocument } from '../../functions/krm/index.js'
import { addMergeComment, metadataPair, parseMergeComment } from '../clone/merge-comments.js'
import { isEmptyDocument, sequenceStyle, splitDocuments } from '../package/documents.js'
import { mergeFields } from './fields.js'
import type { FieldConflict, FieldMerge } from './fields.js'
import { listStrategy } from './schema.js'
import type { ConflictPolicy } from './fields.js'
import { LRUCache } from 'lru-cache'

/** A conflict in one resource of one file. */
export interface ResourceConflict extends FieldConflict {
  file: string
  /** `Kind namespace/name` of the resource. */
  resource: string
}

/**
 * The merged text of a file (undefined: the file goes away), its conflicts and warnings (a resource written
 * without its comments, which printed with them would not parse: see printReadable), or an error.
 */
export type FileMerge =
  | { ok: true; text: string | undefined; conflicts: ResourceConflict[]; warnings: string[] }
  | { ok: false; message: string }

type Source = 'local' | 'origin' | 'updated'

interface Resource {
  text: string
  doc: Document.Parsed
  index: number
  identity: string
}

/**
 * Merges already made, by their inputs: the variants of a blueprint mostly
 * hold the same files, so an upstream update merges each distinct file once
 * rather than once per variant. The merge is a pure function of its inputs.
 * Budget: 2,000 merges, the most recently used kept; each holds its key (the
 * three texts) and the merged text, a few KB for a fleet's typical file: some
 * tens of MB at most, for the distinct files of one upstream update.
 */
const merges = new LRUCache<string, FileMerge>({ max: 2_000 })
const absent = '\u0000absent'

/** Merges the three versions of the YAML file at `path` (undefined where a version lacks it). */
export function mergeYamlFile(
  path: string,
  local: string | undefined,
  origin: string | undefined,
  updated: string | undefined,
  policy: ConflictPolicy,
): FileMerge {
  // Upstream left the file alone: the downstream's file (or its deletion) stands.
  if (origin === updated) return { ok: true, text: local, conflicts: [], warnings: [] }
  const key = [policy, path, local ?? absent, origin ?? absent, updated ?? absent].join('\u0000')
  const known = merges.get(key)
  if (known) return known.ok ? { ...known, conflicts: [...known.conflicts], warnings: [...known.warnings] } : known
  const merged = mergeThreeVersions(path, local, origin, updated, policy)
  merges.set(key, merged)
  return merged.ok ? { ...merged, conflicts: [...merged.conflicts], warnings: [...merged.warnings] } : merged
}

/** One resource's three versions, matched by identity; a version missing where that file lacks the resource. */
type Tuple = Partial<Record<Source, Resource>>

/**
 * One file's merge under way: what every resource's merge reads, and what it has written so far. One object per
 * file, in place of closures: this is the hot path of an update.
 */
interface MergeState {
  path: string
  policy: ConflictPolicy
  /** Print sequences wide (indented under their key), as the file the merge follows does. */
  wide: boolean
  out: { index: number; text: string }[]
  conflicts: ResourceConflict[]
  warnings: string[]
  /** Whether the merged file differs from the downstream one. */
  changed: boolean
}

function mergeThreeVersions(
  path: string,
  local: string | undefined,
  origin: string | undefined,
  updated: string | undefined,
  policy: ConflictPolicy,
): FileMerge {
  const tuples = matchVersions(path, local, origin, updated)
  if (!Array.isArray(tuples)) return tuples
  const state: MergeState = {
    path,
    policy,
    wide: wideSequences(local, origin, updated),
    out: [],
    conflicts: [],
    warnings: [],
    changed: false,
  }
  for (const tuple of tuples) mergeTuple(state, tuple)
  const { out, conflicts, warnings } = state
  if (!state.changed && local !== undefined) return { ok: true, text: local, conflicts, warnings: [] }
  if (out.length === 0) return { ok: true, text: undefined, conflicts, warnings: [] }
  // A stable sort: equal indexes keep tuple order.
  const sorted = out.map((entry, order) => ({ ...entry, order })).sort((a, b) => a.index - b.index || a.order - b.order)
  return { ok: true, text: sorted.map((entry) => withNewline(entry.text)).join('---\n'), conflicts, warnings }
}

/**
 * The three versions' resources, matched by identity into tuples in read order (local, then origin, then updated:
 * kpt's tie order for the layout); or why they cannot be: a version that does not parse, a resource twice in one.
 * Positional, as mergeYamlFile's: no object per call on the update's hot path.
 */
function matchVersions(
  path: string,
  local: string | undefined,
  origin: string | undefined,
  updated: string | undefined,
): Tuple[] | { ok: false; message: string } {
  const read: Partial<Record<Source, Resource[]>> = {}
  for (const [source, text] of [
    ['local', local],
    ['origin', origin],
    ['updated', updated],
  ] as const) {
    if (text === undefined) continue
    const resources = readResources(path, text)
    if (!resources.ok) return resources
    read[source] = resources.resources
  }
  const tuples: Tuple[] = []
  const byIdentity = new Map<string, Tuple>()
  for (const source of ['local', 'origin', 'updated'] as const) {
    for (const resource of read[source] ?? []) {
      let tuple = byIdentity.get(resource.identity)
      if (!tuple) {
        tuple = {}
        byIdentity.set(resource.identity, tuple)
        tuples.push(tuple)
      }
      if (tuple[source])
        return {
          ok: false,
          message: `found duplicate ${JSON.stringify(source)} resources in file ${JSON.stringify(path)}, please refer to "update" documentation for the fix`,
        }
      tuple[source] = resource
    }
  }
  return tuples
}

/** Whether the merged file prints sequences wide: as the new upstream where upstream changed its style, else as the downstream. */
function wideSequences(local: string | undefined, origin: string | undefined, updated: string | undefined): boolean {
  return (
    sequenceStyle(
      origin !== undefined && updated !== undefined && sequenceStyle(origin) !== sequenceStyle(updated)
        ? updated
        : (local ?? updated ?? ''),
    ) === 'wide'
  )
}

/** One resource by kpt's table: kept, added, deleted, or its fields merged. */
function mergeTuple(state: MergeState, { local: l, origin: o, updated: u }: Tuple): void {
  if (l && !u && !o) state.out.push({ index: l.index, text: l.text })
  else if (u && !l && !o) {
    state.out.push({ index: u.index, text: readable(state, u.doc) })
    state.changed = true
  } else if (!l || !u) {
    // Deleted upstream: gone unless the downstream changed it. Deleted downstream: stays deleted.
    if (l && o && print(l.doc) !== print(o.doc)) state.out.push({ index: l.index, text: l.text })
    else state.changed ||= l !== undefined
  } else mergeResource(state, l, o, u)
}

/** A resource in both the downstream and the new upstream: upstream's changes merged field by field into the downstream's. */
function mergeResource(state: MergeState, l: Resource, o: Resource | undefined, u: Resource): void {
  const { wide, path } = state
  const before = print(l.doc, { wide })
  const merge: FieldMerge = {
    policy: state.policy,
    conflicts: [],
    strategy: (fieldPath) => listStrategy(stringAt(l.doc, 'apiVersion'), stringAt(l.doc, 'kind'), fieldPath),
  }
  mergeFields(l.doc.contents as never, o?.doc.contents as never, u.doc.contents as never, merge)
  const after = print(l.doc, { wide })
  const index = o && o.index !== u.index ? u.index : l.index
  state.changed ||= after !== before || index !== l.index
  state.out.push({ index, text: after === before ? l.text : readable(state, l.doc, after) })
  const resource = resourceName(l.doc)
  for (const conflict of merge.conflicts) state.conflicts.push({ file: path, resource, ...conflict })
}

/** A resource as written (`printed`: as printed already): checked to read back, else without its comments, warned of. */
function readable(state: MergeState, doc: Document, printed?: string): string {
  const written = readableDocument(doc, { wide: state.wide, file: state.path, printed })
  if (written.warning) state.warnings.push(written.warning)
  return written.text
}

function readResources(
  path: string,
  text: string,
): { ok: true; resources: Resource[] } | { ok: false; message: string } {
  const resources: Resource[] = []
  for (const { text: docText } of splitDocuments(text) ?? [{ separator: '', text }]) {
    if (isEmptyDocument(docText)) continue
    let doc: Document.Parsed
    try {
      doc = parse(docText, { source: path })
    } catch (err) {
      return { ok: false, message: (err as Error).message }
    }
    // kpt marks all three versions with their upstream identity before matching.
    addMergeComment(doc)
    resources.push({ text: docText, doc, index: resources.length, identity: identityOf(doc) })
  }
  return { ok: true, resources }
}

/** group|kind|namespace|name, namespace and name from the `kpt-merge:` comment where there is one. */
function identityOf(doc: Document): string {
  const apiVersion = stringAt(doc, 'apiVersion')
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : ''
  const pair = metadataPair(doc)
  const fromComment = parseMergeComment(pair?.key.comment)
  const metadata = isMap(pair?.value) ? pair.value : undefined
  const field = (key: string) => {
    const node = metadata?.items.find((p) => scalarKey(p.key) === key)?.value
    return isScalar(node) && node.value !== null ? String(node.value) : ''
  }
  const namespace = fromComment?.namespace ?? field('namespace')
  const name = fromComment?.name ?? field('name')
  return `${group}|${stringAt(doc, 'kind')}|${namespace}|${name}`
}

function resourceName(doc: Document): string {
  const pair = metadataPair(doc)
  const metadata = isMap(pair?.value) ? pair.value : undefined
  const field = (key: string) => {
    const node = metadata?.items.find((p) => scalarKey(p.key) === key)?.value
    return isScalar(node) && node.value !== null ? String(node.value) : ''
  }
  const namespace = field('namespace')
  return `${stringAt(doc, 'kind') || 'document'} ${namespace ? `${namespace}/` : ''}${field('name')}`.trim()
}

function stringAt(doc: Document, key: string): string {
  const root = doc.contents
  if (!isMap(root)) return ''
  const node = root.items.find((p) => scalarKey(p.key) === key)?.value
  return isScalar(node) && node.value !== null ? String(node.value) : ''
}

function withNewline(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`
}
