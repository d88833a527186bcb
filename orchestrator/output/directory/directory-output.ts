/**
 * The directory output (`--out DIR`): each variant's package is the
 * directory `DIR/<repo>/<package>`, read as it is (ahead of the render on a
 * second thread when the run reads many) and replaced as a whole by rename
 * (see writer.ts). Abandoned packages are removed, or orphaned in place.
 */
import { readFileSync, statSync, utimesSync } from 'node:fs'
import { join } from 'node:path'
import {
  findPackages,
  readPackageAndDigest,
  readPackageDirectory,
  statPackageDirectory,
} from '../../package/directory.js'
import type { PackageFiles } from '../../package/files.js'
import type { RunReport, VariantReport } from '../../report/report.js'
import { orphanPackage } from '../../package/ownership.js'
import { packageDiff } from '../diff.js'
import { recordFailures } from '../last-failures.js'
import { textFile } from '../../package/files.js'
import { readPackageRecord } from '../../package/ownership.js'
import { rolloutRevision } from '../../rollout/gather.js'
import type {
  PackageState,
  PrefetchOptions,
  Removal,
  RemovalSettings,
  RunOutput,
  StagedChange,
  StagedPackage,
  Staging,
  StateReads,
  StoredPackage,
} from '../output.js'
import { stagedDir } from '../output.js'
import { ReadAhead } from './read-ahead.js'
import { DirectoryWriter } from './writer.js'

/** Packages left in a share after the first one found on disk, below which they are not worth a thread. */
const minReadAhead = 16

/** Where a directory output records its runs' failures (see last-failures.ts). */
export interface FailureRecord {
  cacheDir: string
  /** The record's key: the fleet and the output directory. */
  key: string
}

/** Dates a package written at `now`: the time a rollout's soak counts from. */
function datePackage(dir: string, now: Date): void {
  try {
    utimesSync(join(dir, 'Kptfile'), now, now)
  } catch {
    // A package without a Kptfile has no upstream revision a rollout could count.
  }
}

/** One thread's view of an output directory; it stages each package on disk (see Staging). */
export class DirectoryOutput implements RunOutput, Staging {
  readonly drafts = false
  readonly writer: DirectoryWriter
  /** The share's paths in render order, and where in it each is. */
  #share: readonly string[] = []
  #order = new Map<string, number>()
  #ahead: ReadAhead | undefined
  /** The share's index of the thread's first package. */
  #aheadFrom = 0
  #aheadTried = false

  /**
   * `thread` tells the staging directories of one run's threads apart;
   * `digests`: metadata digests taken ahead (stat-thread.ts), by directory;
   * each answers once, as the package may then be rewritten.
   */
  constructor(
    readonly outDir: string,
    private readonly thread: number,
    private readonly digests = new Map<string, string | undefined>(),
    private readonly failures?: FailureRecord,
    /** The time the run acts at (`--now`): each package it writes has its Kptfile dated then (see packageStates). */
    private readonly now?: Date,
  ) {
    this.writer = new DirectoryWriter(outDir, thread)
  }

  packageDir(path: string): string {
    return this.writer.packageDir(path)
  }

  async prefetch(paths: readonly string[], options: PrefetchOptions = { alone: true }): Promise<void> {
    // Beside other render threads the second core is taken, and a thread more only costs memory.
    if (!options.alone) return
    this.#share = paths
    this.#order = new Map(paths.map((path, i) => [path, i]))
  }

  async read(path: string): Promise<StoredPackage> {
    const index = this.#order.get(path)
    if (this.#ahead && index !== undefined && index >= this.#aheadFrom) {
      const read = await this.#ahead.take(index - this.#aheadFrom)
      if (read) return storedPackage(read)
    }
    const read = readPackageAndDigest(this.writer.packageDir(path))
    const published = read?.files
    // The first package found on disk says this run reads packages before rendering them (an update, a
    // re-render with --force): the rest of the share is read on another thread, ahead of the render.
    // A first render finds none, and a re-render that its record answers reads none.
    if (published && !this.#aheadTried && index !== undefined && this.#share.length - index - 1 >= minReadAhead) {
      // Tried once: where no thread can start (the fast path off), listing the rest of the share at every read was quadratic.
      this.#aheadTried = true
      this.#aheadFrom = index + 1
      this.#ahead = ReadAhead.start(this.#share.slice(index + 1).map((p) => this.writer.packageDirInside(p) ?? ''))
    }
    return storedPackage(read)
  }

