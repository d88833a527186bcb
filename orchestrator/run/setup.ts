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
import type { SharedRepositories } from '../output/git/git-output.js'
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

/**
 * Loads the fleet, lists the upstream revisions and plans. `scratch`: where a
 * remote upstream is cloned when there is no cache; `pinned` (render threads):
 * the refs the main thread listed, which this thread lists too, without
 * fetching again; `opened`: the upstream repositories a quiet run's check opened.
 */
export async function loadAndPlan(
  settings: PlanSettings,
  scratch: string,
  pinned?: Promise<UpstreamPins | undefined>,
  opened?: GitSources,
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

/**
 * Sets up thread `thread`'s run. `taken`: digests of package directories
 * already taken this run (by a quiet run's replay), by directory; `pinned`
 * and `opened` as for loadAndPlan; `known`: the caller's loadAndPlan of these
 * settings, not made again.
 */
export async function setUpRun(
  settings: RenderSettings,
  thread = 0,
  taken: ReadonlyMap<string, string | undefined> = new Map(),
  pinned?: Promise<UpstreamPins | undefined>,
  opened?: GitSources,
  known?: Planned,
): Promise<Run> {
  const scratch = mkdtempSync(join(tmpdir(), 'kpt-variants-'))
  let output: RunOutput | undefined
  let lock: Lock | undefined
  // The recorded packages' digests are taken on another thread while this one loads and plans (stat-thread.ts).
  const recorded = settings.memo ? RenderMemo.read(settings.memo) : undefined
  const outDir = resolve(settings.cwd, settings.outDir)
  const inside = (path: string) => {
    const dir = resolve(outDir, path)
    return dir.startsWith(`${outDir}${sep}`) ? [dir] : []
  }
  const recordedDirs =
    recorded && !settings.git && !settings.force && thread === 0
      ? Object.keys(recorded).filter((path) => recorded[path]?.stat !== undefined)
      : []
  // Those a quiet run's replay took (quiet-run.ts) are not taken again.
  const digests = digestInBackground(recordedDirs.flatMap(inside).filter((dir) => !taken.has(dir)))
  try {
    const planned = known ?? (await loadAndPlan(settings, scratch, pinned, opened))
    const { fleet } = planned
    let plan = settings.scope ? scopedPlan(planned.plan, settings.scope) : planned.plan
    if (settings.git) {
      const root = stagingDir(settings.git.cacheDir)
      if (settings.repositories) output = new GitOutput(settings.repositories, root)
      else {
        const { shared, locks } = await openRepositories(
          settings.scope ? scopedRepositories(fleet, settings.scope) : fleet,
          plan,
          settings.git,
        )
        output = new GitOutput(shared, root, {
          locks,
          env: settings.env,
          ...(settings.now ? { now: settings.now } : {}),
          cacheDir: settings.git.cacheDir,
          failureKey: fleetIdOf(settings),
        })
      }
      plan = withoutUnavailable(plan, (output as GitOutput).shared.unavailable)
    } else {
      // One run at a time writes an output directory, as one at a time writes a repository (a lock file in it): another
      // would read a package while this one replaces it, and take it for missing.
      if (thread === 0 && !settings.dryRun) {
        mkdirSync(outDir, { recursive: true })
        lock = await acquireLock(join(outDir, outputLockName), settings.upstreamCache?.lockTimeoutMs ?? 60_000)
      }
      const failures = settings.cacheDir
        ? { cacheDir: settings.cacheDir, key: directoryFailureKey(fleetIdOf(settings), outDir) }
        : undefined
      output = new DirectoryOutput(
        outDir,
        thread,
        new Map([...taken, ...((await digests) ?? [])]),
        failures,
        settings.now,
      )
    }
    const memoSettings = {
      allowExec: settings.allowExec,
      onConflict: settings.onConflict,
      namespace: settings.namespace ?? 'default',
      imageFunctions: settings.imageFunctions ?? 'run',
    }
    const memo = settings.memo
      ? RenderMemo.open(settings.memo, fleet, memoSettings, recorded, settings.force)
      : undefined
    const made = output
    return {
      ...planned,
      plan,
      settings,
      output: made,
      ...(memo ? { memo } : {}),
      scratch,
      close() {
        made.close()
        lock?.release()
        rmSync(scratch, { recursive: true, force: true })
      },
    }
  } catch (err) {
    output?.close()
    lock?.release()
    rmSync(scratch, { recursive: true, force: true })
    throw err
  }
}

/** The lock file of an output directory, in it (a dot-file: never a package). */
export const outputLockName = '.kpt-variants.lock'

/** The repositories every thread of a `--git` run reads, as the main thread opened them. */
export function sharedRepositories(run: Run): SharedRepositories | undefined {
  return run.output instanceof GitOutput ? run.output.shared : undefined
}
