/**
 * The field-level 3-way merge of one resource: kpt's `resource-merge`
 * (kyaml `merge3`), walking the downstream (local), the old upstream (origin)
 * and the new upstream (updated) at once and editing the downstream's YAML
 * nodes in place, so its key order, comments and scalar styles survive.
 *
 * The rules are kpt's: a field changed upstream only takes the upstream
 * value; changed downstream only keeps the downstream one; added or removed
 * upstream follows upstream; maps merge key by key (new keys appended, new
 * maps with sorted keys); keyed lists (containers by name...) merge element
 * by element in downstream order; other lists are replaced when upstream
 * changed them. One difference, on purpose: where both sides changed a value
 * differently kpt silently takes upstream; here that is a conflict, reported
 * and resolved by the caller's policy.
 */
import {
  isAmbiguousString,
  isMap,
  isScalar,
  isSeq,
  Pair,
  Scalar,
  scalarKey,
  YAMLMap,
  YAMLSeq,
} from '../../functions/krm/yaml/index.js'
import type { Node } from '../../functions/krm/yaml/index.js'
import type { ListStrategy } from './schema.js'

/** What to do when both sides changed the same field differently. */
export type ConflictPolicy = 'upstream' | 'downstream' | 'fail'

/** A field both sides changed: values as YAML text, undefined where the field is absent. */
export interface FieldConflict {
  field: string
  origin?: string
  local?: string
  upstream?: string
}

/** What the walk needs to know and what it collects. */
export interface FieldMerge {
  policy: ConflictPolicy
  /** The merge strategy of the list at `path` (field names, `[]` for an element). */
  strategy(
    path: readonly string[],
    local: YAMLSeq | undefined,
    origin: YAMLSeq | undefined,
    updated: YAMLSeq | undefined,
  ): ListStrategy
  conflicts: FieldConflict[]
}

type Maybe = Node | undefined

/**
 * Merges `updated` over `origin` into `local` and returns the merged node:
 * `local` itself (edited in place) where it exists, a new node where only
 * upstream has the field, undefined where the field goes away.
 */
export function mergeFields(local: Maybe, origin: Maybe, updated: Maybe, merge: FieldMerge): Maybe {
  return mergeNode(local, origin, updated, { path: [], display: '', parentInLocal: true }, merge)
}

interface At {
  path: string[]
  display: string
  /** False inside a map or element the downstream deleted: partial re-adds there are kpt's rule, not conflicts. */
  parentInLocal: boolean
}

function mergeNode(local: Maybe, origin: Maybe, updated: Maybe, at: At, merge: FieldMerge): Maybe {
  if (isTaggedNull(updated) || isTaggedNull(local)) return undefined
  const shapes = new Set([local, origin, updated].filter((n) => n !== undefined).map(shapeOf))
  if (shapes.size > 1) return mergeWhole(local, origin, updated, at, merge)
  const sample = updated ?? origin ?? local
  if (isMap(sample))
    return mergeMap(
      local as YAMLMap | undefined,
      origin as YAMLMap | undefined,
      updated as YAMLMap | undefined,
      at,
      merge,
    )
  if (isSeq(sample)) {
    const strategy = merge.strategy(
      at.path,
      local as YAMLSeq | undefined,
      origin as YAMLSeq | undefined,
      updated as YAMLSeq | undefined,
    )
    if (strategy.kind === 'keyed')
      return mergeKeyed(
        local as YAMLSeq | undefined,
        origin as YAMLSeq | undefined,
        updated as YAMLSeq | undefined,
        strategy.keys,
        at,
        merge,
      )
    if (strategy.kind === 'set')
      return mergeSet(local as YAMLSeq | undefined, origin as YAMLSeq | undefined, updated as YAMLSeq | undefined)
    return mergeWhole(local, origin, updated, at, merge)
  }
  return mergeScalar(
    local as Scalar | undefined,
    origin as Scalar | undefined,
    updated as Scalar | undefined,
    at,
    merge,
  )
}