  statDigest(path: string): string | undefined {
    const dir = this.writer.packageDir(path)
    if (this.digests.has(dir)) {
      const digest = this.digests.get(dir)
      this.digests.delete(dir)
      return digest
    }
    return statPackageDirectory(dir)
  }

  async stage(files: PackageFiles): Promise<StagedPackage> {
    return { dir: await this.writer.stageInBackground(files) }
  }

  settle(): Promise<Map<string, string>> {
    return this.writer.settleStaging()
  }

  discard(staged: StagedPackage): void {
    const dir = stagedDir(staged)
    if (dir !== undefined) this.writer.discard(dir)
  }

  prepare(): void {
    this.writer.sweepStaleStaging()
  }

  async commit(changes: readonly StagedChange[]): Promise<VariantReport[]> {
    for (const { report, staged } of changes) {
      const dir = stagedDir(staged)
      if (dir !== undefined) this.writer.commit(report.path!, dir)
      else if ('files' in staged) this.writer.writePackage(report.path!, staged.files)
      else continue
      if (this.now) datePackage(this.writer.packageDir(report.path!), this.now)
    }
    // A replaced package's old tree that could not be removed goes with the staging directory at close.
    await this.writer.settleRemovals()
    // A directory has no drafts: what is written is published, needs and all.
    return []
  }

  /**
   * A directory has no drafts: what it holds is what is published, rendered
   * from its Kptfile's `upstreamLock`, since its Kptfile was last written
   * (its modification time: a copy or checkout that resets it restarts a
   * rollout's soak, never shortens it).
   */
  async packageStates(paths: readonly string[], reads: StateReads): Promise<Map<string, PackageState>> {
    const states = new Map<string, PackageState>()
    for (const path of paths) {
      if (!reads.upstreams.has(path)) continue
      const kptfile = join(this.writer.packageDir(path), 'Kptfile')
      let text: string
      let time: Date
      try {
        text = readFileSync(kptfile, 'utf8')
        time = statSync(kptfile).mtime
      } catch {
        continue
      }
      const lock = readPackageRecord(new Map([['Kptfile', textFile(text)]])).lock
      if (lock)
        states.set(path, {
          published: { tag: lock.ref || lock.commit, commit: lock.commit, upstream: rolloutRevision(lock), time },
        })
    }
    return states
  }

  async otherPackages(rendered: ReadonlySet<string>, only?: readonly string[]): Promise<Map<string, StoredPackage>> {
    const others = new Map<string, StoredPackage>()
    for (const path of only ?? findPackages(this.outDir)) {
      if (rendered.has(path)) continue
      const published = readPackageDirectory(join(this.outDir, path))
      if (published) others.set(path, { published })
    }
    return others
  }

  async remove(removals: readonly Removal[], settings: RemovalSettings): Promise<Removal[]> {
    for (const { report, stored, orphan } of removals) {
      const path = report.path!
      const files = stored.published
      if (!files) continue
      if (settings.dryRun) {
        if (settings.diff)
          report.diff = packageDiff(path, files, orphan ? orphanPackage(files, report.warnings) : undefined)
      } else if (orphan) this.writer.writePackage(path, orphanPackage(files, report.warnings))
      else this.writer.removePackage(path)
    }
    await this.writer.settleRemovals()
    return removals.filter((r) => r.stored.published)
  }

  record(report: RunReport): void {
    if (this.failures) recordFailures(this.failures.cacheDir, this.failures.key, report)
  }

  /** Stops reading ahead; on the main thread (0) also removes every thread's staging directory. */
  close(): void {
    this.#ahead?.close()
    this.#ahead = undefined
    // A render thread's staged packages stay until the main thread has committed them.
    if (this.thread === 0) this.writer.close()
  }
}

/** A package as read, with its metadata digest when it has one. */
function storedPackage(read: { files?: PackageFiles; digest?: string } | undefined): StoredPackage {
  if (!read?.files) return {}
  return read.digest === undefined ? { published: read.files } : { published: read.files, stat: read.digest }
}
