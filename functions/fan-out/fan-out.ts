/**
 * fan-out: expands a PackageVariantSet into PackageVariants over the
 * ResourceList, as Porch's PackageVariantSet controller does
 * (docs/upstream-behaviour.md, "Porch's PackageVariantSet controller"): validate, find the upstream,
 * unroll targets, render every spec, then reconcile the set. Any error before
 * reconciliation leaves the items untouched.
 */
import { combineErrors, isPackageVariant } from '../api/package-variant.js'
import { isPackageVariantSet, validatePackageVariantSet } from '../api/package-variant-set.js'
import type { PackageVariantSet } from '../api/package-variant-set.js'
import { rootPackagePath } from '../krm/index.js'
import type { KubeObject, ResourceList, Result, TransformOptions } from '../krm/index.js'
import { CelEngine, defaultCelBudget } from './cel.js'
import type { CelBudget } from './cel.js'
import { parseConfig } from './config.js'
import { nameErrors, packageVariantIdentifier, packageVariantName } from './naming.js'
import { existingVariants, reconcileVariants } from './reconcile.js'
import type { DesiredVariant, ReconcileSummary } from './reconcile.js'
import { projectObject, renderSpec } from './template.js'
import type { RenderInputs } from './template.js'
import { setConditions } from './status.js'
import type { FailureReason } from './status.js'
import { buildInventory, findUpstreamRevision, unrollTargets } from './targets.js'
import type { EmptyMatch, Inventory, KnownKinds, PvContext } from './targets.js'

/** Options of a fan-out run beyond the transform's. */
export interface FanOutOptions {
  /** CEL evaluation limits (default `defaultCelBudget`). */
  celBudget?: CelBudget
  /**
   * When true, a target whose template cannot be rendered or whose
   * PackageVariant name is invalid or taken gets its error result (tagged
   * `target`) and is left out, and the other targets are still reconciled.
   * Porch's behaviour, the default, stops the whole set at the first one;
   * the orchestrator isolates them so one bad cluster fails alone.
   */
  isolateTargets?: boolean
  /**
   * The kinds the API server serves (`--cluster`'s discovery, keys of
   * kindKey): a selector's kind must be one of them. Without, a kind must be
   * built in, or declared by an object or a CustomResourceDefinition of the
   * items or sources (see buildInventory).
   */
  servedKinds?: KnownKinds
}

/** Why a set, or one of its targets, made no PackageVariant: what its error result says, as data. */
export interface FanOutFailure {
  /** Porch's condition reason; none when the set could not be read at all. */
  reason?: FailureReason
  message: string
  /** The target that failed (`WorkloadCluster "c2"`, `repository "r" package "p"`); none when the whole set failed. */
  target?: string
  /** The downstream package (`<repo>/<package>`) the target would have rendered, when known. */
  downstream?: string
  /** The downstream repository, when only that is known (it does not exist). */
  downstreamRepo?: string
  /** The object the failed target selected, when it has one (a Rollout places it in its steps by its labels). */
  targetObject?: KubeObject
}

/** What a fan-out run did: the reconciliation (none when the set failed as a whole) and every failure. */
export interface FanOutOutcome {
  summary?: ReconcileSummary
  failures: FanOutFailure[]
  /** Targets whose known kind matched no object: each a warning result too. */
  emptyMatches: EmptyMatch[]
}

/** The transform `bin/fan-out` runs. */
export function fanOut(rl: ResourceList, options: TransformOptions): void {
  runFanOut(rl, options)
}

