/**
 * What every thread of a run sets up the same way, and `status` too: the
 * fleet, its upstream revisions and the plan (`loadAndPlan`), then the output
 * the variants are read from and written to (`setUpRun`). Deterministic, so
 * every thread gets the same plan.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve, sep } from 'node:path'
import { stagingDir } from '../cache/layout.js'
import { buildFleet } from '../fleet/fleet.js'
import { acquireLock } from '../git/lock.js'
import type { Lock } from '../git/lock.js'
import type { Fleet } from '../fleet/fleet.js'
import { loadFleetDirectory } from '../fleet/load.js'
import { DirectoryOutput } from '../output/directory/directory-output.js'
import { digestInBackground } from '../output/directory/stat-thread.js'
import { GitOutput, openRepositories } from '../output/git/git-output.js'
import type { GitSettings, SharedRepositories } from '../output/git/git-output.js'
import { directoryFailureKey } from '../output/last-failures.js'
import type { RunOutput } from '../output/output.js'
import { followedUpstreams } from '../plan/follow-versions.js'
import { planFleet, withoutUnavailable } from '../plan/plan.js'
import type { FleetPlan } from '../plan/plan.js'
import { scopedPlan, scopedRepositories } from '../plan/scope.js'
import { declaredVersions } from '../upstream/catalog.js'
import { cloneDirectory } from '../upstream/git-source.js'
import { GitSources, listUpstreams, upstreamRepositories } from '../upstream/upstreams.js'
import type { RepositoryLocation, UpstreamIndex, UpstreamPins } from '../upstream/upstreams.js'
import { RenderMemo } from './memo.js'
import type { MemoEntry } from './memo.js'
import type { RenderSettings } from './settings.js'
import { fleetIdOf } from './settings.js'

/** A fleet, what its upstream repositories list, and the plan made from them. */
export interface Planned {
  fleet: Fleet
  plan: FleetPlan
  /** The upstream repositories listed, and what they listed. */
  upstreams: { repositories: RepositoryLocation[]; index: UpstreamIndex }
  sources: GitSources
}

/** What `loadAndPlan` needs: the fleet and its namespace, where upstream repositories are kept, and the shard. */
export type PlanSettings = Pick<
  RenderSettings,
  | 'fleetDir'
  | 'repositoryBase'
  | 'clusterScoped'
  | 'servedKinds'
  | 'namespace'
  | 'upstreamCache'
  | 'upstreamPins'
  | 'shard'
  | 'cwd'
>

/** What a thread knows of the upstream repositories before it lists them. */
export interface UpstreamsListed {
  /** Render threads: the refs the main thread listed, which this thread lists too, without fetching again. */
  pinned?: Promise<UpstreamPins | undefined>
  /** The upstream repositories a quiet run's check opened. */
  opened?: GitSources
}

/**
 * Loads the fleet, lists the upstream revisions and plans. `scratch`: where a
 * remote upstream is cloned when there is no cache.
 */
export async function loadAndPlan(
  settings: PlanSettings,
  scratch: string,
  { pinned, opened }: UpstreamsListed = {},
): Promise<Planned> {
  const fleetDir = resolve(settings.cwd, settings.fleetDir)
  const origin = {
    ...(settings.repositoryBase ? { base: resolve(settings.cwd, settings.repositoryBase) } : {}),
    ...(settings.clusterScoped ? { clusterScoped: settings.clusterScoped } : {}),
    ...(settings.servedKinds ? { servedKinds: settings.servedKinds } : {}),
  }
  const fleet = buildFleet(loadFleetDirectory(fleetDir), settings.namespace, origin)
  // The repositories a quiet run's check opened this run (the same base) are read as it listed them, not fetched again.
  const pins = pinned ?? (settings.upstreamPins ? Promise.resolve(settings.upstreamPins) : undefined)
  const sources =
    opened?.base === fleet.base
      ? opened
      : new GitSources(fleet.base, cloneDirectory(settings.upstreamCache, scratch), pins)
  const repositories = upstreamRepositories(fleet)
  const index = await listUpstreams(repositories, sources)
  // The versions published revisions declare: read only for the packages a set or PackageVariant follows by version.
  const followed = followedUpstreams(fleet)
  const versions =
    followed.length > 0 ? await declaredVersions(followed, index, sources, settings.upstreamCache?.dir) : undefined
  return {
    fleet,
    plan: planFleet(fleet, versions ? { ...index, versions } : index, settings.shard),
    upstreams: { repositories, index },
    sources,
  }
}

/** A thread's run: the plan, and the output its variants are read from and staged into. */
export interface Run extends Planned {
  settings: RenderSettings
  /** On the main thread it also commits (see RunOutput). */
  output: RunOutput
  scratch: string
  memo?: RenderMemo
  /** Removes the scratch directory and ends the output's use (on the main thread: every thread's staging, the locks). */
  close(): void
}

/** How a thread sets up its run: with none of these, the main thread's run, planned here. */
export interface RunSetup extends UpstreamsListed {
  /** The thread: 0 (the default) is the main thread, which also commits; a render thread renders its share only. */
  thread?: number
  /** Digests of package directories already taken this run (by a quiet run's replay), by directory. */
  taken?: ReadonlyMap<string, string | undefined>
  /** The caller's loadAndPlan of these settings, not made again. */
  known?: Planned
}