function mergeScalar(
  local: Scalar | undefined,
  origin: Scalar | undefined,
  updated: Scalar | undefined,
  at: At,
  merge: FieldMerge,
): Maybe {
  // Added or removed upstream: upstream decides.
  if ((updated === undefined) !== (origin === undefined)) {
    const changedLocally =
      local !== undefined &&
      (origin ? scalarValue(local) !== scalarValue(origin) : scalarValue(local) !== scalarValue(updated!))
    return resolve(changedLocally, local, origin, updated, at, merge) === 'local' ? local : takeScalar(local, updated)
  }
  if (updated === undefined || origin === undefined) return local
  const localUnchanged = local === undefined ? !at.parentInLocal : sameScalar(local, origin)
  if (localUnchanged && !sameScalar(origin, updated)) return takeScalar(local, updated)
  if (scalarValue(updated) !== scalarValue(origin)) {
    const conflict =
      local === undefined || (scalarValue(local) !== scalarValue(origin) && scalarValue(local) !== scalarValue(updated))
    return resolve(conflict, local, origin, updated, at, merge) === 'local' ? local : takeScalar(local, updated)
  }
  return local
}

function mergeMap(
  local: YAMLMap | undefined,
  origin: YAMLMap | undefined,
  updated: YAMLMap | undefined,
  at: At,
  merge: FieldMerge,
): Maybe {
  if (origin === undefined && updated === undefined) return local
  if (local === undefined && updated === undefined) return undefined
  // The comment above a map's first key is the key's (see firstKeyComment); not so for a list
  // element, where it is the element's own comment (above its `- `), which kpt does not merge.
  if (at.path.length > 0 && at.path[at.path.length - 1] !== '[]')
    for (const map of [local, origin, updated]) firstKeyComment(map)
  const result = local ?? new YAMLMap()
  const keys = new Set<string>()
  for (const map of [local, origin, updated]) for (const pair of map?.items ?? []) keys.add(scalarKey(pair.key) ?? '')
  const inLocal = at.parentInLocal && local !== undefined
  for (const key of [...keys].sort()) {
    const l = pairOf(local, key)
    const o = pairOf(origin, key)
    const u = pairOf(updated, key)
    const child = {
      path: [...at.path, key],
      display: at.display ? `${at.display}.${key}` : key,
      parentInLocal: inLocal,
    }
    const value = mergeNode(l?.value as Maybe, o?.value as Maybe, u?.value as Maybe, child, merge)
    if (value === undefined) {
      if (l) result.items.splice(result.items.indexOf(l), 1)
    } else if (l) {
      l.value = value
      if (
        u &&
        o &&
        isScalar(l.key) &&
        isScalar(o.key) &&
        isScalar(u.key) &&
        sameComments(l.key, o.key) &&
        !sameComments(o.key, u.key)
      )
        copyComments(l.key, u.key)
    } else {
      const keyNode = isScalar(u?.key) ? u.key.clone() : new Scalar(key)
      result.items.push(new Pair(keyNode, value))
    }
  }
  // A map the downstream did not have and that ends up empty stays absent.
  if (local === undefined && result.items.length === 0) return undefined
  return result
}

function mergeKeyed(
  local: YAMLSeq | undefined,
  origin: YAMLSeq | undefined,
  updated: YAMLSeq | undefined,
  keys: readonly string[],
  at: At,
  merge: FieldMerge,
): Maybe {
  if (origin !== undefined && updated === undefined) {
    const changed = local !== undefined && !sameNode(local, origin)
    return resolve(changed, local, origin, updated, at, merge) === 'local' ? local : undefined
  }
  if (origin === undefined && updated === undefined) return local
  // Elements that are not maps cannot be keyed: the list is replaced as a whole.
  if (![local, origin, updated].every((seq) => (seq?.items ?? []).every(isMap)))
    return mergeWhole(local, origin, updated, at, merge)
  const result = local ?? new YAMLSeq()
  const order: string[] = []
  const seen = new Set<string>()
  for (const seq of [local, origin, updated]) {
    for (const item of seq?.items ?? []) {
      const key = elementKey(item as YAMLMap, keys)
      if (!seen.has(key)) {
        seen.add(key)
        order.push(key)
      }
    }
  }
  for (const key of order) {
    const l = elementOf(local, key, keys)
    const o = elementOf(origin, key, keys)
    const u = elementOf(updated, key, keys)
    const label = keys
      .map((k) => `${k}=${stringField(l ?? u ?? o, k)}`)
      .filter((s) => !s.endsWith('='))
      .join(',')
    const child = {
      path: [...at.path, '[]'],
      display: `${at.display}[${label}]`,
      parentInLocal: at.parentInLocal && local !== undefined,
    }
    const merged = mergeNode(l, o, u, child, merge) as YAMLMap | undefined
    if (merged === undefined || merged.items.length === 0) {
      if (l) result.items.splice(result.items.indexOf(l), 1)
      continue
    }
    // An element that survives keeps its key fields, even where upstream removed them; kpt sets a
    // missing one last (`- image: img:2\n  name: c1` for a container the downstream deleted).
    const source = u ?? o ?? l
    for (const k of keys) {
      const value = pairOf(source, k)
      if (value && !pairOf(merged, k)) merged.items.push(new Pair(new Scalar(k), clone(value.value as Node)))
    }
    if (!l) result.items.push(merged)
  }
  if (local === undefined && result.items.length === 0) return undefined
  return result
}

