/**
 * Writing downstream packages on disk (`--out DIR`): replacing or removing a
 * package as a whole. A package is written into a staging
 * directory inside DIR and renamed into place, so a reader (or a crash) sees
 * the old package or the new one, never a mix; nothing is written outside DIR.
 */
import { mkdirSync, readdirSync, renameSync, rmdirSync, rmSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { dirname, join, resolve, sep } from 'node:path'
import type { PackageFiles } from '../../package/files.js'
import { openStagingThread } from './staging-thread.js'
import type { StagingThread } from './staging-thread.js'
import { removeTree, writePackageFiles } from './write-files.js'

/** Name prefix of the staging directories inside DIR (never a package: it starts with a dot). */
export const stagingPrefix = '.kpt-variants-staging-'

/** Writes packages below one output directory, each as a whole. */
export class DirectoryWriter {
  #staging: string | undefined
  #count = 0
  #thread: StagingThread | undefined
  /** Threads removing the trees of replaced packages (see #replace), and the next to be given one. */
  #removers: StagingThread[] | undefined
  #nextRemover = 0

  /** `thread` tells the staging directories of one run's threads apart. */
  constructor(
    readonly outDir: string,
    private readonly thread = 0,
  ) {}

  /** The absolute directory of a package path (`repo/package`); throws if it would leave the output directory. */
  packageDir(path: string): string {
    const dir = this.packageDirInside(path)
    if (dir === undefined) throw new Error(`${JSON.stringify(path)} is outside the output directory`)
    return dir
  }

  /** As packageDir, but undefined for a path it refuses (work done ahead skips it; the render meets the error). */
  packageDirInside(path: string): string | undefined {
    const dir = resolve(this.outDir, path)
    return dir.startsWith(resolve(this.outDir) + sep) ? dir : undefined
  }

  /** Writes `files` as the package at `path`, replacing whatever was there in one rename. */
  writePackage(path: string, files: PackageFiles): void {
    this.commit(path, this.stage(files))
  }

  /** Writes a package into the staging directory; `commit` moves it into place, `discard` drops it. */
  stage(files: PackageFiles): string {
    const staged = join(this.#stagingDir(), String(this.#count++))
    writePackageFiles(staged, files)
    return staged
  }

  /**
   * Queues a package for the staging thread (see staging-thread.ts) and
   * returns the directory it goes to; `settleStaging` says which could not be
   * written. For the many packages of a render; `stage` writes one at once.
   */
  async stageInBackground(files: PackageFiles): Promise<string> {
    const thread = (this.#thread ??= openStagingThread())
    if (!thread) return this.stage(files)
    const staged = join(this.#stagingDir(), String(this.#count++))
    await thread.write(staged, files)
    return staged
  }

  /** Waits for the packages queued by `stageInBackground`; returns those that could not be written, with the error, and stops the thread. */
  async settleStaging(): Promise<Map<string, string>> {
    const thread = this.#thread
    if (!thread) return new Map()
    this.#thread = undefined
    const failures = await thread.settle()
    await thread.close()
    return failures
  }

  /**
   * Waits until the trees of the packages `commit` replaced are removed;
   * returns those that could not be, with the error (left in the staging
   * directory, which `close` removes).
   */
  async settleRemovals(): Promise<Map<string, string>> {
    const removers = this.#removers ?? []
    this.#removers = undefined
    const failures = new Map<string, string>()
    for (const remover of removers) {
      for (const [dir, error] of await remover.settle()) failures.set(dir, error)
      await remover.close()
    }
    return failures
  }

  /** Replaces the package at `path` by a staged one, in one rename. */
  commit(path: string, staged: string): void {
    const target = this.packageDir(path)
    mkdirSync(dirname(target), { recursive: true })
    this.#replace(target, staged)
  }

  /** Drops a staged package. */
  discard(staged: string): void {
    rmSync(staged, { recursive: true, force: true })
  }

  /** Removes the package at `path` (renamed away first, so it disappears at once). */
  removePackage(path: string): void {
    const target = this.packageDir(path)
    const trash = join(this.#stagingDir(), `${this.#count++}.old`)
    renameSync(target, trash)
    removeTree(trash)
    removeEmptyParents(dirname(target), resolve(this.outDir))
  }

  /** Removes staging directories a run that crashed left behind (their process is gone). */
  sweepStaleStaging(): void {
    this.#removeStaging((pid) => !(Number.isInteger(pid) && pid !== process.pid && isRunning(pid)))
  }

  /** Removes the staging directories (`<prefix><pid>-<thread>`) whose process id `remove` accepts. */
  #removeStaging(remove: (pid: number) => boolean): void {
    let entries: string[]
    try {
      entries = readdirSync(this.outDir)
    } catch {
      return
    }
    for (const name of entries) {
      if (name.startsWith(stagingPrefix) && remove(Number(name.slice(stagingPrefix.length).split('-')[0]))) {
        rmSync(join(this.outDir, name), { recursive: true, force: true })
      }
    }
  }

  /** Removes the staging directories of this process (every thread's); call once at the end of a run. */
  close(): void {
    // Normally settled already; after an error, whatever the thread still had queued is dropped with the directories.
    void this.#thread?.close()
    this.#thread = undefined
    for (const remover of this.#removers ?? []) void remover.close()
    this.#removers = undefined
    this.#removeStaging((pid) => pid === process.pid)
    this.#staging = undefined
  }

  #replace(target: string, staged: string): void {
    let old: string | undefined
    try {
      old = join(this.#stagingDir(), `${this.#count++}.old`)
      renameSync(target, old)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
      old = undefined
    }
    renameSync(staged, target)
    if (old) this.#removeLater(old)
  }

  /**
   * Removes the tree of a replaced package. An update replaces every package
   * and removing the old files (a system call each) took as long as writing
   * the new: it goes to threads (openRemovers) that work while the commit
   * goes on (bench/RESULTS.md, 'upstream update of 10,000 variants').
   */
  #removeLater(dir: string): void {
    this.#removers ??= openRemovers()
    const remover = this.#removers[this.#nextRemover++ % Math.max(1, this.#removers.length)]
    if (remover) remover.remove(dir)
    else removeTree(dir)
  }

  #stagingDir(): string {
    if (!this.#staging) {
      this.#staging = join(this.outDir, `${stagingPrefix}${process.pid}-${this.thread}`)
      rmSync(this.#staging, { recursive: true, force: true })
      mkdirSync(this.#staging, { recursive: true })
    }
    return this.#staging
  }
}

/** The threads removing replaced packages' trees: two, or one per CPU where there are fewer; none where none can start. */
function openRemovers(): StagingThread[] {
  const count = Math.max(1, Math.min(2, availableParallelism()))
  return Array.from({ length: count }, () => openStagingThread()).filter((t) => t !== undefined)
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Removes `dir` and its parents up to (not including) `stop` while they are empty. */
function removeEmptyParents(dir: string, stop: string): void {
  let current = dir
  while (current.startsWith(stop + sep)) {
    try {
      if (readdirSync(current).length > 0) return
      rmdirSync(current)
    } catch {
      return
    }
    current = dirname(current)
  }
}
