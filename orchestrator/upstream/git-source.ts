/**
 * A git repository the orchestrator reads packages from. Local repositories
 * (a path or a `file://` URL, bare or not) are read in place with plumbing
 * commands, so they are never changed. Anything else git can clone is kept
 * as a bare clone in the cache between runs and fetched once per run (as kpt
 * and Porch keep theirs), or, without a cache, cloned into the run's scratch
 * directory.
 */
import { existsSync, mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { clonePath } from '../cache/layout.js'
import { locateRepository, resolveLocalRepository, syncClone } from '../git/clones.js'
import { catFileBatch, git, GitError, listTree, resolveObjects } from '../git/git.js'
import { acquireLock } from '../git/lock.js'

/** Where remote repositories are cloned: a directory of the run's own, or the cache kept between runs. */
export type CloneDirectory = { scratch: string } | { cache: UpstreamCache }

/** The cache when there is one, else the run's scratch directory. */
export function cloneDirectory(cache: UpstreamCache | undefined, scratch: string): CloneDirectory {
  return cache ? { cache } : { scratch }
}

/** The clones of remote upstreams kept between runs (in `upstreams/` of kpt-variants' cache). */
export interface UpstreamCache {
  /** The cache directory (`--cache`). */
  dir: string
  /** How long to wait for another run fetching the same repository. */
  lockTimeoutMs: number
}

/**
 * The refs a run's listing read from one repository: its tags (peeled) and
 * the branch heads it asked for (null: no such branch). The main thread hands
 * them to the render threads, which then list exactly the revisions it
 * listed, whatever is pushed or fetched meanwhile.
 */
export interface PinnedRefs {
  /** Absent when the tags were not read. */
  tags?: [string, string][]
  heads: Record<string, string | null>
}

/** A file of a package as git stores it. */
export interface GitFile {
  /** `100644`, `100755` or `120000` (a symbolic link, whose content is its target). */
  mode: string
  content: Buffer
}

/** A repository opened for reading; every answer is cached for the run. */
export class GitSource {
  readonly #tags = new Map<string, string>()
  #tagsRead = false
  readonly #heads: Record<string, string | null> = {}
  readonly #packages = new Map<string, Promise<Map<string, GitFile>>>()

  private constructor(
    /** The URL as the Repository object or Kptfile gives it. */
    readonly url: string,
    /** The git directory (or work tree) commands run in. */
    readonly dir: string,
    pinned?: PinnedRefs,
  ) {
    if (pinned?.tags) {
      for (const [name, commit] of pinned.tags) this.#tags.set(name, commit)
      this.#tagsRead = true
    }
    if (pinned) Object.assign(this.#heads, pinned.heads)
  }

  /**
   * Opens `url`: a local path (relative paths are resolved against `base`) or
   * `file://` URL in place, any other URL through a bare clone in `clones`
   * (in the cache: made the first time, fetched after). With `pinned` (the
   * refs another thread of the run listed) the refs are not read again, and
   * a clone in the cache is not fetched again.
   */
  static async open(url: string, base: string, clones: CloneDirectory, pinned?: PinnedRefs): Promise<GitSource> {
    const where = locateRepository(url, base)
    if ('local' in where) {
      where.local = resolveLocalRepository(where.local)
      if (!existsSync(where.local)) throw new Error(`repository ${url}: ${where.local} does not exist`)
      try {
        await git(['rev-parse', '--git-dir'], { cwd: where.local })
      } catch (err) {
        if (err instanceof GitError) throw new Error(`repository ${url}: ${where.local} is not a git repository`)
        throw err
      }
      return new GitSource(url, where.local, pinned)
    }
    const clone = clonePath('scratch' in clones ? clones.scratch : clones.cache.dir, where.remote, 'upstreams')
    if ('scratch' in clones) {
      // The run's own directory: nothing else clones into it.
      if (!existsSync(join(clone, 'HEAD'))) await syncClone(where.remote, clone)
      return new GitSource(url, clone, pinned)
    }
    // Read at refs already listed: the objects are there, and reading them needs no lock (a fetch only adds objects).
    if (pinned && existsSync(join(clone, 'HEAD'))) return new GitSource(url, clone, pinned)
    // One run at a time clones or fetches a repository.
    mkdirSync(dirname(clone), { recursive: true })
    const lock = await acquireLock(`${clone}.lock`, clones.cache.lockTimeoutMs)
    try {
      await syncClone(where.remote, clone)
    } finally {
      lock.release()
    }
    return new GitSource(url, clone, pinned)
  }

  /** The refs read so far (see PinnedRefs). */
  pinnedRefs(): PinnedRefs {
    return { ...(this.#tagsRead ? { tags: [...this.#tags] } : {}), heads: { ...this.#heads } }
  }

  /** Every tag, by name, with the commit it points at (annotated tags are peeled). */
  async tags(): Promise<ReadonlyMap<string, string>> {
    if (!this.#tagsRead) {
      const out = await git(['for-each-ref', '--format=%(refname:strip=2) %(objectname) %(*objectname)', 'refs/tags'], {
        cwd: this.dir,
      })
      for (const line of out.split('\n').filter(Boolean)) {
        const [name, object, peeled] = line.split(' ') as [string, string, string | undefined]
        this.#tags.set(name, peeled || object)
      }
      this.#tagsRead = true
    }
    return this.#tags
  }

  /** The commit a branch points at, or undefined when there is no such branch. */
  async branchHead(branch: string): Promise<string | undefined> {
    if (!Object.hasOwn(this.#heads, branch)) {
      try {
        this.#heads[branch] = await git(['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`], {
          cwd: this.dir,
        })
      } catch (err) {
        if (!(err instanceof GitError)) throw err
        this.#heads[branch] = null
      }
    }
    return this.#heads[branch] ?? undefined
  }

  /** Resolves any revision (commit, tag, branch) to a commit id, or undefined. */
  async resolveCommit(revision: string): Promise<string | undefined> {
    try {
      return await git(['rev-parse', '--verify', '--quiet', `${revision}^{commit}`], { cwd: this.dir })
    } catch (err) {
      if (err instanceof GitError) return undefined
      throw err
    }
  }

  /** The package directories below `dir` at `commit`: those holding a Kptfile, not inside another one (their subpackages). */
  async packageDirectories(commit: string, dir: string): Promise<string[]> {
    const dirs = (await listTree(this.dir, commit, dir))
      .filter((e) => e.type === 'blob' && (e.path === 'Kptfile' || e.path.endsWith('/Kptfile')))
      .map((e) => (e.path === 'Kptfile' ? '' : e.path.slice(0, -'/Kptfile'.length)))
      .sort()
    const roots: string[] = []
    for (const d of dirs) if (d !== '' && d !== dir && !roots.some((r) => d.startsWith(`${r}/`))) roots.push(d)
    return roots
  }

  /** For each `commit:path` expression, whether it names an existing file. */
  async exists(expressions: readonly string[]): Promise<boolean[]> {
    // Resolved to ids only: the files' contents are not read.
    return (await resolveObjects(this.dir, expressions)).map((id) => id !== undefined)
  }

  /** The messages of commits, in order. */
  async commitMessages(commits: readonly string[]): Promise<string[]> {
    const objects = await catFileBatch(this.dir, commits)
    return objects.map((o) => {
      if (o.type !== 'commit') return ''
      const text = o.content.toString('utf8')
      const body = text.indexOf('\n\n')
      return body < 0 ? '' : text.slice(body + 2)
    })
  }

  /**
   * The files below directory `dir` at `commit`, by path relative to `dir`,
   * in git's (byte) order. Read once per commit and directory.
   */
  readDirectory(commit: string, dir: string): Promise<Map<string, GitFile>> {
    const key = `${commit}:${dir}`
    let files = this.#packages.get(key)
    if (!files) {
      files = this.#readDirectory(commit, dir)
      this.#packages.set(key, files)
    }
    return files
  }

  async #readDirectory(commit: string, dir: string): Promise<Map<string, GitFile>> {
    const entries = (await listTree(this.dir, commit, dir)).filter((e) => e.type === 'blob')
    const objects = await catFileBatch(
      this.dir,
      entries.map((e) => e.oid),
    )
    const files = new Map<string, GitFile>()
    entries.forEach((entry, i) => {
      const object = objects[i]!
      if (!('content' in object))
        throw new Error(`repository ${this.url}: object ${entry.oid} of ${entry.path} is missing`)
      files.set(dir === '' ? entry.path : entry.path.slice(dir.length + 1), {
        mode: entry.mode,
        content: object.content,
      })
    })
    return files
  }
}
