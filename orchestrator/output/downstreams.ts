/**
 * Where a variant's downstream package is read from before rendering: a
 * directory below `--out`, or a downstream repository's published branch and
 * open draft (`--git`). An update merges into the published package; a
 * re-render is compared with the draft when there is one.
 */
import type { RepositorySnapshot, StoredPackage } from './git/repository.js'
import { readPackages } from './git/repository.js'
import { readPackageDirectory, statPackageDirectory } from './directory.js'
import type { DirectoryWriter } from './directory.js'
import { ReadAhead } from './read-ahead.js'

export type { StoredPackage }

/** Reads downstream packages by path (`<repo>/<package>`). */
export interface Downstreams {
  /** Reads the packages of many paths at once, ahead of `read` (a share of a run; `alone`: no other thread renders). */
  prefetch(paths: readonly string[], options?: { alone: boolean }): Promise<void>
  read(path: string): Promise<StoredPackage>
  /** A digest of the package's file metadata (see statPackageDirectory), where that is cheaper than reading it. */
  statDigest?(path: string): string | undefined
  /** Stops reading ahead, at the end of a run. */
  close?(): void
}

/** Packages left in a share after the first one found on disk, below which they are not worth a thread. */
const minReadAhead = 16

/** Packages in directories below the output directory: published as they are, never drafted. */
export class DirectoryDownstreams implements Downstreams {
  /** `digests`: digests taken ahead (stat-thread.ts), by directory; each answers once, as the package may then be rewritten. */
  constructor(
    private readonly writer: DirectoryWriter,
    private readonly digests = new Map<string, string | undefined>(),
  ) {}

  /** The share's paths in render order, and where in it each is. */
  #share: readonly string[] = []
  #order = new Map<string, number>()
  #ahead: ReadAhead | undefined
  /** The share's index of the thread's first package. */
  #aheadFrom = 0

  async prefetch(paths: readonly string[], options = { alone: true }): Promise<void> {
    // Beside other render threads the second core is taken, and a thread more only costs memory.
    if (!options.alone) return
    this.#share = paths
    this.#order = new Map(paths.map((path, i) => [path, i]))
  }

  async read(path: string): Promise<StoredPackage> {
    const index = this.#order.get(path)
    if (this.#ahead && index !== undefined && index >= this.#aheadFrom) {
      const read = await this.#ahead.take(index - this.#aheadFrom)
      if (read) return read.files ? { published: read.files } : {}
    }
    const published = readPackageDirectory(this.writer.packageDir(path))
    // The first package found on disk says this run reads packages before rendering them (an update, a
    // re-render with --force): the rest of the share is read on another thread, ahead of the render.
    // A first render finds none, and a re-render that its record answers reads none.
    if (published && !this.#ahead && index !== undefined && this.#share.length - index - 1 >= minReadAhead) {
      this.#aheadFrom = index + 1
      this.#ahead = ReadAhead.start(this.#share.slice(index + 1).map((p) => this.writer.packageDirInside(p) ?? ''))
    }
    return published ? { published } : {}
  }

  close(): void {
    this.#ahead?.close()
    this.#ahead = undefined
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
}

/** Packages in downstream repositories, read from the snapshot every thread shares, a repository at a time. */
export class GitDownstreams implements Downstreams {
  readonly #repos: Map<string, RepositorySnapshot>
  readonly #read = new Map<string, StoredPackage>()

  constructor(snapshots: readonly RepositorySnapshot[]) {
    this.#repos = new Map(snapshots.map((s) => [s.name, s]))
  }

  async prefetch(paths: readonly string[]): Promise<void> {
    const byRepo = new Map<string, string[]>()
    for (const path of paths) {
      const { repo, pkg } = splitPath(path)
      if (this.#repos.has(repo) && !this.#read.has(path)) (byRepo.get(repo) ?? byRepo.set(repo, []).get(repo)!).push(pkg)
    }
    for (const [repo, packages] of byRepo) {
      const read = await readPackages(this.#repos.get(repo)!, packages)
      for (const pkg of packages) this.#read.set(`${repo}/${pkg}`, read.get(pkg) ?? {})
    }
  }

  async read(path: string): Promise<StoredPackage> {
    if (!this.#read.has(path)) await this.prefetch([path])
    const stored = this.#read.get(path)
    if (!stored) throw new Error(`downstream repository ${JSON.stringify(splitPath(path).repo)} was not opened`)
    // Read once: a share renders each path once, and the memory is better spent on the next one.
    this.#read.delete(path)
    return stored
  }
}

/** `<repo>/<package>` split at the first slash. */
export function splitPath(path: string): { repo: string; pkg: string } {
  const slash = path.indexOf('/')
  return { repo: path.slice(0, slash), pkg: path.slice(slash + 1) }
}
