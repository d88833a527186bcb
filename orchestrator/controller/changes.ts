/**
 * What a change of the fleet affects (pure). The controller plans the whole
 * fleet after every change, as a render does, and compares the plan with the
 * one before: a PackageVariant is affected when what the plan says about it
 * changed (its spec as planned, the set that made it, its upstream revision,
 * its repositories, the objects its injectors can read, or its failure), or
 * when it appeared or went. So a new target is a new variant, a relabelled
 * one a changed or a gone one, and an edited ConfigMap affects exactly the
 * variants that inject it, however the sets' selectors and templates are
 * written. Variants whose pipeline reads the whole fleet are affected by any
 * change (see fleetWideKeys).
 */
import { createHash } from 'node:crypto'
import type { KubeObject } from '../../functions/krm/index.js'
import type { Fleet } from '../fleet/fleet.js'
import type { FleetPlan, PlannedVariant } from '../plan/plan.js'
import type { RenderScope } from '../plan/scope.js'
import type { MemoEntry } from '../run/memo.js'
import { appendTo } from '../util/collections.js'

/** What the plan says about each PackageVariant, by key (`namespace/name`). */
export interface PlanState {
  /** A digest of each variant's plan entries (planned, failed, or both). */
  digests: Map<string, string>
  /** The downstream package (`repo/package`) of each variant, when the plan names one. */
  paths: Map<string, string>
}

/** The state of a plan: each planned or failed PackageVariant's entries as a digest, and its downstream repository. */
export function planState(plan: FleetPlan, fleet: Pick<Fleet, 'objects'>): PlanState {
  const byName = new Map<string, KubeObject[]>()
  for (const o of fleet.objects) appendTo(byName, `${o.namespace}/${o.name}`, o)
  const entries = new Map<string, unknown[]>()
  const paths = new Map<string, string>()
  for (const v of plan.variants) {
    if (v.dependency) continue
    appendTo(entries, v.key, plannedEntry(v, byName))
    paths.set(v.key, `${v.downstream.repo}/${v.downstream.package}`)
  }
  for (const f of plan.failures) {
    if (f.key === undefined) continue
    appendTo(entries, f.key, ['failed', f.subject, f.message, f.set ?? '', f.downstream ?? ''])
    if (f.downstream && !paths.has(f.key)) paths.set(f.key, f.downstream)
  }
  const digests = new Map<string, string>()
  for (const [key, list] of entries) digests.set(key, createHash('sha256').update(JSON.stringify(list)).digest('hex'))
  return { digests, paths }
}

/** A planned variant as the plan gives it, with the objects its injectors can read (those of its namespace named by one, as Porch injects). */
function plannedEntry(v: PlannedVariant, byName: ReadonlyMap<string, readonly KubeObject[]>): unknown[] {
  const names = [...new Set((v.pv.spec.injectors ?? []).map((i) => i.name))].sort()
  const injectable = names.flatMap((name) => (byName.get(`${v.pv.namespace}/${name}`) ?? []).map(digestOf))
  const { upstream } = v
  return [
    'planned',
    textOf(v.pv.object),
    v.set ?? '',
    v.warnings,
    [upstream.repository, upstream.ref, upstream.commit, upstream.directory],
    digestOf(v.upstreamRepo.object),
    digestOf(v.downstreamRepo.object),
    `${v.downstream.repo}/${v.downstream.package}`,
    injectable,
  ]
}

/**
 * The scope of a render after a change: the variants whose entries differ
 * between the plans (new, changed, gone), and those of `always` still or
 * once planned; the downstream repositories where their packages are or
 * were; the packages they had before (where a gone variant's package is);
 * and whether one of those declared something to the dependency check, as
 * the render memo's `records` say (a package not recorded may have). Empty
 * when nothing a render does depends on changed.
 */
export function affectedScope(
  before: PlanState,
  after: PlanState,
  options: { always?: Iterable<string>; records?: Readonly<Record<string, MemoEntry>> } = {},
): RenderScope {
  const keys = new Set<string>()
  for (const [key, digest] of after.digests) if (before.digests.get(key) !== digest) keys.add(key)
  for (const key of before.digests.keys()) if (!after.digests.has(key)) keys.add(key)
  for (const key of options.always ?? []) if (before.digests.has(key) || after.digests.has(key)) keys.add(key)
  const repositories = new Set<string>()
  const packages = new Set<string>()
  for (const key of keys) {
    const was = before.paths.get(key)
    if (was !== undefined) packages.add(was)
    for (const path of [was, after.paths.get(key)])
      if (path !== undefined) repositories.add(path.slice(0, path.indexOf('/')))
  }
  const records = options.records ?? {}
  const declared = [...packages].some((path) => !records[path] || records[path].dependencies !== undefined)
  return {
    variants: [...keys].sort(),
    repositories: [...repositories].sort(),
    packages: [...packages].sort(),
    declared,
  }
}

/**
 * The variants whose last render read more than their injected objects, so
 * that any change of the fleet may change them: those whose pipeline our
 * functions ran over the whole fleet (recorded with scope `fleet`), and
 * those that rendered but were not recorded at all (a pipeline kpt ran, which
 * may read anything). `records`: the render memo's entries by package path;
 * `rendered`: the keys whose last render succeeded.
 */
export function fleetWideKeys(
  plan: FleetPlan,
  records: Readonly<Record<string, MemoEntry>>,
  rendered: ReadonlySet<string>,
): string[] {
  const keys: string[] = []
  for (const v of plan.variants) {
    if (v.dependency) continue
    const record = records[`${v.downstream.repo}/${v.downstream.package}`]
    if (record ? record.scope === 'fleet' : rendered.has(v.key)) keys.push(v.key)
  }
  return keys
}

/** Objects as text, printed once each. */
const texts = new WeakMap<KubeObject, string>()

function textOf(object: KubeObject): string {
  let text = texts.get(object)
  if (text === undefined) texts.set(object, (text = object.toItemText()))
  return text
}

/**
 * An object's text as a digest, once each: ten thousand variants share a few
 * repositories and injected objects, whose whole texts in every variant's
 * entry were most of what planState hashed.
 */
const digests = new WeakMap<KubeObject, string>()

function digestOf(object: KubeObject): string {
  let digest = digests.get(object)
  if (digest === undefined) digests.set(object, (digest = createHash('sha256').update(textOf(object)).digest('base64')))
  return digest
}
