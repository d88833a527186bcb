/**
 * `kpt-variants render`, one run from start to end:
 *
 *   quiet run?  (quiet-run.ts: nothing can have changed, report the last run)
 *   set up      (setup.ts: load the fleet, list upstream revisions, plan, open the output)
 *   render      (render-share.ts on this thread, threads.ts on the others: each variant
 *                read from the output, rendered, staged)
 *   check       (../dependencies/run-phase.ts: per downstream repository, over every package bound for it)
 *   gate        (publish-gate.ts: what --git --publish may publish, what --out may write, as rollouts allow)
 *   commit      (the output: rename staged packages into place, or push drafts and publish)
 *   remove      (abandoned packages deleted or orphaned)
 *   record      (failures for status, the record of renders, the quiet run's record)
 *
 * One variant's failure is recorded and the run goes on.
 */
import { existsSync, opendirSync, rmSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { listYamlFiles } from '../../functions/krm/main.js'
import { quietRunFile } from '../cache/layout.js'
import { restats, stages } from '../output/output.js'
import type { Removal, StagedChange, StoredPackage } from '../output/output.js'
import { abandonment } from '../plan/abandoned.js'
import type { Abandonment } from '../plan/abandoned.js'
import type { FleetPlan } from '../plan/plan.js'
import { leavesDependencies, scopedAbandonment } from '../plan/scope.js'
import type { RenderProgress } from '../report/progress.js'
import { sortReports } from '../report/report.js'
import type { RunReport, VariantReport } from '../report/report.js'
import { upstreamIndexDigest } from '../upstream/upstreams.js'
import type { UpstreamPins } from '../upstream/upstreams.js'
import { holdMassDeletions } from './deletion-guard.js'
import { resolveDependencies } from '../dependencies/run-phase.js'
import { gateRender } from './publish-gate.js'
import { VariantContext } from './render-variant.js'
import type { Pending } from './render-variant.js'
import type { MemoEntry } from './memo.js'
import { quietRunApplies, replayQuietRun, saveQuietRecord } from './quiet-run.js'
import { renderShare, sharesOf } from './render-share.js'
import type { RenderSettings } from './settings.js'
import { setUpRun, sharedRepositories } from './setup.js'
import type { Planned, Run, RunSetup } from './setup.js'
import { defaultThreads, startRenderThread } from './threads.js'
import type { RenderThread } from './threads.js'
import { stopPoint } from '../util/stop-point.js'

/** Fleets of this many bytes of YAML or more start their render threads before planning (~150 variants' worth of objects). */
const earlyStartBytes = 64 * 1024

/**
 * Renders a fleet into its output (or previews it with `dryRun`); `onPlan`
 * sees the main thread's plan (`--cluster` writes status from it); `known`:
 * the caller's loadAndPlan of these settings (the controller's, which chose
 * the scope from it), used on this thread instead of planning again.
 */
export async function renderFleet(
  settings: RenderSettings,
  progress?: RenderProgress,
  onPlan?: (plan: FleetPlan) => void,
  known?: Planned,
): Promise<RunReport> {
  const quiet = quietRunApplies(settings, onPlan !== undefined) ? quietRunFile(settings.memo!) : undefined
  const replay = quiet ? await replayQuietRun(settings, quiet) : undefined
  // Nothing can have changed since a run that changed nothing: its report stands.
  if (replay?.report) return replayed(replay.report, progress)
  const bar = sharedProgress(progress)
  const threads = threadsFor(settings)
  // A big fleet's threads set up their run while this thread sets up its own.
  const early = threads.startEarly ? startThreads(settings, threads.count - 1, threads.count, bar.advance) : []
  const run = await setUpMainRun(settings, { taken: replay?.digests, opened: replay?.sources, known }, early)
  try {
    const others = await shareOut(run, threads, early, bar.advance, onPlan)
    const report = plannedReport(run)
    const rendered = await renderShares(run, threads.count, others, bar)
    // Abandoned packages go, unless a set would lose too many; the dependency check sees what stays.
    const beside = await otherPackages(run, rendered, report)
    const { pending, removals } = await checkPackages(run, rendered, beside, report)
    await commitChanges(run, pending, report)
    await removePackages(run, removals, report)
    // Each variant's last failure, for status.
    if (!settings.dryRun) run.output.record(report)
    await stopPoint('recorded')
    await recordRenders(run, pending)
    const sorted = { ...report, variants: sortReports(report.variants) }
    if (quiet) recordQuietRun(run, quiet, sorted, pending, beside.present)
    return sorted
  } finally {
    run.close()
  }
}

/** A quiet run's report, replayed: the progress bar counts its variants as done. */
function replayed(report: RunReport, progress?: RenderProgress): RunReport {
  progress?.start(report.variants.length)
  for (const rendered of report.variants) progress?.advance(rendered)
  return report
}

/** The progress bar every thread advances; a thread's progress can arrive before this thread has planned (and started the bar). */
interface SharedProgress {
  readonly advance: (report: VariantReport) => void
  start(variants: number): void
}

function sharedProgress(progress?: RenderProgress): SharedProgress {
  let started = false
  const early: VariantReport[] = []
  return {
    advance: (report) => void (started ? progress?.advance(report) : early.push(report)),
    start(variants) {
      progress?.start(variants)
      started = true
      for (const r of early.splice(0)) progress?.advance(r)
    },
  }
}

/** How many threads render, and whether they start before this thread has planned. */
interface ThreadCount {
  count: number
  startEarly: boolean
}

function threadsFor(settings: RenderSettings): ThreadCount {
  const bytes = settings.threads === 1 ? 0 : fleetBytes(resolve(settings.cwd, settings.fleetDir))
  const recorded = settings.memo !== undefined && !settings.force && existsSync(settings.memo)
  const writesAll = !settings.git && !settings.dryRun && isEmptyDirectory(resolve(settings.cwd, settings.outDir))
  const count = Math.max(1, settings.threads ?? defaultThreads({ fleetBytes: bytes, recorded, writesAll }))
  // A big fleet's threads start at once and set up their run (load, upstreams, plan) while this
  // thread sets up its own. With --git they need the repositories this thread opens first.
  return { count, startEarly: count > 1 && !settings.git && bytes >= earlyStartBytes }
}

/** Starts render threads 1 to `n` of `threads`. */
function startThreads(
  settings: RenderSettings,
  n: number,
  threads: number,
  advance: (report: VariantReport) => void,
  pins?: UpstreamPins,
): RenderThread[] {
  return Array.from({ length: n }, (_, i) => startRenderThread(settings, i + 1, threads, advance, pins))
}

/** Sets up this thread's run; threads started early are stopped when it cannot be (they wait for the upstream refs it would have listed). */
async function setUpMainRun(settings: RenderSettings, setup: RunSetup, early: readonly RenderThread[]): Promise<Run> {
  try {
    return await setUpRun(settings, setup)
  } catch (err) {
    for (const thread of early) thread.stop()
    await Promise.allSettled(early.map((t) => t.done))
    throw err
  }
}

/**
 * Shares the run out: every thread lists the upstream revisions at the refs
 * this one listed (see GitSources); threads not started early start now,
 * with the repositories this thread opened. Returns the other threads.
 */
async function shareOut(
  run: Run,
  threads: ThreadCount,
  early: RenderThread[],
  advance: (report: VariantReport) => void,
  onPlan?: (plan: FleetPlan) => void,
): Promise<RenderThread[]> {
  const pins = await run.sources.pins()
  for (const thread of early) thread.pin(pins)
  onPlan?.(run.plan)
  if (threads.startEarly) return early
  // Threads only for a fleet big enough to share (each computes the same count from the same plan).
  const count = sharesOf(run.plan.variants.length, threads.count)
  const repositories = sharedRepositories(run)
  const shared = repositories ? { ...run.settings, repositories } : run.settings
  return startThreads(shared, count - 1, threads.count, advance, pins)
}

/** The report as planning leaves it: the fleet's problems, the sets' targets that matched nothing, what could not be planned. */
function plannedReport({ settings, fleet, plan }: Run): RunReport {
  const report: RunReport = {
    dryRun: settings.dryRun,
    variants: [],
    problems: fleet.problems.map((p) => `${p.file}: ${p.message}`),
  }
  const emptyMatches = [...plan.emptyMatches].flatMap(([set, messages]) =>
    messages.map((m) => `PackageVariantSet ${set}: ${m}`),
  )
  if (emptyMatches.length > 0) report.warnings = emptyMatches
  for (const failure of plan.failures) {
    const failed: VariantReport = {
      subject: failure.subject,
      status: 'failed',
      reasons: [{ code: failure.code, message: failure.message }],
      warnings: [],
      conflicts: [],
    }
    if (failure.downstream) failed.path = failure.downstream
    report.variants.push(failed)
  }
  return report
}

/** Renders this thread's share, and gathers the other threads' (each variant rendered and staged), in plan order. */
async function renderShares(
  run: Run,
  threads: number,
  others: readonly RenderThread[],
  bar: SharedProgress,
): Promise<Pending[]> {
  bar.start(run.plan.variants.length)
  if (!run.settings.dryRun && stages(run.output)) run.output.prepare()
  const mine = await renderShare(run, 0, threads, (p) => bar.advance(p.report))
  const rendered = [...mine, ...(await Promise.all(others.map((t) => t.done))).flat()].sort((a, b) => a.order - b.order)
  await stopPoint('rendered')
  return rendered
}

/** How the dependency check runs. */
type CheckMode = Parameters<typeof resolveDependencies>[5]

/** The output's packages that are not this run's variants, those abandoned among them, and whether the dependency check runs. */
interface Beside {
  present: Map<string, StoredPackage>
  abandoned: Removal[]
  check?: CheckMode
}

/** The output's other packages: abandoned ones go, and with the rest they are what the repositories hold besides. */
async function otherPackages(run: Run, rendered: readonly Pending[], report: RunReport): Promise<Beside> {
  const { settings, output } = run
  const abandoned = scopedAbandonment(abandonment(run.plan, run.fleet, report, settings.shard), settings.scope)
  const mode = settings.dependencies ?? 'install'
  const renderedPaths = new Set(rendered.filter((p) => p.report.status !== 'failed').map((p) => p.path))
  // A scoped run whose packages declare nothing to the dependency check, before or after, leaves the repositories' plans alone.
  const check = mode !== 'off' && !(settings.scope && leavesDependencies(settings.scope, rendered))
  const only = settings.scope && !check ? settings.scope.packages : undefined
  const present =
    abandoned || check ? await output.otherPackages(renderedPaths, only) : new Map<string, StoredPackage>()
  return {
    present,
    abandoned: abandoned ? abandonedRemovals(abandoned, present) : [],
    ...(check ? { check: mode } : {}),
  }
}

/**
 * Holds a set that would lose too many packages whole (its packages stay,
 * with what they need), then runs the dependency check over every package
 * bound for each repository. Returns the packages to commit and to remove;
 * `beside.present` keeps those that stay.
 */
async function checkPackages(
  run: Run,
  rendered: readonly Pending[],
  { present, abandoned, check }: Beside,
  report: RunReport,
): Promise<{ pending: Pending[]; removals: Removal[] }> {
  const { removals, variants, held } = await holdMassDeletions(run, rendered, abandoned, present, report)
  for (const r of removals) if (!r.orphan) present.delete(r.report.path!)
  const dependencies = !check
    ? { rendered: [], removals: [] }
    : await resolveDependencies(
        run,
        new VariantContext(run.fleet, run.sources, run.settings, run.output, run.scratch, run.memo),
        variants,
        present,
        report,
        check,
      )
  for (const r of dependencies.removals) present.delete(r.report.path!)
  // (resolveDependencies settled its packages' staging: one that could not be staged failed with what needs it.)
  const pending = [...variants, ...dependencies.rendered]
  report.variants.push(...pending.map((p) => p.report), ...held.map((p) => p.report))
  return { pending, removals: [...removals, ...dependencies.removals] }
}

/**
 * Commits what may be published now (--git --publish), or with --out
 * written, as rollouts and the publish policy allow; with --git --publish,
 * the drafts the gate lets go are published in the same write, with the
 * drafts they need.
 */
async function commitChanges(run: Run, pending: readonly Pending[], report: RunReport): Promise<void> {
  const { settings, output } = run
  const gate = await gateRender(run, pending, report)
  const changes: StagedChange[] = []
  for (const p of pending) {
    if (!p.staged) continue
    const held = !settings.git && gate?.held.has(p.path) === true
    if (p.report.status !== 'failed' && !held) changes.push({ report: p.report, staged: p.staged })
    else if (stages(output)) output.discard(p.staged)
    // A change held back is rendered again next run, not skipped as written.
    if (held) delete p.memo
  }
  report.variants.push(...(await output.commit(changes, settings.dryRun ? undefined : gate?.publish)))
  await gate?.settle()
  await stopPoint('committed')
}

/** Deletes or orphans the packages no variant wants any more (with --git --publish, published as --publish-deletions says). */
async function removePackages(run: Run, removals: readonly Removal[], report: RunReport): Promise<void> {
  const { settings } = run
  const publish = settings.git?.publish
    ? { orphans: true, deletions: settings.git.publishDeletions === true }
    : undefined
  const removed = await run.output.remove(removals, {
    dryRun: settings.dryRun,
    diff: settings.diff,
    ...(publish ? { publish } : {}),
  })
  report.variants.push(...removed.map((r) => r.report))
}

/** What was written (or found unchanged) is recorded for the next run; failures are rendered again. */
async function recordRenders({ memo, settings, output }: Run, pending: readonly Pending[]): Promise<void> {
  if (!memo || settings.dryRun) return
  // Publishing moved the packages it published, those skipped as unchanged too: their digests are taken again.
  const published = settings.git?.publish === true
  const unstated = pending.filter(
    (p) => p.memo && (p.memo.stat === undefined || (published && p.report.published)) && p.report.status !== 'failed',
  )
  if (restats(output)) await output.restat(unstated.map((p) => p.path))
  for (const p of unstated) setStat(p.memo!, output.statDigest(p.path))
  memo.save(
    new Map(
      pending.map((p) => [
        p.path,
        p.report.status !== 'failed'
          ? p.memo
          : p.dependencyFailure && p.memo
            ? { ...p.memo, held: true as const }
            : undefined,
      ]),
    ),
  )
}

/**
 * The quiet run's record (quiet-run.ts): what this run was made from, for the
 * next to report it again if nothing changed; none where a Rollout held
 * anything back: what it holds turns on the time and the targets' health,
 * which the quiet run's inputs leave out.
 */
function recordQuietRun(
  run: Run,
  quiet: string,
  report: RunReport,
  pending: readonly Pending[],
  present: ReadonlyMap<string, StoredPackage>,
): void {
  if (report.rollouts) rmSync(quiet, { force: true })
  else
    saveQuietRecord(quiet, {
      settings: run.settings,
      fleetDigest: run.fleet.digest,
      base: run.fleet.base,
      upstreams: run.upstreams.repositories,
      upstreamDigest: upstreamIndexDigest(run.upstreams.index),
      // Every package of the output, those no variant renders too (dependencies, packages installed on purpose).
      packages: new Map([
        ...pending.map((p): [string, string | undefined] => [p.path, p.memo?.stat]),
        ...[...present.keys()].map((path): [string, string | undefined] => [path, run.output.statDigest(path)]),
      ]),
      report,
    })
}

/** The removals of abandoned packages among the output's other packages (with --git, one only drafted is judged by its draft). */
function abandonedRemovals(abandoned: Abandonment, others: ReadonlyMap<string, StoredPackage>): Removal[] {
  const removals: Removal[] = []
  for (const [path, stored] of others) {
    const files = stored.published ?? (stored.draft && stored.draft.size > 0 ? stored.draft : undefined)
    if (abandoned.claimed(path) || !files) continue
    const entry = abandoned.entry(path, files)
    if (entry) removals.push({ report: entry, stored, orphan: entry.status === 'orphaned' })
  }
  return removals
}

function setStat(entry: MemoEntry, stat: string | undefined): void {
  if (stat !== undefined) entry.stat = stat
}

/** True when `dir` is missing or holds nothing. */
function isEmptyDirectory(dir: string): boolean {
  let handle
  try {
    handle = opendirSync(dir)
  } catch {
    return true
  }
  try {
    return handle.readSync() === null
  } finally {
    handle.closeSync()
  }
}

/** The size of a fleet directory's YAML files: a cheap estimate of its size before it is read. */
function fleetBytes(fleetDir: string): number {
  try {
    return listYamlFiles(fleetDir).reduce((sum, file) => sum + statSync(join(fleetDir, file)).size, 0)
  } catch {
    return 0
  }
}
