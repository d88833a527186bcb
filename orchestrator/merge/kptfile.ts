/**
 * The Kptfile on update, as kpt merges it (`kptfileutil.UpdateKptfile`):
 * the three Kptfiles are decoded into the Kptfile struct, merged field by
 * field with lists of named entries keyed by name, and encoded again. The
 * pipeline's functions, when none is named, are keyed by image without its
 * tag (`_kpt-merge_<image>`), so an upstream tag bump updates the downstream's
 * entry in place and a downstream-added function stays where it is.
 *
 * Only labels, annotations, info, pipeline, inventory and status come from
 * the merge; the name stays the downstream's and the caller sets `upstream`
 * and `upstreamLock`.
 */
import { isMap, toNode } from '../../functions/krm/yaml/index.js'
import type { Node, YAMLSeq } from '../../functions/krm/yaml/index.js'
import { decodeKptfile } from '../clone/kptfile-struct.js'
import type { KptFunction, KptfileStruct } from '../clone/kptfile-struct.js'
import { mergeFields } from './fields.js'
import type { ConflictPolicy, FieldConflict } from './fields.js'
import type { ListStrategy } from './schema.js'

export type KptfileMerge =
  { ok: true; kptfile: KptfileStruct; conflicts: FieldConflict[] } | { ok: false; message: string }

const syntheticPrefix = '_kpt-merge_'

/** Merges three Kptfile texts (origin may be absent: a package adopted without history). */
export function mergeKptfiles(
  local: string,
  origin: string | undefined,
  updated: string,
  policy: ConflictPolicy,
): KptfileMerge {
  const decoded: KptfileStruct[] = []
  for (const [which, text] of [
    ['downstream', local],
    ['old upstream', origin],
    ['new upstream', updated],
  ] as const) {
    if (text === undefined) {
      decoded.push({})
      continue
    }
    const result = decodeKptfile(text)
    if (!result.ok) return { ok: false, message: `${which} ${result.message}` }
    decoded.push(result.value)
  }
  const [l, o, u] = decoded as [KptfileStruct, KptfileStruct, KptfileStruct]
  const named = nameFunctions([l, o, u])
  const conflicts: FieldConflict[] = []
  const result = mergeFields(
    toNode(mergeable(l)),
    origin === undefined ? undefined : toNode(mergeable(o)),
    toNode(mergeable(u)),
    {
      policy,
      conflicts,
      strategy: inferredStrategy,
    },
  )
  const value = (result?.toJSON() ?? {}) as Partial<KptfileStruct>
  if (named)
    for (const list of [value.pipeline?.mutators, value.pipeline?.validators])
      for (const fn of list ?? []) if (fn.name?.startsWith(syntheticPrefix)) delete fn.name
  const kptfile: KptfileStruct = {
    ...l,
    metadata: { ...l.metadata, labels: value.metadata?.labels, annotations: value.metadata?.annotations },
    info: value.info,
    pipeline: value.pipeline,
    inventory: value.inventory,
    status: value.status,
  }
  return { ok: true, kptfile, conflicts }
}

/** The part of a Kptfile the merge decides. */
function mergeable(kptfile: KptfileStruct): Record<string, unknown> {
  return JSON.parse(
    JSON.stringify({
      metadata: { labels: kptfile.metadata?.labels, annotations: kptfile.metadata?.annotations },
      info: kptfile.info,
      pipeline: kptfile.pipeline,
      inventory: kptfile.inventory,
      status: kptfile.status,
    }),
  ) as Record<string, unknown>
}

/**
 * kpt's rule: when no function of the three Kptfiles has a name and no list
 * holds the same image twice, every function is named after its image
 * without the tag (or its exec), which makes the lists keyed.
 */
function nameFunctions(kptfiles: KptfileStruct[]): boolean {
  const lists = kptfiles.flatMap((k) => [k.pipeline?.mutators ?? [], k.pipeline?.validators ?? []])
  if (lists.some((list) => list.some((fn) => fn.name))) return false
  const key = (fn: KptFunction) => `${syntheticPrefix}${fn.image ? fn.image.replace(/:[^:/]*$/, '') : (fn.exec ?? '')}`
  if (lists.some((list) => new Set(list.map(key)).size !== list.length)) return false
  for (const list of lists) for (const fn of list) fn.name = key(fn)
  return true
}

/** kpt merges the Kptfile with inferred list keys: a list of maps that all have a `name` is keyed by it. */
function inferredStrategy(_path: readonly string[], ...lists: (YAMLSeq | undefined)[]): ListStrategy {
  const items = lists.flatMap((seq) => seq?.items ?? []) as Node[]
  const keyed = items.length > 0 && items.every((item) => isMap(item) && item.has('name'))
  return keyed ? { kind: 'keyed', keys: ['name'] } : { kind: 'whole' }
}
