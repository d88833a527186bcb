/**
 * `kpt-variants render`: the I/O shell around the pure core. Reads the fleet
 * and the upstream repositories, plans the variants, renders them (on every
 * core: the main thread and worker threads each take a share), checks
 * dependencies per downstream repository, writes each changed package
 * atomically, and deletes (or orphans) packages whose PackageVariant is gone.
 * One variant's failure is recorded and the run goes on.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { Worker } from 'node:worker_threads'
import { KubeObject } from '../functions/krm/index.js'
import { deleteAbandoned } from './deletions.js'
import { checkDependencies } from './dependencies.js'
import type { BoundPackage } from './dependencies.js'
import { buildFleet } from './fleet/fleet.js'
import type { Fleet } from './fleet/fleet.js'
import { loadFleetDirectory } from './fleet/load.js'
import type { ConflictPolicy } from './merge/update.js'
import { DirectoryWriter } from './output/directory.js'
import { planFleet } from './plan.js'
import type { FleetPlan, Shard } from './plan.js'
import { VariantContext } from './render-variant.js'
import type { Pending } from './render-variant.js'
import { sortReports } from './report/report.js'
import type { RunReport, VariantReport } from './report/report.js'
import { GitSources, indexUpstreams } from './upstream/upstreams.js'

/** The settings of one render, after option parsing. */
export interface RenderSettings {
  fleetDir: string
  outDir: string
  dryRun: boolean
  diff: boolean
  onConflict: ConflictPolicy
  shard?: Shard
  allowExec: boolean
  /** Threads rendering variants (default: the machine's cores); the output is the same for any number. */
  threads?: number
  /** kpt runs here (relative `exec:` paths resolve against it). */
  cwd: string
  env: Readonly<Record<string, string | undefined>>
}

/** Progress callbacks (the progress bar). */
export interface RenderProgress {
  start(total: number): void
  advance(report: VariantReport): void
}

/** Below this many variants per thread, more threads cost more than they save. */
const variantsPerThread = 64

/** Renders a fleet directory into an output directory (or previews it with `dryRun`). */
export async function renderFleet(settings: RenderSettings, progress?: RenderProgress): Promise<RunReport> {
  const run = await startRun(settings)
  try {
    const { fleet, plan } = run
    // Workers only for a fleet big enough to share; each sets up the same run (load, upstreams, plan) itself.
    const count = sharesOf(plan.variants.length, Math.max(1, settings.threads ?? availableParallelism()))
    const workers = Array.from({ length: count - 1 }, (_, i) => startWorker(settings, i + 1, count, (p) => progress?.advance(p.report)))
    const report: RunReport = { dryRun: settings.dryRun, variants: [], problems: fleet.problems.map((p) => `${p.file}: ${p.message}`) }
    for (const failure of plan.failures) {
      const failed: VariantReport = { subject: failure.subject, status: 'failed', reasons: [failure.message], warnings: [], conflicts: [] }
      if (failure.downstream) failed.path = failure.downstream
      report.variants.push(failed)
    }
    progress?.start(plan.variants.length)
    if (!settings.dryRun) run.writer.sweepStaleStaging()
    const mine = await renderShare(run, 0, count, (p) => progress?.advance(p.report))
    const pending = [...mine, ...(await Promise.all(workers)).flat()].sort((a, b) => a.order - b.order)
    checkAndWrite(pending, fleet, run.writer, settings.dryRun)
    report.variants.push(...pending.map((p) => p.report))
    deleteAbandoned(plan, fleet, report, run.writer, { outDir: run.outDir, dryRun: settings.dryRun, diff: settings.diff, ...(settings.shard ? { shard: settings.shard } : {}) })
    return { ...report, variants: sortReports(report.variants) }
  } finally {
    run.close()
  }
}

/** What every thread sets up the same way: the fleet, its upstreams and the plan. */
export interface Run {
  settings: RenderSettings
  outDir: string
  fleet: Fleet
  plan: FleetPlan
  sources: GitSources
  writer: DirectoryWriter
  scratch: string
  /** Removes the scratch directory and, on the main thread, every thread's staging directory. */
  close(): void
}