/** fan-out with explicit options (tests, the orchestrator); its failures are error results and, as data, the outcome's. */
export function runFanOut(
  rl: ResourceList,
  options: TransformOptions,
  fanOutOptions: FanOutOptions = {},
): FanOutOutcome {
  const parsed = parseConfig(rl.functionConfig)
  if (!parsed.ok) return configFailure(rl, parsed.results)
  const pvs = parsed.config
  const fc = pvs.object
  const run: FanOutRun = { rl, fc, pvsItem: findSetItem(rl.items, fc, pvs), failures: [], emptyMatches: [] }

  for (const w of pvs.warnings) rl.results.warning(w.message, { object: fc, field: w.field })
  const validation = validatePackageVariantSet(pvs)
  if (validation.length > 0) return failSet(run, 'ValidationError', combineErrors(validation), validation[0]!.field)

  // A set without a namespace (a manifest written for kubectl apply) is where kubectl would put it: `default`.
  const inventory = buildInventory(pvs.namespace || 'default', rl.items, options.sources, fanOutOptions.servedKinds)
  const upstream = findUpstreamRevision(pvs, inventory)
  if (!upstream.ok) return failSet(run, 'UpstreamNotFound', upstream.message, 'spec.upstream')

  const unrolled = unrollTargets(pvs, inventory)
  if (!unrolled.ok) return failSet(run, unrolled.reason, unrolled.message, unrolled.field)
  for (const empty of unrolled.empty) {
    rl.results.warning(empty.message, { object: fc, field: empty.field })
    run.emptyMatches.push(empty)
  }

  const isolate = fanOutOptions.isolateTargets === true
  const inputs = renderInputs(pvs, upstream.object, inventory, fanOutOptions)
  const rendered = renderAll(pvs, unrolled.contexts, inputs, isolate)
  if (!rendered.ok) return failSet(run, 'UnexpectedError', rendered.message, rendered.field, rendered.target)

  const existing = existingVariants(pvs, rl.items, rendered.desired)
  const problems = [...rendered.skipped, ...checkNewNames(pvs, rendered.desired, existing, rl.items)]
  if (problems.length > 0) {
    reportTargetProblems(run, problems)
    if (!isolate) return { failures: run.failures, emptyMatches: run.emptyMatches }
    for (const p of problems) if (p.id !== undefined) rendered.desired.delete(p.id)
  }
  for (const warning of rendered.collisions) rl.results.warning(warning, { object: fc, field: 'spec.targets' })

  const summary = reconcileVariants(pvs, rl.items, existing, rendered.desired, directoryOf(run.pvsItem))
  if (run.pvsItem && problems.length === 0) setConditions(run.pvsItem, { ok: true })
  rl.results.info(summaryMessage(pvs, rendered.desired.size, summary), { object: fc })
  return { summary, failures: run.failures, emptyMatches: run.emptyMatches }
}

/** A run of one set: where its results, conditions and failures go. */
interface FanOutRun {
  rl: ResourceList
  /** The functionConfig, which the results name. */
  fc: KubeObject
  /** The set's own item, if it is among the items: its status gets the conditions. */
  pvsItem: KubeObject | undefined
  failures: FanOutFailure[]
  emptyMatches: EmptyMatch[]
}

/** A functionConfig that is no PackageVariantSet: its results, and its errors as failures. */
function configFailure(rl: ResourceList, results: Result[]): FanOutOutcome {
  const failures: FanOutFailure[] = []
  rl.results.push(...results)
  for (const r of results) if (r.severity === 'error') failures.push({ message: r.message })
  return { failures, emptyMatches: [] }
}

/** Porch writes the set's status before it returns the error: the set's conditions stay on a failed run's output. */
function markSetFailed(run: FanOutRun, reason: FailureReason, message: string): void {
  if (!run.pvsItem) return
  setConditions(run.pvsItem, { ok: false, reason, message })
  run.rl.keepStatusOnFailure(run.pvsItem)
}

/** The whole set fails: its conditions, one error result, and the outcome so far. */
function failSet(
  run: FanOutRun,
  reason: FailureReason,
  message: string,
  field?: string,
  target?: string,
): FanOutOutcome {
  markSetFailed(run, reason, message)
  run.rl.results.error(message, {
    object: run.fc,
    field,
    tags: { reason, ...(target !== undefined ? { target } : {}) },
  })
  run.failures.push({ reason, message, ...(target !== undefined ? { target } : {}) })
  return { failures: run.failures, emptyMatches: run.emptyMatches }
}

/**
 * One error result per failed target (render failures, then names, each in
 * target order); the conditions carry the first, as Porch stops at its first
 * failed create.
 */
