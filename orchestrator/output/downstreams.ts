/**
 * Where a variant's downstream package is read from before rendering: a
 * directory below `--out`, or a downstream repository's published branch and
 * open draft (`--git`). An update merges into the published package; a
 * re-render is compared with the draft when there is one.
 */
import type { RepositorySnapshot, StoredPackage } from './git/repository.js'
import { packageDigests, readPackages } from './git/repository.js'
import { readPackageDirectory, statPackageDirectory } from './directory.js'
import type { DirectoryWriter } from './directory.js'
import { ReadAhead } from './read-ahead.js'

export type { StoredPackage }

/** How a share of a run reads ahead. */
export interface PrefetchOptions {
  /** No other thread renders. */
  alone: boolean
  /**
   * The digests (statDigest's) that the record of earlier renders holds for
   * the paths whose inputs are unchanged: a package that still has its
   * digest is skipped without being read, so it need not be read ahead.
   */
  recorded?: ReadonlyMap<string, string>
}

/** Reads downstream packages by path (`<repo>/<package>`). */
export interface Downstreams {
  /** Reads the packages of many paths at once, ahead of `read` (a share of a run). */
  prefetch(paths: readonly string[], options?: PrefetchOptions): Promise<void>
  read(path: string): Promise<StoredPackage>
  /**
   * A digest of the package that changes whenever its files do, where that is
   * cheaper than reading them: its files' metadata (statPackageDirectory), or
   * with --git its trees' ids. Each path answers once, as the package may then be rewritten.
   */
  statDigest?(path: string): string | undefined
  /** Takes the digests of `paths` as the run left them, for statDigest: with --git, after its push. */
  restat?(paths: readonly string[]): Promise<void>
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

/**
 * Packages in downstream repositories, read from the snapshot every thread
 * shares, a repository at a time. Their digests (statDigest) are their trees'
 * ids: a package whose trees are those the record of earlier renders holds
 * is not read at all.
 */
export class GitDownstreams implements Downstreams {
  readonly #repos: Map<string, RepositorySnapshot>
  readonly #read = new Map<string, StoredPackage>()
  readonly #digests = new Map<string, string>()

  constructor(snapshots: readonly RepositorySnapshot[]) {
    this.#repos = new Map(snapshots.map((s) => [s.name, s]))
  }

  async prefetch(paths: readonly string[], options?: PrefetchOptions): Promise<void> {
    for (const [repo, packages] of this.#byRepo(paths.filter((path) => !this.#read.has(path)))) {
      const snapshot = this.#repos.get(repo)!
      const digests = await this.#takeDigests(repo, packages)
      const unread = packages.filter((pkg) => options?.recorded?.get(`${repo}/${pkg}`) !== digests.get(pkg))
      const read = await readPackages(snapshot, unread)
      for (const pkg of unread) this.#read.set(`${repo}/${pkg}`, read.get(pkg) ?? {})
    }
  }

  statDigest(path: string): string | undefined {
    const digest = this.#digests.get(path)
    this.#digests.delete(path)
    return digest
  }

  async restat(paths: readonly string[]): Promise<void> {
    for (const [repo, packages] of this.#byRepo(paths)) {
      try {
        await this.#takeDigests(repo, packages)
      } catch {
        // The drafts are pushed by now: a package without a digest is only read again next time.
      }
    }
  }

  /** The packages of `paths` by repository, of the repositories this run opened. */
  #byRepo(paths: readonly string[]): Map<string, string[]> {
    const byRepo = new Map<string, string[]>()
    for (const path of paths) {
      const { repo, pkg } = splitPath(path)
      if (this.#repos.has(repo)) (byRepo.get(repo) ?? byRepo.set(repo, []).get(repo)!).push(pkg)
    }
    return byRepo
  }

  async #takeDigests(repo: string, packages: readonly string[]): Promise<Map<string, string>> {
    const digests = await packageDigests(this.#repos.get(repo)!, packages)
    for (const [pkg, digest] of digests) this.#digests.set(`${repo}/${pkg}`, digest)
    return digests
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
