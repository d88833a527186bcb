/**
 * The upstream side of a run: opens each repository the fleet names as an
 * upstream once, lists its published package revisions, and reads each
 * package revision's files once, however many variants use it.
 */
import { createHash } from 'node:crypto'
import { isDependencyKind, packageCatalogKind, readPackageCatalog } from '../../functions/api/dependencies.js'
import type { Repository } from '../../functions/api/repository.js'
import type { KubeObject } from '../../functions/krm/index.js'
import { findRepository, repositoryKey, revisionKey } from '../fleet/fleet.js'
import type { Fleet } from '../fleet/fleet.js'
import { GitSource } from './git-source.js'
import type { CloneDirectory, GitFile, PinnedRefs } from './git-source.js'
import { packageRevisionObject, parseNamedRevisionTags, parseRevisionTags, revisionsOf } from './revisions.js'
import type { PackageRevision } from './revisions.js'

/** The published revisions of the fleet's upstream repositories. */
export interface UpstreamIndex {
  revisions: Map<string, PackageRevision[]>
  /** The same revisions as PackageRevision objects, for fan-out. */
  objects: KubeObject[]
  /** Repositories that could not be read: `namespace|name` → reason. */
  problems: Map<string, string>
}

/** The refs a thread listed, by repository URL (see PinnedRefs), or why it could not open the repository. */
export type UpstreamPins = Record<string, PinnedRefs | { error: string }>

/** Opens repositories by URL, once per run. */
export class GitSources {
  readonly #open = new Map<string, Promise<GitSource>>()

  constructor(
    /** Relative local repository paths are resolved against this directory (the fleet). */
    readonly base: string,
    /** Where remote repositories are cloned. */
    private readonly clones: CloneDirectory,
    /**
     * In a render thread: the refs the main thread listed (they may come
     * later than the thread starts). Repositories it lists are then read at
     * those refs and not fetched again.
     */
    private readonly pinned?: Promise<UpstreamPins | undefined>,
  ) {}

  open(url: string): Promise<GitSource> {
    let source = this.#open.get(url)
    if (!source) {
      source = (async () => {
        const pins = await this.pinned
        const pin = pins && Object.hasOwn(pins, url) ? pins[url] : undefined
        // What the main thread could not open, no thread opens: every thread lists the same revisions.
        if (pin && 'error' in pin) throw new Error(pin.error)
        return GitSource.open(url, this.base, this.clones, pin)
      })()
      this.#open.set(url, source)
    }
    return source
  }

  /** The refs read from every repository opened so far: what the render threads are to read too. */
  async pins(): Promise<UpstreamPins> {
    const pins: UpstreamPins = {}
    for (const [url, source] of this.#open) {
      try {
        pins[url] = (await source).pinnedRefs()
      } catch (err) {
        pins[url] = { error: (err as Error).message }
      }
    }
    return pins
  }

  /** The files of a package directory at a commit of a repository. */
  async readPackage(url: string, commit: string, directory: string): Promise<Map<string, GitFile>> {
    return (await this.open(url)).readDirectory(commit, directory)
  }
}

/** Where a repository's revisions are read from: what listing them needs of a Repository. */
export type RepositoryLocation = Pick<Repository, 'name' | 'namespace' | 'url' | 'branch' | 'directory'>

/** Label of a Repository whose published packages are a catalog of dependencies, though no set or PackageVariant names it as an upstream. */
export const catalogLabel = 'kpt-variants.dev/catalog'

/**
 * The repositories whose revisions a run lists, once each: those named as an
 * upstream by a set or a PackageVariant of the fleet, those labelled as a
 * catalog (`kpt-variants.dev/catalog: "true"`), and those a PackageCatalog
 * names as a version's source.
 */