function reportTargetProblems(run: FanOutRun, problems: readonly NameProblem[]): void {
  markSetFailed(run, 'UnexpectedError', problems[0]!.message)
  for (const p of problems) {
    const failure: FanOutFailure = { reason: 'UnexpectedError', message: p.message, target: p.target }
    const tags: Record<string, string> = { reason: 'UnexpectedError', target: p.target }
    if (p.downstream) tags['downstream'] = failure.downstream = p.downstream
    if (p.downstreamRepo !== undefined) tags['downstream-repo'] = failure.downstreamRepo = p.downstreamRepo
    if (p.targetObject) failure.targetObject = p.targetObject
    run.rl.results.error(p.message, { object: run.fc, field: p.field, tags })
    run.failures.push(failure)
  }
}

/** What every target's template is rendered against: the set, its upstream, the Repositories, one CEL engine. */
function renderInputs(
  pvs: PackageVariantSet,
  upstream: KubeObject,
  inventory: Inventory,
  fanOutOptions: FanOutOptions,
): RenderInputs {
  return {
    pvs,
    upstream: projectObject(upstream),
    repositories: inventory.repositories,
    engine: new CelEngine(fanOutOptions.celBudget ?? defaultCelBudget),
    project: cachedProjection(),
  }
}

type Rendered =
  | { ok: true; desired: Map<string, DesiredVariant>; collisions: string[]; skipped: NameProblem[] }
  | { ok: false; message: string; field: string | undefined; target: string }

/**
 * Renders every target before anything changes (Porch's atomicity): the
 * first error stops, unless `isolate`, where each failing target is skipped.
 */
function renderAll(
  pvs: PackageVariantSet,
  contexts: readonly PvContext[],
  inputs: RenderInputs,
  isolate: boolean,
): Rendered {
  const desired = new Map<string, DesiredVariant>()
  const origin = new Map<string, PvContext>()
  const collisions: string[] = []
  const skipped: NameProblem[] = []
  for (const ctx of contexts) {
    const result = renderSpec(ctx, inputs)
    const target = `spec.targets[${ctx.targetIndex}]`
    if (!result.ok) {
      const failure = {
        message: result.error.message,
        field: result.error.field ? `${target}.${result.error.field}` : `${target}.template.downstream`,
        target: describeTarget(ctx),
        ...(result.error.repo !== undefined ? { downstreamRepo: result.error.repo } : {}),
      }
      const targetObject = ctx.object ?? inputs.repositories.get(ctx.repoDefault)
      if (targetObject) Object.assign(failure, { targetObject })
      if (isolate) {
        skipped.push(failure)
        continue
      }
      return { ok: false, message: failure.message, field: failure.field, target: failure.target }
    }
    const downstream = result.spec['downstream'] as { repo?: string; package?: string }
    const id = packageVariantIdentifier(pvs.name, downstream.repo ?? '', downstream.package ?? '')
    const previous = origin.get(id)
    if (previous) {
      collisions.push(
        `${describeTarget(previous)} of spec.targets[${previous.targetIndex}] and ${describeTarget(ctx)} of ${target} both map to PackageVariant identifier ${JSON.stringify(id)}; the last one wins`,
      )
    }
    origin.set(id, ctx)
    // A JS Map keeps the first position and takes the last value (Porch's map overwrite).
    const targetObject = ctx.object ?? inputs.repositories.get(downstream.repo ?? '')
    desired.set(id, {
      id,
      name: packageVariantName(id),
      spec: result.spec,
      targetIndex: ctx.targetIndex,
      target: describeTarget(ctx),
      ...(targetObject ? { targetObject } : {}),
    })
  }
  return { ok: true, desired, collisions, skipped }
}

/** A target whose PackageVariant cannot be rendered or created, and its identifier and downstream when it has them. */
interface NameProblem {
  message: string
  field: string
  target: string
  id?: string
  /** `repo/package` of the rendered spec. */
  downstream?: string
  /** The downstream repository that does not exist (the package is unknown). */
  downstreamRepo?: string
  /** The object the target selected, if any. */
  targetObject?: KubeObject
}

