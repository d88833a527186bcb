/**
 * The pure half of the `--cluster` fleet source: which kinds a fleet's sets
 * and variants make the cluster source read, and how a listed object is
 * written into the snapshot the render reads as a fleet directory. The API
 * calls are in cluster.ts.
 */
import { printValue } from '../../functions/krm/yaml/index.js'
import type { Condition } from '../../functions/fan-out/status.js'

/** An object as the API server returns it (JSON). */
export type ApiObject = Record<string, unknown> & { metadata?: Record<string, unknown> }

/** A kind to list: `group` undefined is any group serving `kind` (an injector without one); `version` undefined the group's preferred. */
export interface KindRef {
  group: string | undefined
  version: string | undefined
  kind: string
}

/** The kinds a fleet's sets and variants read, and what the cluster source cannot follow. */
export interface KindsToRead {
  kinds: KindRef[]
  /** Injectors without a kind: they match any injection point's kind, which only the packages know. */
  warnings: string[]
}

/**
 * The kinds the PackageVariantSets' object selectors target and the kinds
 * every injector (of a PackageVariant, or of a set's templates) names, each
 * once. An injector without a kind is a warning: Porch lists the kind of each
 * injection point of the package, which is not known before the render.
 */
export function kindsToRead(sets: readonly ApiObject[], variants: readonly ApiObject[]): KindsToRead {
  const kinds = new Map<string, KindRef>()
  const warnings: string[] = []
  const add = (ref: KindRef) => kinds.set(`${ref.group ?? '*'}|${ref.version ?? '*'}|${ref.kind}`, ref)
  const injectors = (owner: string, field: string, list: unknown) => {
    if (!Array.isArray(list)) return
    list.forEach((injector: unknown, i) => {
      if (!isMap(injector)) return
      const kind = str(injector['kind'])
      if (!kind) {
        warnings.push(
          `${owner}: ${field}[${i}] names no kind: with --cluster only the kinds injectors name are read, so it can inject only objects of those kinds`,
        )
        return
      }
      add({ group: str(injector['group']), version: str(injector['version']) || undefined, kind })
    })
  }
  for (const set of sets) {
    const targets = path(set, ['spec', 'targets'])
    if (!Array.isArray(targets)) continue
    targets.forEach((target: unknown, i) => {
      if (!isMap(target)) return
      const selector = target['objectSelector']
      const apiVersion = isMap(selector) ? str(selector['apiVersion']) : undefined
      const kind = isMap(selector) ? str(selector['kind']) : undefined
      if (apiVersion && kind) {
        const slash = apiVersion.lastIndexOf('/')
        add({ group: slash < 0 ? '' : apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1), kind })
      }
      const template = target['template']
      if (isMap(template))
        injectors(`PackageVariantSet ${describe(set)}`, `spec.targets[${i}].template.injectors`, template['injectors'])
    })
  }
  for (const variant of variants)
    injectors(`PackageVariant ${describe(variant)}`, 'spec.injectors', path(variant, ['spec', 'injectors']))
  return { kinds: [...kinds.values()], warnings }
}

/** Annotation kubectl's client-side apply keeps the whole object in: not part of the object a directory would hold. */
const lastApplied = 'kubectl.kubernetes.io/last-applied-configuration'

/**
 * An object as the snapshot holds it: without the fields the server changes
 * on every write (`resourceVersion`, `managedFields`, `generation`,
 * `selfLink`) nor kubectl's last-applied copy, and, for the kinds whose status
 * this run writes (`dropStatus`), without `status`, so that writing status
 * does not change the fleet's digest. Everything else is kept as served,
 * `uid` included (a set's PackageVariants are tied to it by label).
 */