/** A list of scalars merged as a set (`metadata.finalizers`): downstream order, upstream removals applied, upstream additions appended. */
function mergeSet(local: YAMLSeq | undefined, origin: YAMLSeq | undefined, updated: YAMLSeq | undefined): Maybe {
  if (origin !== undefined && updated === undefined) return undefined
  if (updated === undefined) return local
  const values = (seq: YAMLSeq | undefined) =>
    new Set((seq?.items ?? []).map((n) => (isScalar(n) ? String(n.value) : JSON.stringify(n))))
  const inOrigin = values(origin)
  const inUpdated = values(updated)
  const result = local ?? new YAMLSeq()
  result.items = result.items.filter((n) => {
    const v = isScalar(n) ? String(n.value) : JSON.stringify(n)
    return !(inOrigin.has(v) && !inUpdated.has(v))
  })
  const present = values(result)
  for (const n of updated.items) {
    const v = isScalar(n) ? String(n.value) : JSON.stringify(n)
    if (!present.has(v) && !inOrigin.has(v)) result.items.push(clone(n as Node))
  }
  return result
}

/** A value merged as one piece (lists without a key, values whose shape changed): upstream's when upstream changed it. */
function mergeWhole(local: Maybe, origin: Maybe, updated: Maybe, at: At, merge: FieldMerge): Maybe {
  if (origin === undefined && updated === undefined) return local
  if (origin !== undefined && updated !== undefined && sameNode(origin, updated)) return local
  const changedLocally =
    local !== undefined
      ? !(origin ? sameNode(local, origin) : sameNode(local, updated!))
      : origin !== undefined && at.parentInLocal
  const conflict = changedLocally && !(local !== undefined && updated !== undefined && sameNode(local, updated))
  if (resolve(conflict, local, origin, updated, at, merge) === 'local') return local
  if (updated === undefined) return undefined
  // kpt sets upstream's node as it is (key order and comments inside kept), in the downstream's
  // flow or block style where the downstream has the field.
  const copy = clone(updated)
  if ((isSeq(copy) || isMap(copy)) && (isSeq(local) || isMap(local))) copy.flow = local.flow
  return copy
}

/** Records a conflict (when there is one) and says which side wins. */
function resolve(
  conflict: boolean,
  local: Maybe,
  origin: Maybe,
  updated: Maybe,
  at: At,
  merge: FieldMerge,
): 'local' | 'upstream' {
  if (!conflict) return 'upstream'
  merge.conflicts.push({ field: at.display || '.', origin: show(origin), local: show(local), upstream: show(updated) })
  return merge.policy === 'downstream' ? 'local' : 'upstream'
}

/** Upstream's value in the downstream node: the downstream's quoting style, upstream's comments (kpt's rule). */
function takeScalar(local: Scalar | undefined, updated: Scalar | undefined): Maybe {
  if (updated === undefined) return undefined
  if (local === undefined) return clone(updated)
  const value = updated.value
  local.value = value
  const plain = local.type === undefined || local.type === Scalar.PLAIN
  const block = local.type === Scalar.BLOCK_LITERAL || local.type === Scalar.BLOCK_FOLDED
  if (typeof value !== 'string') local.type = updated.type
  else if (plain && isAmbiguousString(value)) local.type = Scalar.QUOTE_DOUBLE
  else if (block && !value.includes('\n')) local.type = updated.type
  // The number's source text belongs to the old value.
  delete (local as { source?: unknown }).source
  copyComments(local, updated)
  return local
}

