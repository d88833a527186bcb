/**
 * `kpt-variants render`: the I/O shell around the pure core. Reads the fleet
 * and the upstream repositories, plans the variants, renders them (on every
 * core: the main thread and worker threads each take a share), checks
 * dependencies per downstream repository, writes each changed package
 * atomically, and deletes (or orphans) packages whose PackageVariant is gone.
 * One variant's failure is recorded and the run goes on.
 */
import { existsSync, mkdtempSync, opendirSync, rmSync, statSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parentPort, Worker, workerData } from 'node:worker_threads'
import { KubeObject } from '../functions/krm/index.js'
import { listYamlFiles } from '../functions/krm/main.js'
import { deleteAbandoned } from './deletions.js'
import { checkDependencies } from './dependencies.js'
import type { BoundPackage } from './dependencies.js'
import { buildFleet } from './fleet/fleet.js'
import type { Fleet } from './fleet/fleet.js'
import { loadFleetDirectory } from './fleet/load.js'
import type { ConflictPolicy } from './merge/update.js'
import { DirectoryWriter } from './output/directory.js'
import { DirectoryDownstreams, GitDownstreams } from './output/downstreams.js'
import type { Downstreams } from './output/downstreams.js'
import { committerFrom, GitRepositories } from './output/git/git-run.js'
import type { GitSettings, SharedRepositories } from './output/git/git-run.js'
import { recordRun } from './output/git/last-run.js'
import { planFleet } from './plan.js'
import type { FleetPlan, Shard } from './plan.js'
import { digestInBackground } from './output/stat-thread.js'
import { RenderMemo } from './render-memo.js'
import type { MemoEntry } from './render-memo.js'
import { VariantContext } from './render-variant.js'
import type { Pending } from './render-variant.js'
import { sortReports } from './report/report.js'
import { quietRecordFile, quietRunApplies, replayQuietRun, saveQuietRecord } from './quiet-run.js'
import type { RunReport, VariantReport } from './report/report.js'
import { cloneDirectory } from './upstream/git-source.js'
import type { UpstreamCache } from './upstream/git-source.js'
import { GitSources, listUpstreams, upstreamIndexDigest, upstreamRepositories } from './upstream/upstreams.js'
import type { RepositoryLocation, UpstreamIndex, UpstreamPins } from './upstream/upstreams.js'

