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
import { holdMassDeletions } from './deletion-guard.js'
import { resolveDependencies } from '../dependencies/run-phase.js'
import { gateRender } from './publish-gate.js'
import { VariantContext } from './render-variant.js'
import type { MemoEntry } from './memo.js'
import { quietRunApplies, replayQuietRun, saveQuietRecord } from './quiet-run.js'
import { renderShare, sharesOf } from './render-share.js'
import type { RenderSettings } from './settings.js'
import { setUpRun, sharedRepositories } from './setup.js'
import type { Planned, Run } from './setup.js'
import { defaultThreads, startRenderThread } from './threads.js'
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
  if (replay?.report) {
    const rendered = replay.report.variants
    progress?.start(rendered.length)
    for (const report of rendered) progress?.advance(report)
    return replay.report
  }
  const bytes = settings.threads === 1 ? 0 : fleetBytes(resolve(settings.cwd, settings.fleetDir))
  const recorded = settings.memo !== undefined && !settings.force && existsSync(settings.memo)
  const writesAll = !settings.git && !settings.dryRun && isEmptyDirectory(resolve(settings.cwd, settings.outDir))
  const threads = Math.max(1, settings.threads ?? defaultThreads({ fleetBytes: bytes, recorded, writesAll }))
  // A thread's progress can arrive before this thread has planned (and started the bar).
  let planned = false
  const early: VariantReport[] = []
  const advance = (report: VariantReport) => (planned ? progress?.advance(report) : early.push(report))
  // A big fleet's threads start at once and set up their run (load, upstreams, plan) while this
  // thread sets up its own. With --git they need the repositories this thread opens first.
  const startEarly = threads > 1 && !settings.git && bytes >= earlyStartBytes
  let others = startEarly
    ? Array.from({ length: threads - 1 }, (_, i) => startRenderThread(settings, i + 1, threads, advance))
    : []
  let run: Run
  try {
    run = await setUpRun(settings, { taken: replay?.digests, opened: replay?.sources, known })
  } catch (err) {
    // Threads started early wait for the upstream refs this thread would have listed.
    for (const thread of others) thread.stop()
    await Promise.allSettled(others.map((t) => t.done))
    throw err
  }
  try {
    // Every thread lists the upstream revisions at the refs this one listed (see GitSources).
    const pins = await run.sources.pins()
    for (const thread of others) thread.pin(pins)
    const { fleet, plan, output } = run
    onPlan?.(plan)
    // Threads only for a fleet big enough to share (each computes the same count from the same plan).
    const count = sharesOf(plan.variants.length, threads)
    const repositories = sharedRepositories(run)
    const shared = repositories ? { ...settings, repositories } : settings
    if (!startEarly)
      others = Array.from({ length: count - 1 }, (_, i) => startRenderThread(shared, i + 1, threads, advance, pins))
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
    progress?.start(plan.variants.length)
    planned = true
    for (const r of early.splice(0)) progress?.advance(r)
    if (!settings.dryRun && stages(output)) output.prepare()
    const mine = await renderShare(run, 0, threads, (p) => advance(p.report))
    const rendered = [...mine, ...(await Promise.all(others.map((t) => t.done))).flat()].sort(
      (a, b) => a.order - b.order,
    )
    await stopPoint('rendered')
    // The output's other packages: abandoned ones go, and with the rest they are what the repositories hold besides.
    const abandoned = scopedAbandonment(abandonment(plan, fleet, report, settings.shard), settings.scope)
    const mode = settings.dependencies ?? 'install'
    const renderedPaths = new Set(rendered.filter((p) => p.report.status !== 'failed').map((p) => p.path))
    // A scoped run whose packages declare nothing to the dependency check, before or after, leaves the repositories' plans alone.
    const check = mode !== 'off' && !(settings.scope && leavesDependencies(settings.scope, rendered))
    const only = settings.scope && !check ? settings.scope.packages : undefined
    const present =
      abandoned || check ? await output.otherPackages(renderedPaths, only) : new Map<string, StoredPackage>()
    // A set that would lose too many packages is held whole (its packages stay, with what they need).
    const { removals, variants, held } = await holdMassDeletions(
      run,
      rendered,
      abandoned ? abandonedRemovals(abandoned, present) : [],
      present,
      report,
    )
    for (const r of removals) if (!r.orphan) present.delete(r.report.path!)
    const dependencies = !check
      ? { rendered: [], removals: [] }
      : await resolveDependencies(
          run,
          new VariantContext(fleet, run.sources, settings, output, run.scratch, run.memo),
          variants,
          present,
          report,
          mode,
        )
    for (const r of dependencies.removals) present.delete(r.report.path!)
    // (resolveDependencies settled its packages' staging: one that could not be staged failed with what needs it.)
    const pending = [...variants, ...dependencies.rendered]
    report.variants.push(...pending.map((p) => p.report), ...held.map((p) => p.report))
    // What may be published now (--git --publish), or with --out written, as rollouts and the publish policy allow.
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
    // With --git --publish, the drafts the gate lets go are published in the same write, with the drafts they need.
    report.variants.push(...(await output.commit(changes, settings.dryRun ? undefined : gate?.publish)))
    await gate?.settle()
    await stopPoint('committed')
    const publish = settings.git?.publish
      ? { orphans: true, deletions: settings.git.publishDeletions === true }
      : undefined
    const removed = await output.remove([...removals, ...dependencies.removals], {
      dryRun: settings.dryRun,
      diff: settings.diff,
      ...(publish ? { publish } : {}),
    })
    report.variants.push(...removed.map((r) => r.report))
    if (!settings.dryRun) output.record(report)
    await stopPoint('recorded')
    // What was written (or found unchanged) is recorded for the next run; failures are rendered again.
    if (run.memo && !settings.dryRun) {
      // Publishing moved the packages it published, those skipped as unchanged too: their digests are taken again.
      const published = settings.git?.publish === true
      const unstated = pending.filter(
        (p) =>
          p.memo && (p.memo.stat === undefined || (published && p.report.published)) && p.report.status !== 'failed',
      )
      if (restats(output)) await output.restat(unstated.map((p) => p.path))
      for (const p of unstated) setStat(p.memo!, output.statDigest(p.path))
      run.memo.save(
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
    const sorted = { ...report, variants: sortReports(report.variants) }
    // What a Rollout holds back turns on the time and the targets' health, which the quiet run's inputs leave out.
    if (quiet && sorted.rollouts) rmSync(quiet, { force: true })
    else if (quiet)
      saveQuietRecord(quiet, {
        settings,
        fleetDigest: fleet.digest,
        base: fleet.base,
        upstreams: run.upstreams.repositories,
        upstreamDigest: upstreamIndexDigest(run.upstreams.index),
        // Every package of the output, those no variant renders too (dependencies, packages installed on purpose).
        packages: new Map([
          ...pending.map((p): [string, string | undefined] => [p.path, p.memo?.stat]),
          ...[...present.keys()].map((path): [string, string | undefined] => [path, output.statDigest(path)]),
        ]),
        report: sorted,
      })
    return sorted
  } finally {
    run.close()
  }
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