/** Sets up a thread's run: the plan (see loadAndPlan), the output it reads and writes, the record of renders. */
export async function setUpRun(settings: RenderSettings, setup: RunSetup = {}): Promise<Run> {
  const { thread = 0, taken = new Map(), known } = setup
  const scratch = mkdtempSync(join(tmpdir(), 'kpt-variants-'))
  let opened: OpenedOutput | undefined
  const recorded = settings.memo ? RenderMemo.read(settings.memo) : undefined
  // The recorded packages' digests are taken on another thread while this one loads and plans (stat-thread.ts).
  const digests = digestRecorded(settings, thread, recorded, taken)
  try {
    const planned = known ?? (await loadAndPlan(settings, scratch, setup))
    const scoped = settings.scope ? scopedPlan(planned.plan, settings.scope) : planned.plan
    opened = settings.git
      ? { output: await openGitOutput(settings, settings.git, planned.fleet, scoped) }
      : await openDirectoryOutput(settings, thread, taken, digests)
    const { output, lock } = opened
    // The variants of a downstream repository that could not be opened fail, with the reason.
    const plan = output instanceof GitOutput ? withoutUnavailable(scoped, output.shared.unavailable) : scoped
    const memo = settings.memo ? openMemo(settings, settings.memo, planned.fleet, recorded) : undefined
    return {
      ...planned,
      plan,
      settings,
      output,
      ...(memo ? { memo } : {}),
      scratch,
      close() {
        output.close()
        lock?.release()
        rmSync(scratch, { recursive: true, force: true })
      },
    }
  } catch (err) {
    opened?.output.close()
    opened?.lock?.release()
    rmSync(scratch, { recursive: true, force: true })
    throw err
  }
}

/** An output opened for a run, and the lock of an output directory the main thread writes. */
interface OpenedOutput {
  output: RunOutput
  lock?: Lock
}

/**
 * Starts taking the digests of the recorded packages' directories (the main
 * thread of an --out run that may skip them); those a quiet run's replay
 * took (quiet-run.ts) are not taken again.
 */
function digestRecorded(
  settings: RenderSettings,
  thread: number,
  recorded: Record<string, MemoEntry> | undefined,
  taken: ReadonlyMap<string, string | undefined>,
): ReturnType<typeof digestInBackground> {
  const outDir = resolve(settings.cwd, settings.outDir)
  const inside = (path: string) => {
    const dir = resolve(outDir, path)
    return dir.startsWith(`${outDir}${sep}`) ? [dir] : []
  }
  const recordedDirs =
    recorded && !settings.git && !settings.force && thread === 0
      ? Object.keys(recorded).filter((path) => recorded[path]?.stat !== undefined)
      : []
  return digestInBackground(recordedDirs.flatMap(inside).filter((dir) => !taken.has(dir)))
}

/**
 * The downstream repositories: as the main thread opened them (a render
 * thread's `settings.repositories`), or opened (locked, fetched) here.
 */
async function openGitOutput(
  settings: RenderSettings,
  git: GitSettings,
  fleet: Fleet,
  plan: FleetPlan,
): Promise<GitOutput> {
  const root = stagingDir(git.cacheDir)
  if (settings.repositories) return new GitOutput(settings.repositories, root)
  const { shared, locks } = await openRepositories(
    settings.scope ? scopedRepositories(fleet, settings.scope) : fleet,
    plan,
    git,
  )
  return new GitOutput(shared, root, {
    locks,
    env: settings.env,
    ...(settings.now ? { now: settings.now } : {}),
    cacheDir: git.cacheDir,
    failureKey: fleetIdOf(settings),
  })
}

/**
 * The output directory, locked by the main thread where it writes; `taken`
 * and `digests` (taken ahead, once the lock is held): its packages' digests, by directory.
 */
async function openDirectoryOutput(
  settings: RenderSettings,
  thread: number,
  taken: ReadonlyMap<string, string | undefined>,
  digests: ReturnType<typeof digestInBackground>,
): Promise<OpenedOutput> {
  const outDir = resolve(settings.cwd, settings.outDir)
  let lock: Lock | undefined
  // One run at a time writes an output directory, as one at a time writes a repository (a lock file in it): another
  // would read a package while this one replaces it, and take it for missing.
  if (thread === 0 && !settings.dryRun) {
    mkdirSync(outDir, { recursive: true })
    lock = await acquireLock(join(outDir, outputLockName), settings.upstreamCache?.lockTimeoutMs ?? 60_000)
  }
  try {
    const failures = settings.cacheDir
      ? { cacheDir: settings.cacheDir, key: directoryFailureKey(fleetIdOf(settings), outDir) }
      : undefined
    const known = new Map([...taken, ...((await digests) ?? [])])
    return { output: new DirectoryOutput(outDir, thread, known, failures, settings.now), ...(lock ? { lock } : {}) }
  } catch (err) {
    lock?.release()
    throw err
  }
}

/** The record of renders for this fleet and the settings its entries depend on. */
function openMemo(
  settings: RenderSettings,
  file: string,
  fleet: Fleet,
  recorded: Record<string, MemoEntry> | undefined,
): RenderMemo {
  const memoSettings = {
    allowExec: settings.allowExec,
    onConflict: settings.onConflict,
    namespace: settings.namespace ?? 'default',
    imageFunctions: settings.imageFunctions ?? 'run',
  }
  return RenderMemo.open(file, fleet, memoSettings, recorded, settings.force)
}

/** The lock file of an output directory, in it (a dot-file: never a package). */
export const outputLockName = '.kpt-variants.lock'

/** The repositories every thread of a `--git` run reads, as the main thread opened them. */
export function sharedRepositories(run: Run): SharedRepositories | undefined {
  return run.output instanceof GitOutput ? run.output.shared : undefined
}