export function upstreamRepositories(fleet: Fleet): RepositoryLocation[] {
  const wanted = new Map<string, RepositoryLocation>()
  const want = (repo: Repository | undefined) => {
    if (repo)
      wanted.set(repositoryKey(repo), {
        name: repo.name,
        namespace: repo.namespace,
        url: repo.url,
        branch: repo.branch,
        directory: repo.directory,
      })
  }
  for (const object of [...fleet.sets, ...fleet.variants]) {
    const name = object.get(['spec', 'upstream', 'repo'])
    if (typeof name === 'string' && name !== '') want(findRepository(fleet, object.namespace, name))
  }
  for (const repo of fleet.repositories) if (repo.object.getLabel(catalogLabel) === 'true') want(repo)
  for (const object of fleet.objects) {
    if (!isDependencyKind(object, packageCatalogKind)) continue
    const read = readPackageCatalog(object)
    if (!read.ok) continue
    for (const pkg of read.value.packages)
      for (const v of pkg.versions) if (v.source) want(findRepository(fleet, object.namespace, v.source.repo))
  }
  return [...wanted.values()]
}

/** Lists the revisions of `repos`; a repository that cannot be read is a problem of the index. */
export async function listUpstreams(repos: readonly RepositoryLocation[], sources: GitSources): Promise<UpstreamIndex> {
  const index: UpstreamIndex = { revisions: new Map(), objects: [], problems: new Map() }
  for (const repo of repos) {
    let revisions: PackageRevision[]
    try {
      revisions = await listRevisions(repo, await sources.open(repo.url))
    } catch (err) {
      index.problems.set(repositoryKey(repo), (err as Error).message)
      continue
    }
    for (const revision of revisions) {
      const k = revisionKey(repo, revision.packageName)
      let list = index.revisions.get(k)
      if (!list) index.revisions.set(k, (list = []))
      list.push(revision)
      index.objects.push(packageRevisionObject(revision))
    }
  }
  return index
}

/** A digest of what an index lists: equal digests, equal revisions (and problems). */
export function upstreamIndexDigest(index: UpstreamIndex): string {
  return createHash('sha256')
    .update(JSON.stringify([[...index.revisions], [...index.problems]]))
    .digest('hex')
}

/**
 * The revisions of one repository, as Porch would list them: its
 * `<package>/v<N>` tags, older Porch's named tags `<package>/<name>`, and the
 * head of its branch as every package's placeholder revision; only a
 * directory with a Kptfile is a package.
 */
export async function listRevisions(repo: RepositoryLocation, source: GitSource): Promise<PackageRevision[]> {
  const tags = await source.tags()
  const parsed = parseRevisionTags(tags.keys(), repo.directory)
  const named = parseNamedRevisionTags(tags.keys(), repo.directory)
  const commits = parsed.map((t) => tags.get(t.tag)!)
  const hasKptfile = await source.exists([
    ...parsed.map((t, i) => `${commits[i]}:${t.directory}/Kptfile`),
    ...named.map((t) => `${tags.get(t.tag)}:${t.directory}/Kptfile`),
  ])
  const messages = await source.commitMessages(commits)
  const revisions = revisionsOf(repo, parsed, tags, hasKptfile, messages)
  const packageName = (dir: string) => (repo.directory === '' ? dir : dir.slice(repo.directory.length + 1))
  const base = { repository: repo.name, namespace: repo.namespace, revision: -1 }
  named.forEach((t, i) => {
    if (hasKptfile[parsed.length + i])
      revisions.push({
        ...base,
        kind: 'named',
        packageName: packageName(t.directory),
        workspaceName: t.name,
        ref: t.tag,
        commit: tags.get(t.tag)!,
        directory: t.directory,
      })
  })
  const head = await source.branchHead(repo.branch)
  if (head) {
    for (const dir of await source.packageDirectories(head, repo.directory)) {
      revisions.push({
        ...base,
        kind: 'placeholder',
        packageName: packageName(dir),
        workspaceName: repo.branch,
        ref: repo.branch,
        commit: head,
        directory: dir,
      })
    }
  }
  return revisions
}