/** Loads the fleet, lists the upstream revisions and plans; deterministic, so every thread gets the same plan. */
export async function startRun(settings: RenderSettings, thread = 0): Promise<Run> {
  const fleetDir = resolve(settings.cwd, settings.fleetDir)
  const outDir = resolve(settings.cwd, settings.outDir)
  const scratch = mkdtempSync(join(tmpdir(), 'kpt-variants-'))
  const writer = new DirectoryWriter(outDir, thread)
  try {
    const fleet = buildFleet(loadFleetDirectory(fleetDir))
    const sources = new GitSources(fleetDir, scratch)
    const plan = planFleet(fleet, await indexUpstreams(fleet, sources), settings.shard)
    return {
      settings,
      outDir,
      fleet,
      plan,
      sources,
      writer,
      scratch,
      close() {
        // A worker's staged packages stay until the main thread has committed them.
        if (thread === 0) writer.close()
        rmSync(scratch, { recursive: true, force: true })
      },
    }
  } catch (err) {
    rmSync(scratch, { recursive: true, force: true })
    throw err
  }
}

/** How many threads share `variants`: at most `threads`, and few enough that each gets a worthwhile share. */
export function sharesOf(variants: number, threads: number): number {
  return Math.max(1, Math.min(threads, Math.floor(variants / variantsPerThread)))
}

/** Renders share `index` of `count` of the planned variants (every count-th one), in plan order; none when `index >= count`. */
export async function renderShare(run: Run, index: number, count: number, onDone: (pending: Pending) => void): Promise<Pending[]> {
  const context = new VariantContext(run.fleet, run.sources, run.settings, run.writer, run.scratch)
  const done: Pending[] = []
  if (index >= count) return done
  for (let i = index; i < run.plan.variants.length; i += count) {
    const pending = await context.render(run.plan.variants[i]!)
    pending.order = i
    done.push(pending)
    onDone(pending)
  }
  return done
}

/** A pending variant as a worker posts it: dependency objects as YAML text. */
export interface PostedPending extends Omit<Pending, 'dependencies'> {
  dependencies: string[]
}

/** Starts worker `index` of `threads`; it renders its share (if the plan gives it one) and resolves to the results. */
function startWorker(settings: RenderSettings, index: number, threads: number, onDone: (pending: Pending) => void): Promise<Pending[]> {
  return new Promise((resolvePending, reject) => {
    const worker = new Worker(new URL('./render-worker.js', import.meta.url), { workerData: { settings, index, threads } })
    let result: Pending[] | undefined
    worker.on('message', (message: { type: 'done'; pending: PostedPending[] } | { type: 'progress'; pending: PostedPending }) => {
      if (message.type === 'progress') onDone(revive(message.pending))
      else result = message.pending.map(revive)
    })
    worker.on('error', reject)
    worker.on('exit', (code) => (result ? resolvePending(result) : reject(new Error(`render worker ${index} exited with code ${code}`))))
  })
}

function revive(posted: PostedPending): Pending {
  return { ...posted, dependencies: posted.dependencies.map((text, i) => KubeObject.fromItemSource(text, i)) }
}

/** Runs the dependency check over the rendered packages, then writes (or discards) each staged one. */
function checkAndWrite(pending: Pending[], fleet: Fleet, writer: DirectoryWriter, dryRun: boolean): void {
  const bound: BoundPackage[] = pending
    .filter((p) => p.report.status !== 'failed' && p.dependencies.length > 0)
    .map((p) => ({ id: p.path, repo: p.path.slice(0, p.path.indexOf('/')), objects: p.dependencies }))
  const verdicts = checkDependencies(bound, fleet.objects)
  for (const p of pending) {
    const verdict = verdicts.get(p.path)
    if (verdict) {
      p.report.warnings.push(...verdict.warnings)
      if (verdict.errors.length > 0) {
        p.report.status = 'failed'
        p.report.reasons.push(...verdict.errors)
        delete p.report.diff
      }
    }
    if (!p.staged) continue
    if (p.report.status === 'failed' || dryRun) writer.discard(p.staged)
    else writer.commit(p.path, p.staged)
  }
}
