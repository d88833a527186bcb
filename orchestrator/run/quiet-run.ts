/**
 * A re-render in which nothing can have changed, answered without loading or
 * planning the fleet, as `make` answers "nothing to be done". A run in which
 * every variant came out unchanged (no failure, no deletion, no fleet problem)
 * records what it was made from: this build and its settings, a digest of
 * the fleet's files, the upstream repositories it listed and what they
 * listed, and the metadata digest of every package of the output. The next
 * run with the same fleet, the same upstream revisions and the same output,
 * down to every file's metadata and the set of packages, would render every
 * variant unchanged again and report the same: it reports the recorded
 * report instead. Any difference, or any doubt (a file written within the
 * last two seconds, see statPackageDirectory), and the run is a full one.
 *
 * Only for directory output, with a record of earlier renders (not `--force`),
 * and not `--dry-run` or `--cluster` (which writes status from the plan).
 */
import { fastPath } from '../../functions/krm/fast-paths.js'
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { codeIdentity } from '../cache/identity.js'
import { readRecord, writeRecord } from '../cache/record.js'
import type { RecordFormat } from '../cache/record.js'
import { fleetDigest } from '../fleet/load.js'
import { findPackages, statPackageDirectory } from '../package/directory.js'
import { backgroundShare, digestInBackground } from '../output/directory/stat-thread.js'
import type { RenderSettings } from './settings.js'
import type { RunReport } from '../report/report.js'
import { cloneDirectory } from '../upstream/git-source.js'
import { GitSources, listUpstreams, upstreamIndexDigest } from '../upstream/upstreams.js'
import type { RepositoryLocation } from '../upstream/upstreams.js'

/** What a run in which nothing changed was made from, and what it reported. */
export interface QuietRecord {
  /** This build, the settings and the fleet's files (quietInputs). */
  inputs: string
  /** Where relative upstream repository paths resolve. */
  base: string
  /** The upstream repositories the run listed... */
  upstreams: RepositoryLocation[]
  /** ...and a digest of what they listed (upstreamIndexDigest). */
  upstreamDigest: string
  /** Every package of the output, by path, with its metadata digest (statPackageDirectory). */
  packages: Record<string, string>
  report: RunReport
}

const quietFormat: RecordFormat<QuietRecord> = {
  version: 1,
  holds: (record) =>
    typeof record.inputs === 'string' &&
    typeof record.base === 'string' &&
    Array.isArray(record.upstreams) &&
    typeof record.upstreamDigest === 'string' &&
    typeof record.packages === 'object' &&
    record.packages !== null &&
    Array.isArray((record.report as Partial<RunReport> | undefined)?.variants),
}

/** Whether a run with these settings may be answered from, and may leave, a quiet record. */
export function quietRunApplies(settings: RenderSettings, writesStatus: boolean): boolean {
  return (
    fastPath('quiet-run') &&
    settings.memo !== undefined &&
    !settings.force &&
    !settings.git &&
    !settings.dryRun &&
    !writesStatus &&
    !settings.scope
  )
}

/** A digest of everything a plan is made from except the upstream revisions: this build, the settings, the fleet's files. */
export function quietInputs(settings: RenderSettings, fleetFilesDigest: string): string {
  const cwd = resolve(settings.cwd)
  const outcome = {
    fleetDir: resolve(cwd, settings.fleetDir),
    outDir: resolve(cwd, settings.outDir),
    fleetId: settings.fleetId ?? null,
    repositoryBase: settings.repositoryBase ?? null,
    clusterScoped: settings.clusterScoped ?? null,
    servedKinds: settings.servedKinds ?? null,
    deletionGuard: settings.deletionGuard ?? null,
    namespace: settings.namespace ?? null,
    onConflict: settings.onConflict,
    shard: settings.shard ?? null,
    allowExec: settings.allowExec,
    imageFunctions: settings.imageFunctions ?? null,
    dependencies: settings.dependencies ?? 'install',
    cwd,
  }
  return createHash('sha256')
    .update(JSON.stringify([codeIdentity(), outcome, fleetFilesDigest]))
    .digest('hex')
}