/**
 * A deep copy of an upstream node taken as a whole (key order kept: kpt sorts
 * only the keys of maps its walk builds, in `mergeMap`).
 */
function clone(node: Node): Node {
  if (isMap(node)) {
    const map = new YAMLMap()
    map.flow = node.flow
    copyComments(map, node)
    for (const pair of node.items)
      map.items.push(
        new Pair(
          isScalar(pair.key) ? pair.key.clone() : pair.key,
          pair.value == null ? pair.value : clone(pair.value as Node),
        ),
      )
    return map
  }
  if (isSeq(node)) {
    const seq = new YAMLSeq()
    seq.flow = node.flow
    copyComments(seq, node)
    for (const item of node.items) seq.items.push(clone(item as Node))
    return seq
  }
  const scalar = (node as Scalar).clone() as Scalar
  if (
    typeof scalar.value === 'string' &&
    (scalar.type === undefined || scalar.type === Scalar.PLAIN) &&
    isAmbiguousString(scalar.value)
  )
    scalar.type = Scalar.QUOTE_DOUBLE
  return scalar
}

/**
 * The comment above the first key of a (block) map: the yaml library keeps it
 * on the map, go-yaml (kpt) on the key, where it merges like any key's head
 * comment (taken from upstream when the downstream left it alone). Moved onto
 * the key; the printed text is the same.
 */
function firstKeyComment(map: YAMLMap | undefined): void {
  const key = map?.items[0]?.key
  if (!map || map.flow || !map.commentBefore || !isScalar(key)) return
  key.commentBefore = key.commentBefore ? `${map.commentBefore}\n${key.commentBefore}` : map.commentBefore
  map.commentBefore = undefined
}

function shapeOf(node: Node): 'map' | 'seq' | 'scalar' {
  return isMap(node) ? 'map' : isSeq(node) ? 'seq' : 'scalar'
}

/** `key: null` or `key: ~` written out (an empty value is not a tagged null). */
function isTaggedNull(node: Maybe): boolean {
  if (!isScalar(node) || node.value !== null) return false
  const source = (node as { source?: unknown }).source
  return typeof source === 'string' ? /^(null|Null|NULL|~)$/.test(source) : true
}

function scalarValue(node: Scalar): string {
  return node.value === null || node.value === undefined ? '' : String(node.value)
}

/** Same value and same comments (kpt compares the serialized nodes; quoting does not count). */
function sameScalar(a: Scalar, b: Scalar): boolean {
  return scalarValue(a) === scalarValue(b) && sameComments(a, b)
}

function sameComments(a: Node, b: Node): boolean {
  return (a.comment ?? '') === (b.comment ?? '') && (a.commentBefore ?? '') === (b.commentBefore ?? '')
}

function copyComments(to: Node, from: Node): void {
  to.comment = from.comment
  to.commentBefore = from.commentBefore
}

/** Same data (comments aside). */
function sameNode(a: Node, b: Node): boolean {
  return JSON.stringify(a.toJSON()) === JSON.stringify(b.toJSON())
}

function pairOf(map: YAMLMap | undefined, key: string): Pair | undefined {
  return map?.items.find((p) => scalarKey(p.key) === key)
}

function stringField(map: YAMLMap | undefined, key: string): string {
  const value = pairOf(map, key)?.value
  return isScalar(value) ? scalarValue(value) : ''
}

function elementKey(element: YAMLMap, keys: readonly string[]): string {
  return keys.map((k) => stringField(element, k)).join('\u0000')
}

function elementOf(seq: YAMLSeq | undefined, key: string, keys: readonly string[]): YAMLMap | undefined {
  return seq?.items.find((item) => isMap(item) && elementKey(item, keys) === key) as YAMLMap | undefined
}

/** A value for a conflict report: a scalar's text, a collection as flow YAML. */
function show(node: Maybe): string | undefined {
  if (node === undefined) return undefined
  if (isScalar(node)) return scalarValue(node)
  return JSON.stringify(node.toJSON())
}