/**
 * Names of PackageVariants to be created must be valid object names and not
 * taken by a PackageVariant outside the set. Names are not sanitised (Porch
 * does not), so a nested package path (`network/upf`) gives a name with `/`.
 */
function checkNewNames(
  pvs: PackageVariantSet,
  desired: ReadonlyMap<string, DesiredVariant>,
  existing: ReadonlyMap<string, KubeObject>,
  items: readonly KubeObject[],
): NameProblem[] {
  const problems: NameProblem[] = []
  const owned = new Set(existing.values())
  const foreign = new Set<string>()
  for (const o of items) {
    if (isPackageVariant(o) && (o.namespace === pvs.namespace || o.namespace === '') && !owned.has(o))
      foreign.add(o.name)
  }
  for (const [id, want] of desired) {
    if (existing.has(id)) continue
    const errors = nameErrors(want.name)
    const downstream = want.spec['downstream'] as { repo?: string; package?: string }
    const at = {
      field: `spec.targets[${want.targetIndex}]`,
      target: want.target,
      id,
      downstream: `${downstream.repo ?? ''}/${downstream.package ?? ''}`,
      ...(want.targetObject ? { targetObject: want.targetObject } : {}),
    }
    if (errors.length > 0) {
      problems.push({
        message: `invalid PackageVariant name ${JSON.stringify(want.name)}: metadata.name: Invalid value: ${JSON.stringify(want.name)}: ${errors.join('; ')}`,
        ...at,
      })
    } else if (foreign.has(want.name)) {
      problems.push({
        message: `packagevariants.config.porch.kpt.dev ${JSON.stringify(want.name)} already exists and does not belong to PackageVariantSet ${JSON.stringify(pvs.name)}`,
        ...at,
      })
    }
  }
  return problems
}

function cachedProjection(): (object: KubeObject) => Map<string, unknown> {
  const cache = new WeakMap<KubeObject, Map<string, unknown>>()
  return (object) => {
    let projected = cache.get(object)
    if (!projected) {
      projected = projectObject(object)
      cache.set(object, projected)
    }
    return projected
  }
}

function describeTarget(ctx: PvContext): string {
  return ctx.object
    ? `${ctx.object.kind} ${JSON.stringify(ctx.object.name)}`
    : `repository ${JSON.stringify(ctx.repoDefault)} package ${JSON.stringify(ctx.packageDefault)}`
}

/**
 * The item that is the set's file. Under `kpt fn render` a pipeline also sees
 * its subpackages' items, whose paths are relative to their own package; only
 * an item of the package whose pipeline runs (the shortest `package-path`) can
 * be the set's file, since new PackageVariants are written relative to that
 * package (an item without one, e.g. made by an earlier mutator, belongs to
 * it too). With `configPath`, the functionConfig carries its own path, which
 * picks the file when several match. Under `kpt fn eval` no item has a
 * `package-path` and all count.
 */
function findSetItem(items: readonly KubeObject[], fc: KubeObject, pvs: PackageVariantSet): KubeObject | undefined {
  const root = rootPackagePath(items)
  const candidates = items.filter(
    (o) =>
      isPackageVariantSet(o) &&
      o.name === pvs.name &&
      o.namespace === pvs.namespace &&
      (o.packagePath ?? root) === root,
  )
  const fcPath = fc.path
  return (fcPath === undefined ? undefined : candidates.find((o) => o.path === fcPath)) ?? candidates[0]
}

/** New PackageVariant files go next to the PackageVariantSet's file (the package root when it is not an item). */
function directoryOf(pvsItem: KubeObject | undefined): string {
  const path = pvsItem?.path ?? ''
  const slash = path.lastIndexOf('/')
  return slash < 0 ? '' : path.slice(0, slash + 1)
}

function summaryMessage(pvs: PackageVariantSet, total: number, s: ReconcileSummary): string {
  return `PackageVariantSet ${JSON.stringify(pvs.name)}: ${total} PackageVariant(s): ${s.created.length} created, ${s.updated.length} updated, ${s.unchanged.length} unchanged, ${s.deleted.length} deleted`
}
