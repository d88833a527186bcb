/**
 * Downstream packages on disk (`--out DIR`): reading a package as files, and
 * replacing or removing one as a whole. A package is written into a staging
 * directory inside DIR and renamed into place, so a reader (or a crash) sees
 * the old package or the new one, never a mix; nothing is written outside DIR.
 */
import { lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmdirSync, rmSync, statSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { dirname, join, relative, resolve, sep } from 'node:path'
import type { PackageFile, PackageFiles } from '../package/files.js'
import { openStagingThread } from './staging-thread.js'
import type { StagingThread } from './staging-thread.js'
import { removeTree, writePackageFiles } from './write-files.js'

/** Name prefix of the staging directories inside DIR (never a package: it starts with a dot). */
export const stagingPrefix = '.kpt-variants-staging-'

/** Reads every file below a package directory (`.git` skipped); undefined when the directory does not exist. */
export function readPackageDirectory(dir: string): PackageFiles | undefined {
  let stat
  try {
    // A missing directory (every new variant's) answers without an exception to build and catch.
    stat = statSync(dir, { throwIfNoEntry: false })
  } catch {
    return undefined
  }
  if (!stat) return undefined
  if (!stat.isDirectory()) throw new Error(`${dir} exists and is not a directory`)
  return new Map(
    packageFilePaths(dir).map(({ path, full }): [string, PackageFile] => {
      const file: PackageFile = { content: readFileSync(full) }
      if ((lstatSync(full).mode & 0o111) !== 0) file.executable = true
      return [path, file]
    }),
  )
}

/** The regular files below a package directory (`.git` skipped): slash-separated paths relative to it, in sorted order, and full paths. */
function packageFilePaths(dir: string): { path: string; full: string }[] {
  const files: { path: string; full: string }[] = []
  // Paths joined by hand, not with path.join/relative: a re-render walks every unchanged package (statPackageDirectory).
  const walk = (full: string, path: string) => {
    for (const entry of readdirSync(full, { withFileTypes: true })) {
      if (entry.name === '.git') continue
      const entryFull = `${full}${sep}${entry.name}`
      const entryPath = path === '' ? entry.name : `${path}/${entry.name}`
      if (entry.isDirectory()) walk(entryFull, entryPath)
      else if (entry.isFile()) files.push({ path: entryPath, full: entryFull })
    }
  }
  walk(dir, '')
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
}

/** How long after a file's modification its metadata is trusted to show a later edit (git's racy-clean rule, with a margin for coarse clocks). */
const racyWindowMs = 2000

/**
 * A digest of the metadata of every file below a package directory (path,
 * size, modification and change times, inode, mode; `.git` skipped), which changes when
 * any file is edited, added, removed or replaced. Undefined when the
 * directory does not exist, or when a file was modified so recently that an
 * edit within the same clock tick would not show.
 */
export function statPackageDirectory(dir: string, now = Date.now()): string | undefined {
  const newest = BigInt(now - racyWindowMs) * 1_000_000n
  const lines: string[] = []
  try {
    // A package renamed into place (or a file added or removed) this recently changed its directory too: no need to walk it.
    const own = lstatSync(dir, { bigint: true })
    if (own.mtimeNs > newest || own.ctimeNs > newest) return undefined
    for (const { path, full } of packageFilePaths(dir)) {
      const stat = lstatSync(full, { bigint: true })
      if (stat.mtimeNs > newest || stat.ctimeNs > newest) return undefined
      lines.push(`${path}\0${stat.size}\0${stat.mtimeNs}\0${stat.ctimeNs}\0${stat.ino}\0${stat.mode}\n`)
    }
  } catch {
    return undefined
  }
  // One hash of the whole text: the same digest as hashing line by line, for less.
  return createHash('sha256').update(lines.join('')).digest('hex')
}

/** Writes packages below one output directory, each as a whole. */
export class DirectoryWriter {
  #staging: string | undefined
  #count = 0
  #thread: StagingThread | undefined

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
    if (old) removeTree(old)
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

function isRegularFile(path: string): boolean {
  try {
    return lstatSync(path, { throwIfNoEntry: false })?.isFile() ?? false
  } catch {
    return false
  }
}

/** The packages below `outDir` (directories with a Kptfile; their subdirectories belong to them), as slash paths. */
export function findPackages(outDir: string): string[] {
  const found: string[] = []
  const walk = (dir: string) => {
    // A package is found by its Kptfile alone: listing its fifty-odd files would cost more.
    if (dir !== outDir && isRegularFile(join(dir, 'Kptfile'))) {
      found.push(relative(outDir, dir).split(sep).join('/'))
      return
    }
    let entries
    try {
      entries = readdirSync(dir, { withFileTypes: true })
    } catch {
      return
    }
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (entry.isDirectory() && !entry.name.startsWith('.')) walk(join(dir, entry.name))
    }
  }
  walk(outDir)
  return found
}