/** What a replay found: the recorded report, or (a full run follows) the package metadata digests it took. */
export type QuietReplay =
  | { report: RunReport }
  | {
      report?: undefined
      digests: ReadonlyMap<string, string | undefined>
      /** The upstream repositories the check opened, when they are clones in the cache: the run reads them without fetching again. */
      sources?: GitSources
    }

/**
 * The recorded report when nothing can have changed since the recorded run:
 * the same inputs, upstream revisions, packages and package metadata.
 * Otherwise the caller renders in full, and uses the digests of package
 * directories taken here, and the upstream repositories fetched here, rather
 * than take or fetch them again.
 */
export async function replayQuietRun(settings: RenderSettings, file: string): Promise<QuietReplay> {
  const none = { digests: new Map<string, string | undefined>() }
  const record = readRecord(file, quietFormat)
  if (!record) return none
  if (record.inputs !== quietInputs(settings, fleetDigest(resolve(settings.cwd, settings.fleetDir)))) return none
  const outDir = resolve(settings.cwd, settings.outDir)
  const paths = Object.keys(record.packages)
  // The same packages, before any is looked into: then only directories of the output are.
  const found = findPackages(outDir)
  if (found.length !== paths.length || !found.every((path) => Object.hasOwn(record.packages, path))) return none
  const dirs = paths.map((path) => join(outDir, ...path.split('/')))
  // The upstream repositories are listed by git processes, and in a big output a share of the packages'
  // metadata is taken on another thread while this thread takes the rest: the metadata of every file is
  // most of the work.
  const scratch = mkdtempSync(join(tmpdir(), 'kpt-variants-'))
  const sources = new GitSources(record.base, cloneDirectory(settings.upstreamCache, scratch))
  const index = listUpstreams(record.upstreams, sources).finally(() =>
    rmSync(scratch, { recursive: true, force: true }),
  )
  const mine = dirs.length - backgroundShare(dirs.length)
  const background = digestInBackground(dirs.slice(mine))
  const digests = new Map(dirs.slice(0, mine).map((dir) => [dir, statPackageDirectory(dir)]))
  const [listed, taken] = await Promise.all([index, background])
  for (const dir of dirs.slice(mine)) digests.set(dir, taken?.has(dir) ? taken.get(dir) : statPackageDirectory(dir))
  const unchanged = paths.every((path, i) => {
    const digest = digests.get(dirs[i]!)
    return digest !== undefined && digest === record.packages[path]
  })
  if (unchanged && upstreamIndexDigest(listed) === record.upstreamDigest) return { report: record.report }
  return settings.upstreamCache ? { digests, sources } : { digests }
}

/** What a finished run leaves for the next: a record when nothing changed and every package's metadata is known, else none. */
export interface QuietOutcome {
  settings: RenderSettings
  fleetDigest: string
  base: string
  upstreams: readonly RepositoryLocation[]
  upstreamDigest: string
  /** Each rendered package's path and metadata digest (undefined: not known). */
  packages: ReadonlyMap<string, string | undefined>
  report: RunReport
}

/** Writes the record of a run in which nothing changed, or removes the last one when something did (or is not known). */
export function saveQuietRecord(file: string, outcome: QuietOutcome): void {
  const { report } = outcome
  const packages: Record<string, string> = {}
  for (const [path, digest] of outcome.packages) if (digest !== undefined) packages[path] = digest
  const quiet =
    report.problems.length === 0 &&
    report.deletionsSkipped === undefined &&
    report.variants.every((v) => v.status === 'unchanged') &&
    Object.keys(packages).length === outcome.packages.size &&
    sameSet(findPackages(resolve(outcome.settings.cwd, outcome.settings.outDir)), outcome.packages)
  if (!quiet) {
    rmSync(file, { force: true })
    return
  }
  writeRecord(file, quietFormat, {
    inputs: quietInputs(outcome.settings, outcome.fleetDigest),
    base: outcome.base,
    upstreams: [...outcome.upstreams],
    upstreamDigest: outcome.upstreamDigest,
    packages,
    report,
  })
}

function sameSet(found: readonly string[], expected: ReadonlyMap<string, unknown>): boolean {
  return found.length === expected.size && found.every((path) => expected.has(path))
}