/** The settings of one render, after option parsing. */
export interface RenderSettings {
  fleetDir: string
  /** The fleet's identity for the records kept between runs (default: the fleet directory); `--cluster` names the server, as its snapshot directory changes. */
  fleetId?: string
  /** Where relative repository paths resolve (default: the fleet directory). */
  repositoryBase?: string
  /** `group/Kind` of cluster-scoped kinds beyond the built-in ones (an API server's discovery). */
  clusterScoped?: string[]
  outDir: string
  dryRun: boolean
  diff: boolean
  onConflict: ConflictPolicy
  shard?: Shard
  allowExec: boolean
  /** `skip`: a pipeline with `image:` functions other than ours is not run (no container engine); default `run`. */
  imageFunctions?: 'run' | 'skip'
  /** The namespace of fleet objects that have none (`--namespace`, default `default`), as kubectl apply would give them. */
  namespace?: string
  /** `--git`: propose each package as a draft in its downstream repository instead of writing `outDir`. */
  git?: GitSettings
  /** With `git`: the repositories the main thread opened, as every thread reads them (set by the main thread). */
  repositories?: SharedRepositories
  /** Where remote upstream repositories are kept between runs (fetched once a run); none clones them afresh each run. */
  upstreamCache?: UpstreamCache
  /** The record of earlier renders (render-memo.ts) to skip unchanged variants with, and to update; none renders everything. */
  memo?: string
  /** Threads rendering variants (default: defaultThreads()); the output is the same for any number. */
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

/** Fleets of this many bytes of YAML or more (about 3,000 variants' worth of objects) may be worth more render threads. */
const manyThreadsBytes = 1024 * 1024

/** What a run without `--threads` will mostly do, which decides how many render threads pay. */
export interface ThreadNeeds {
  /** The size of the fleet's YAML (see fleetBytes). */
  fleetBytes: number
  /** A record of an earlier run exists: most variants will be skipped. */
  recorded: boolean
  /** Every package goes to disk through a staging thread: a first render into an empty output directory. */
  writesAll: boolean
}

/**
 * Render threads when `--threads` is not given. Every render thread loads and
 * plans the whole fleet and warms up its own compiled code, so more render
 * threads pay only when there is much to render: a big fleet with no record
 * of an earlier run (a first render, or `--force`). Each render thread that
 * writes packages has a staging thread beside it on another core, so a first
 * render into an empty directory takes one render thread per two CPUs.
 * Measured on 2 CPUs (tmpfs), two render threads against one: 10,000 new
 * variants 22.7 s / 19.2 s, 10,000 with --force over their output 35.4 s / 59.5 s.
 */
export function defaultThreads(needs: ThreadNeeds, cpus = availableParallelism()): number {
  if (needs.recorded || needs.fleetBytes < manyThreadsBytes) return 1
  return Math.max(1, needs.writesAll ? Math.floor(cpus / 2) : cpus)
}

/** Fleets of this many bytes of YAML or more start their workers before planning (~150 variants' worth of objects). */
const earlyStartBytes = 64 * 1024

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

/**
 * Renders a fleet directory into an output directory (or previews it with
 * `dryRun`); `onPlan` sees the main thread's plan (`--cluster` writes status from it).
 */
export async function renderFleet(settings: RenderSettings, progress?: RenderProgress, onPlan?: (plan: FleetPlan) => void): Promise<RunReport> {
  const quiet = quietRunApplies(settings, onPlan !== undefined) ? quietRecordFile(settings.memo!) : undefined
  const replay = quiet ? await replayQuietRun(settings, quiet) : undefined
  if (replay?.report) {
    const rendered = replay.report.variants
    progress?.start(rendered.length)
    for (const report of rendered) progress?.advance(report)
    return replay.report
  }
  const bytes = settings.threads === 1 ? 0 : fleetBytes(resolve(settings.cwd, settings.fleetDir))
  const recorded = settings.memo !== undefined && existsSync(settings.memo)
  const writesAll = !settings.git && !settings.dryRun && isEmptyDirectory(resolve(settings.cwd, settings.outDir))
  const threads = Math.max(1, settings.threads ?? defaultThreads({ fleetBytes: bytes, recorded, writesAll }))
  // Worker progress can arrive before the main thread has planned (and started the bar).
  let planned = false
  const early: VariantReport[] = []
  const advance = (report: VariantReport) => (planned ? progress?.advance(report) : early.push(report))
  // A big fleet's workers start at once and set up their run (load, upstreams, plan) while the main
  // thread sets up its own. With --git they need the repositories the main thread opens first.
  const startEarly = threads > 1 && !settings.git && bytes >= earlyStartBytes
  let workers = startEarly ? Array.from({ length: threads - 1 }, (_, i) => startWorker(settings, i + 1, threads, advance)) : []
  let run: Run
  try {
    run = await startRun(settings, 0, replay?.digests, undefined, replay?.sources)
  } catch (err) {
    // Early workers wait for the upstream refs this thread would have listed.
    for (const worker of workers) worker.stop()
    await Promise.allSettled(workers.map((w) => w.done))
    throw err
  }
  try {
    // Every thread lists the upstream revisions at the refs this one listed (see GitSources).
    const pins = await run.sources.pins()
    for (const worker of workers) worker.pin(pins)
    const { fleet, plan } = run
    onPlan?.(plan)
    // Workers only for a fleet big enough to share (each computes the same count from the same plan).
    const count = sharesOf(plan.variants.length, threads)
    const shared = run.git ? { ...settings, repositories: run.git.shared } : settings
    if (!startEarly) workers = Array.from({ length: count - 1 }, (_, i) => startWorker(shared, i + 1, threads, advance, pins))
    const report: RunReport = { dryRun: settings.dryRun, variants: [], problems: fleet.problems.map((p) => `${p.file}: ${p.message}`) }
    for (const failure of plan.failures) {
      const failed: VariantReport = { subject: failure.subject, status: 'failed', reasons: [failure.message], warnings: [], conflicts: [] }
      if (failure.downstream) failed.path = failure.downstream
      report.variants.push(failed)
    }
    progress?.start(plan.variants.length)
    planned = true
    for (const r of early.splice(0)) progress?.advance(r)
    if (!settings.dryRun) run.writer.sweepStaleStaging()
    const mine = await renderShare(run, 0, threads, (p) => advance(p.report))
    const pending = [...mine, ...(await Promise.all(workers.map((w) => w.done))).flat()].sort((a, b) => a.order - b.order)
    const accepted = checkRenderedDependencies(pending, fleet)
    report.variants.push(...pending.map((p) => p.report))
    const shard = settings.shard ? { shard: settings.shard } : {}
    if (run.git) {
      const committer = committerFrom(settings.env)
      if (!settings.dryRun)
        await run.git.writeDrafts(
          accepted.map((p) => ({ report: p.report, files: p.files! })),
          committer,
        )
      await run.git.proposeRemovals(plan, fleet, report, { dryRun: settings.dryRun, diff: settings.diff, ...shard }, committer)
      if (settings.git?.publish && !settings.dryRun) await run.git.publish(report.variants, committer)
      if (!settings.dryRun) recordRun(settings.git!.cacheDir, settings.fleetId ?? resolve(settings.cwd, settings.fleetDir), report)
    } else {
      const written = new Set(accepted)
      for (const p of pending) {
        if (!p.staged) continue
        if (written.has(p)) run.writer.commit(p.path, p.staged)
        else run.writer.discard(p.staged)
      }
      deleteAbandoned(plan, fleet, report, run.writer, { outDir: run.outDir, dryRun: settings.dryRun, diff: settings.diff, ...shard })
    }
    // What was written (or found unchanged) is recorded for the next run; failures are rendered again.
    if (run.memo && !settings.dryRun) {
      // Publishing moved the packages it published, those skipped as unchanged too: their digests are taken again.
      const published = settings.git?.publish === true
      const unstated = pending.filter((p) => p.memo && (p.memo.stat === undefined || (published && p.report.published)) && p.report.status !== 'failed')
      await run.downstreams.restat?.(unstated.map((p) => p.path))
      for (const p of unstated) setStat(p.memo!, run.downstreams.statDigest?.(p.path))
      run.memo.save(new Map(pending.map((p) => [p.path, p.report.status === 'failed' ? undefined : p.memo])))
    }
    const sorted = { ...report, variants: sortReports(report.variants) }
    if (quiet)
      saveQuietRecord(quiet, {
        settings,
        fleetDigest: fleet.digest,
        base: fleet.base,
        upstreams: run.upstreams.repositories,
        upstreamDigest: upstreamIndexDigest(run.upstreams.index),
        packages: new Map(pending.map((p) => [p.path, p.memo?.stat])),
        report: sorted,
      })
    return sorted
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
  /** The upstream repositories listed, and what they listed. */
  upstreams: { repositories: RepositoryLocation[]; index: UpstreamIndex }
  sources: GitSources
  /** Stages and writes packages below `outDir`; with `--git` (packages go straight into git) it only names their paths. */
  writer: DirectoryWriter
  downstreams: Downstreams
  /** With `--git`, on the main thread: the downstream repositories, locked. */
  git?: GitRepositories
  scratch: string
  memo?: RenderMemo
  /** Removes the scratch directory and, on the main thread, every thread's staging directory. */
  close(): void
}

/**
 * Loads the fleet, lists the upstream revisions and plans; deterministic, so
 * every thread gets the same plan. `taken`: digests of package directories
 * already taken this run (by a quiet run's replay), by directory. `pinned`
 * (render threads): the refs the main thread listed, which this thread lists
 * too, without fetching again. `opened`: the upstream repositories that
 * replay opened.
 */
export async function startRun(
  settings: RenderSettings,
  thread = 0,
  taken: ReadonlyMap<string, string | undefined> = new Map(),
  pinned?: Promise<UpstreamPins | undefined>,
  opened?: GitSources,
): Promise<Run> {
  const fleetDir = resolve(settings.cwd, settings.fleetDir)
  const outDir = resolve(settings.cwd, settings.outDir)
  const scratch = mkdtempSync(join(tmpdir(), 'kpt-variants-'))
  const writer = new DirectoryWriter(settings.git ? join(settings.git.cacheDir, 'staging') : outDir, thread)
  let git: GitRepositories | undefined
  // The recorded packages' digests are taken on another thread while this one loads and plans (stat-thread.ts).
  const recorded = settings.memo ? RenderMemo.read(settings.memo) : undefined
  const recordedDirs = recorded && !settings.git && thread === 0 ? Object.keys(recorded).filter((path) => recorded[path]?.stat !== undefined) : []
  // Those a quiet run's replay took (quiet-run.ts) are not taken again.
  const digests = digestInBackground(recordedDirs.flatMap((path) => writer.packageDirInside(path) ?? []).filter((dir) => !taken.has(dir)))
  try {
    const origin = { ...(settings.repositoryBase ? { base: resolve(settings.cwd, settings.repositoryBase) } : {}), ...(settings.clusterScoped ? { clusterScoped: settings.clusterScoped } : {}) }
    const fleet = buildFleet(loadFleetDirectory(fleetDir), settings.namespace, origin)
    // The repositories a quiet run's check opened this run (the same base) are read as it listed them, not fetched again.
    const sources = opened?.base === fleet.base ? opened : new GitSources(fleet.base, cloneDirectory(settings.upstreamCache, scratch), pinned)
    const upstreams = upstreamRepositories(fleet)
    const index = await listUpstreams(upstreams, sources)
    let plan = planFleet(fleet, index, settings.shard)
    let downstreams: Downstreams = new DirectoryDownstreams(writer, new Map([...taken, ...((await digests) ?? [])]))
    if (settings.git) {
      if (!settings.repositories) git = await GitRepositories.open(fleet, plan, settings.git)
      const shared = settings.repositories ?? git!.shared
      plan = withoutUnavailable(plan, shared.unavailable)
      downstreams = new GitDownstreams(shared.snapshots)
    }
    const memoSettings = { allowExec: settings.allowExec, onConflict: settings.onConflict, namespace: settings.namespace ?? 'default', imageFunctions: settings.imageFunctions ?? 'run' }
    const memo = settings.memo ? RenderMemo.open(settings.memo, fleet, memoSettings, recorded) : undefined
    return {
      settings,
      outDir,
      fleet,
      plan,
      upstreams: { repositories: upstreams, index },
      ...(memo ? { memo } : {}),
      sources,
      writer,
      downstreams,
      ...(git ? { git } : {}),
      scratch,
      close() {
        // A worker's staged packages stay until the main thread has committed them.
        if (thread === 0) writer.close()
        downstreams.close?.()
        git?.close()
        rmSync(scratch, { recursive: true, force: true })
      },
    }
  } catch (err) {
    git?.close()
    rmSync(scratch, { recursive: true, force: true })
    throw err
  }
}

function setStat(entry: MemoEntry, stat: string | undefined): void {
  if (stat !== undefined) entry.stat = stat
}

/** How many threads share `variants`: at most `threads`, and few enough that each gets a worthwhile share. */
export function sharesOf(variants: number, threads: number): number {
  return Math.max(1, Math.min(threads, Math.floor(variants / variantsPerThread)))
}

/**
 * Renders share `index` of the planned variants when `threads` threads share
 * them (every count-th one, count from `sharesOf`), in plan order; none when
 * the plan gives this thread no share.
 */
export async function renderShare(run: Run, index: number, threads: number, onDone: (pending: Pending) => void): Promise<Pending[]> {
  const count = sharesOf(run.plan.variants.length, threads)
  const context = new VariantContext(run.fleet, run.sources, run.settings, run.writer, run.downstreams, run.scratch, run.memo)
  const done: Pending[] = []
  if (index >= count) return done
  const share = run.plan.variants.filter((_, i) => i % count === index).map((variant) => ({ variant, path: `${variant.downstream.repo}/${variant.downstream.package}` }))
  const recorded = new Map<string, string>()
  for (const { variant, path } of share) {
    const stat = run.memo?.recorded(variant, path)?.stat
    if (stat !== undefined) recorded.set(path, stat)
  }
  await run.downstreams.prefetch(
    share.map((s) => s.path),
    { alone: count === 1, recorded },
  )
  for (let i = index; i < run.plan.variants.length; i += count) {
    const pending = await context.render(run.plan.variants[i]!)
    pending.order = i
    done.push(pending)
    onDone(pending)
  }
  // A package the staging thread could not write fails its variant and is never committed.
  const unwritten = await run.writer.settleStaging()
  for (const pending of done) {
    const error = pending.staged === undefined ? undefined : unwritten.get(pending.staged)
    if (error === undefined) continue
    run.writer.discard(pending.staged!)
    delete pending.staged
    delete pending.memo
    pending.report.status = 'failed'
    pending.report.reasons.push(`cannot write the package: ${error}`)
  }
  return done
}

/** A pending variant as a worker posts it: dependency objects as YAML text. */
export interface PostedPending extends Omit<Pending, 'dependencies'> {
  dependencies: string[]
}

/** A render worker: its results, and the upstream refs it waits for when started before they were listed. */
interface RenderWorker {
  done: Promise<Pending[]>
  pin(pins: UpstreamPins): void
  stop(): void
}

/**
 * Starts worker `index` of `threads`; it renders its share (if the plan gives
 * it one) and `done` resolves to the results. Without `pins` it waits for
 * them (`pin`) before listing the upstream revisions.
 */
function startWorker(settings: RenderSettings, index: number, threads: number, onDone: (report: VariantReport) => void, pins?: UpstreamPins): RenderWorker {
  const worker = new Worker(new URL('./render-worker.js', import.meta.url), { workerData: { settings, index, threads, ...(pins ? { pins } : {}) } })
  const done = new Promise<Pending[]>((resolvePending, reject) => {
    let result: Pending[] | undefined
    worker.on('message', (message: { type: 'done'; pending: PostedPending[] } | { type: 'progress'; report: VariantReport }) => {
      if (message.type === 'progress') onDone(message.report)
      else result = message.pending.map(revive)
    })
    worker.on('error', reject)
    worker.on('exit', (code) => (result ? resolvePending(result) : reject(new Error(`render worker ${index} exited with code ${code}`))))
  })
  return { done, pin: (listed) => worker.postMessage({ type: 'pins', pins: listed }), stop: () => void worker.terminate() }
}

/**
 * The body of a render worker (render-worker.js): sets up the same run as the
 * main thread and renders its share. It lives here, not in the worker's
 * module, so that a bundled kpt-variants has one copy of the code for every
 * thread: the worker module only imports and calls it.
 */
export async function runRenderWorker(): Promise<void> {
  const { settings, index, threads, pins } = workerData as { settings: RenderSettings; index: number; threads: number; pins?: UpstreamPins }
  const post = (pending: Pending): PostedPending => ({ ...pending, dependencies: pending.dependencies.map((o) => o.toItemText()) })
  // Started early, the thread gets the refs the main thread listed when it has listed them.
  const pinned = pins ? Promise.resolve(pins) : new Promise<UpstreamPins>((resolve) => parentPort!.once('message', (message: { pins: UpstreamPins }) => resolve(message.pins)))
  const run = await startRun(settings, index, undefined, pinned)
  try {
    // Progress needs only the report; the packages go once, with the rest of the share.
    const done = await renderShare(run, index, threads, (pending) => parentPort!.postMessage({ type: 'progress', report: pending.report }))
    parentPort!.postMessage({ type: 'done', pending: done.map(post) })
  } finally {
    // Staged packages stay for the main thread to commit; only scratch files go.
    run.close()
  }
}

function revive(posted: PostedPending): Pending {
  return { ...posted, dependencies: posted.dependencies.map((text, i) => KubeObject.fromItemSource(text, i)) }
}

/** Runs the dependency check over the rendered packages; returns the staged (or held) ones that passed (dry runs keep nothing). */
function checkRenderedDependencies(pending: Pending[], fleet: Fleet): Pending[] {
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
  }
  return pending.filter((p) => (p.staged || p.files) && p.report.status !== 'failed')
}

/**
 * The plan without the variants whose downstream repository could not be
 * opened: each fails with the reason, and nothing of that repository is
 * deleted. Every thread removes the same ones, so shares stay aligned.
 */
function withoutUnavailable(plan: FleetPlan, unavailable: Readonly<Record<string, string>>): FleetPlan {
  if (Object.keys(unavailable).length === 0) return plan
  const failures = [...plan.failures]
  const variants = plan.variants.filter((v) => {
    const reason = unavailable[v.downstream.repo]
    if (reason === undefined) return true
    failures.push({
      subject: `PackageVariant ${v.key}`,
      message: `downstream repository ${JSON.stringify(v.downstream.repo)}: ${reason}`,
      key: v.key,
      downstream: `${v.downstream.repo}/${v.downstream.package}`,
    })
    return false
  })
  for (const repo of Object.keys(unavailable)) failures.push({ subject: `Repository ${repo}`, message: unavailable[repo]!, downstreamRepo: repo })
  return { ...plan, variants, failures }
}