export function snapshotObject(object: ApiObject, apiVersion: string, kind: string, dropStatus: boolean): ApiObject {
  const out: ApiObject = { apiVersion, kind }
  for (const [key, value] of Object.entries(object)) {
    if (key === 'apiVersion' || key === 'kind' || (key === 'status' && dropStatus)) continue
    if (key !== 'metadata' || !isMap(value)) {
      out[key] = value
      continue
    }
    const metadata: Record<string, unknown> = {}
    for (const [field, v] of Object.entries(value)) {
      if (['resourceVersion', 'managedFields', 'generation', 'selfLink'].includes(field)) continue
      if (field === 'annotations' && isMap(v) && lastApplied in v) {
        const { [lastApplied]: _, ...rest } = v
        if (Object.keys(rest).length > 0) metadata[field] = rest
        continue
      }
      metadata[field] = v
    }
    out['metadata'] = metadata
  }
  return out
}

/** Objects as one YAML stream, one document each, in the order given. */
export function snapshotText(objects: readonly ApiObject[]): string {
  return objects.map((o) => printValue(o, { wide: true })).join('---\n')
}

/** `namespace/name`, or `name` without a namespace: the identity the plan and the report use. */
export function describe(object: ApiObject): string {
  const ns = str(object.metadata?.['namespace'])
  const name = str(object.metadata?.['name']) ?? ''
  return ns ? `${ns}/${name}` : name
}

function path(object: unknown, keys: readonly string[]): unknown {
  let at = object
  for (const key of keys) at = isMap(at) ? at[key] : undefined
  return at
}

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined
}

/** A listed PackageVariant or PackageVariantSet, status included, with the group version it was listed at. */
export interface ListedObject {
  apiVersion: string
  kind: string
  object: ApiObject
}

/** What a run wants in an object's status: its conditions, and other fields (`downstreamTargets`). */
export interface WantedStatus {
  conditions: Condition[]
  extra: Record<string, unknown>
  /** The time a changed condition gets. */
  now: string
}

/** The status to write to one object (a merge patch of `status`). */
export interface StatusUpdate {
  apiVersion: string
  kind: string
  namespace: string
  name: string
  /** `PackageVariant ns/name`, for messages. */
  subject: string
  status: Record<string, unknown>
  /** The version `status` was computed from: the write is refused (409) if the object changed since. */
  resourceVersion?: string
  /** To compute `status` again from the object as it is after such a refusal. */
  wanted: WantedStatus
}

/**
 * The status to write over `current` (an object's `status` as read), or
 * undefined when it already is as wanted: a condition whose status stays
 * keeps its `lastTransitionTime` (as `meta.SetStatusCondition`), a changed or
 * new one gets `now`; other conditions (another controller's) are kept.
 */
export function nextStatus(current: unknown, wanted: WantedStatus): Record<string, unknown> | undefined {
  const status = (typeof current === 'object' && current !== null ? current : {}) as Record<string, unknown>
  const before = Array.isArray(status['conditions']) ? (status['conditions'] as Record<string, unknown>[]) : []
  const conditions = mergeConditions(before, wanted.conditions, wanted.now)
  // Compared with keys sorted: the API server returns custom objects with sorted keys (Go maps).
  const changed =
    canonical(conditions) !== canonical(before) ||
    Object.entries(wanted.extra).some(([k, v]) => canonical(v) !== canonical(status[k]))
  return changed ? { conditions, ...wanted.extra } : undefined
}

/** metav1.Condition's message is at most 32768 characters: the API server refuses more. */
const maxMessage = 32768

function truncate(message: string): string {
  const more = '... (truncated: see the report)'
  return message.length <= maxMessage ? message : `${message.slice(0, maxMessage - more.length)}${more}`
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_, v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  )
}

function mergeConditions(
  before: readonly Record<string, unknown>[],
  wanted: readonly Condition[],
  now: string,
): Record<string, unknown>[] {
  const next = before.map((c) => ({ ...c }))
  for (const w of wanted) {
    const index = next.findIndex((c) => c['type'] === w.type)
    const existing = index >= 0 ? next[index] : undefined
    const time =
      existing && existing['status'] === w.status && typeof existing['lastTransitionTime'] === 'string'
        ? existing['lastTransitionTime']
        : now
    const condition = {
      type: w.type,
      status: w.status,
      lastTransitionTime: time,
      reason: w.reason,
      message: truncate(w.message),
    }
    if (index >= 0) next[index] = condition
    else next.push(condition)
  }
  return next
}
