/**
 * A downstream repository in Porch's layout, read through its working clone
 * in the cache (write.ts writes it):
 *
 *   refs/heads/<branch>                      the published packages
 *   refs/tags/<package dir>/v<N>             published revision N of a package
 *   refs/heads/drafts/<package dir>/<ws>     an open draft: one commit on the published branch
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Repository } from '../../../functions/api/repository.js'
import { catFileBatch, diffTrees, listTree, resolveObjects } from '../../git/git.js'
import { gitPackageFiles } from '../../package/files.js'
import { parseRevisionTags } from '../../upstream/revisions.js'
import { clonePath } from '../../cache/layout.js'
import { cloneSource, listCloneRefs, syncClone } from '../../git/clones.js'
import type { CloneRefs } from '../../git/clones.js'
import type { StoredPackage } from '../output.js'
import { acquireLock } from '../../git/lock.js'
import type { Lock } from '../../git/lock.js'

/** What opening a repository needs of a Repository object. */
export type RepositoryLocation = Pick<Repository, 'name' | 'url' | 'branch' | 'directory'>

/** An open draft of a package. */
export interface Draft {
  /** `drafts/<package dir>/<workspace>` */
  branch: string
  commit: string
  workspace: string
}

/** A repository at the start of a run; plain data, so worker threads read the same snapshot. */
export interface RepositorySnapshot {
  /** The Repository's name: package paths are `<name>/<package>`. */
  name: string
  /** What `git clone` was given. */
  source: string
  /** The working clone (a bare repository). */
  clone: string
  branch: string
  /** `spec.git.directory`: packages live below it (`""`: the repository root). */
  directory: string
  /** The published branch's commit; absent in an empty repository. */
  head?: string
  /** Open drafts by package (relative to `directory`). */
  drafts: Record<string, Draft>
  /** The tags of published revisions by package, lowest revision first. */
  published: Record<string, PublishedTag[]>
}

/** A published revision of a package: its tag, the tagged commit, and that commit's committer date (when it was published). */
export interface PublishedTag {
  revision: number
  tag: string
  commit: string
  /** Seconds since the epoch. */
  time: number
}

/** Locks, syncs and reads the refs of a Repository's working clone. The lock is the caller's to release. */
export async function openRepository(
  repo: RepositoryLocation,
  options: { base: string; cacheDir: string; lockTimeoutMs: number },
): Promise<{ snapshot: RepositorySnapshot; lock: Lock }> {
  const locked = await lockRepository(repo, options)
  return { snapshot: await readLockedRepository(locked), lock: locked.lock }
}

/** A Repository whose working clone this run holds the lock of. */
export interface LockedRepository {
  repo: RepositoryLocation
  source: string
  clone: string
  lock: Lock
}

/**
 * Takes the lock of a Repository's working clone. A run that opens several
 * takes their locks one after another in one order (their names'), so two
 * runs wanting the same ones never each hold one the other waits for.
 */
export async function lockRepository(
  repo: RepositoryLocation,
  options: { base: string; cacheDir: string; lockTimeoutMs: number },
): Promise<LockedRepository> {
  const source = cloneSource(repo.url, options.base)
  const clone = clonePath(options.cacheDir, source)
  mkdirSync(join(clone, '..'), { recursive: true })
  return { repo, source, clone, lock: await acquireLock(`${clone}.lock`, options.lockTimeoutMs) }
}

/** Syncs a locked Repository's clone with the remote and reads its refs; on failure its lock is released. */
export async function readLockedRepository(locked: LockedRepository): Promise<RepositorySnapshot> {
  try {
    // A clone that needed no fetch hands over the refs it compared: the snapshot is read from them.
    const listed = (await syncClone(locked.source, locked.clone)) ?? (await listCloneRefs(locked.clone))
    return readSnapshot(locked.repo, locked.source, locked.clone, listed)
  } catch (err) {
    locked.lock.release()
    throw err
  }
}

/** The snapshot of a clone whose refs are `listed`: its branch's head, its packages' open drafts and published revisions. */
function readSnapshot(
  repo: RepositoryLocation,
  source: string,
  clone: string,
  { refs, tagDates }: CloneRefs,
): RepositorySnapshot {
  const snapshot: RepositorySnapshot = {
    name: repo.name,
    source,
    clone,
    branch: repo.branch,
    directory: repo.directory,
    drafts: {},
    published: {},
  }
  const head = refs.get(`refs/heads/${repo.branch}`)
  if (head) snapshot.head = head
  for (const [ref, commit] of refs) {
    const match = /^refs\/heads\/drafts\/(.+)\/([^/]+)$/.exec(ref)
    if (!match) continue
    const pkg = packageOf(snapshot, match[1]!)
    // Several drafts of one package (made by hand): the first by name is the open one.
    if (pkg !== undefined && !snapshot.drafts[pkg])
      snapshot.drafts[pkg] = { branch: `drafts/${match[1]}/${match[2]}`, commit, workspace: match[2]! }
  }
  const tags = [...refs.keys()].filter((r) => r.startsWith('refs/tags/')).map((r) => r.slice('refs/tags/'.length))
  for (const t of parseRevisionTags(tags, repo.directory)) {
    const pkg = packageOf(snapshot, t.directory)
    if (pkg === undefined) continue
    ;(snapshot.published[pkg] ??= []).push({
      revision: t.revision,
      tag: t.tag,
      commit: refs.get(`refs/tags/${t.tag}`)!,
      time: tagDates.get(`refs/tags/${t.tag}`) ?? 0,
    })
  }
  return snapshot
}

/** The package directory in the repository. */
export function packageDir(snapshot: Pick<RepositorySnapshot, 'directory'>, pkg: string): string {
  return snapshot.directory === '' ? pkg : `${snapshot.directory}/${pkg}`
}

/** The package (relative to the repository's directory) of a directory in the repository, if it is below it. */
function packageOf(snapshot: Pick<RepositorySnapshot, 'directory'>, dir: string): string | undefined {
  if (snapshot.directory === '') return dir
  return dir.startsWith(`${snapshot.directory}/`) ? dir.slice(snapshot.directory.length + 1) : undefined
}

/** A package's files by path below it, each its mode and blob id. */
type Entries = Map<string, { mode: string; oid: string }>

/** The files of each package read, as published and as drafted. */
type FoundPackages = Map<string, { published?: Entries; draft?: Entries }>

/**
 * Reads packages as published and as drafted, with three git processes
 * whatever their number: the published tree, the drafts' changes against it,
 * and the contents.
 */
export async function readPackages(
  snapshot: RepositorySnapshot,
  packages: readonly string[],
): Promise<Map<string, StoredPackage>> {
  // No package, no process: a re-render that its record answers reads none, and the published tree may be big.
  if (packages.length === 0) return new Map()
  const found: FoundPackages = new Map()
  if (snapshot.head) await readPublished(snapshot, packages, found)
  await readDrafted(snapshot, packages, found)
  const contents = await readContents(snapshot, found)
  const asFiles = (entries: Entries) =>
    gitPackageFiles(new Map([...entries].map(([path, e]) => [path, { mode: e.mode, content: contents.get(e.oid)! }])))
  const out = new Map<string, StoredPackage>()
  for (const [pkg, s] of found) {
    const stored: StoredPackage = {}
    if (s.published) stored.published = asFiles(s.published)
    if (s.draft) stored.draft = asFiles(s.draft)
    out.set(pkg, stored)
  }
  return out
}

/** The entry of `pkg` in `found`, made empty the first time. */
function slotOf(found: FoundPackages, pkg: string): { published?: Entries; draft?: Entries } {
  return found.get(pkg) ?? found.set(pkg, {}).get(pkg)!
}

/** The packages' published files: one listing of the branch's tree for all of them. */
async function readPublished(
  snapshot: RepositorySnapshot,
  packages: readonly string[],
  found: FoundPackages,
): Promise<void> {
  const wanted = new Map(packages.map((pkg) => [packageDir(snapshot, pkg), pkg]))
  for (const entry of await listTree(snapshot.clone, snapshot.head!, snapshot.directory)) {
    if (entry.type !== 'blob') continue
    const hit = enclosing(entry.path, wanted)
    if (!hit) continue
    const s = slotOf(found, hit.pkg)
    ;(s.published ??= new Map()).set(hit.rest, { mode: entry.mode, oid: entry.oid })
  }
}

/** The drafted packages' files: the published ones changed as each draft's diff against the branch says. */
async function readDrafted(
  snapshot: RepositorySnapshot,
  packages: readonly string[],
  found: FoundPackages,
): Promise<void> {
  const drafted = packages.filter((pkg) => snapshot.drafts[pkg])
  const changes = await diffTrees(
    snapshot.clone,
    drafted.map((pkg) => [snapshot.drafts[pkg]!.commit, snapshot.head] as const),
  )
  for (const pkg of drafted) {
    const s = slotOf(found, pkg)
    const dir = packageDir(snapshot, pkg)
    const files = new Map(s.published ?? [])
    for (const change of changes.get(snapshot.drafts[pkg]!.commit) ?? []) {
      if (!change.path.startsWith(`${dir}/`)) continue
      const rest = change.path.slice(dir.length + 1)
      if (change.status === 'D') files.delete(rest)
      else files.set(rest, { mode: change.mode, oid: change.oid })
    }
    // A draft that removes the package proposes its deletion.
    if (files.size > 0) s.draft = new Map([...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    else s.draft = new Map()
  }
}

/** The contents of every blob found, each read once, in one git process. */
async function readContents(snapshot: RepositorySnapshot, found: FoundPackages): Promise<Map<string, Buffer>> {
  const oids = [
    ...new Set(
      [...found.values()].flatMap((s) =>
        [...(s.published?.values() ?? []), ...(s.draft?.values() ?? [])].map((e) => e.oid),
      ),
    ),
  ]
  const objects = await catFileBatch(snapshot.clone, oids)
  const contents = new Map<string, Buffer>()
  objects.forEach((o, i) => {
    if (!('content' in o)) throw new Error(`repository ${snapshot.source}: object ${oids[i]} is missing`)
    contents.set(oids[i]!, o.content)
  })
  return contents
}

/**
 * A digest of each package as published and as drafted, made of the ids of
 * its directory's trees (one or two git processes whatever their number): git names a
 * tree by its content, so packages with the same digest hold the same files,
 * and a re-render can know a package untouched without reading it. Many
 * packages' published trees come from one listing of the branch's
 * directories: resolving `<commit>:<dir>` reads the whole root tree each
 * time, so resolving every package of a large directory costs its size
 * squared (see bench/RESULTS.md, 're-render --git 10,000 unchanged drafts').
 */
export async function packageDigests(
  snapshot: RepositorySnapshot,
  packages: readonly string[],
): Promise<Map<string, string>> {
  const listed = snapshot.head && packages.length > listingFrom ? await directoryTrees(snapshot) : undefined
  const names: string[] = []
  for (const pkg of packages) {
    const dir = packageDir(snapshot, pkg)
    if (snapshot.head && !listed) names.push(`${snapshot.head}:${dir}`)
    if (snapshot.drafts[pkg]) names.push(`${snapshot.drafts[pkg].commit}:${dir}`)
  }
  const trees = await resolveObjects(snapshot.clone, names)
  let at = 0
  const next = () => trees[at++] ?? 'none'
  const published = (pkg: string) =>
    !snapshot.head ? 'none' : listed ? (listed.get(packageDir(snapshot, pkg)) ?? 'none') : next()
  // A draft without the directory proposes the package's removal: not the same as no draft.
  return new Map(
    packages.map((pkg) => [pkg, `git published:${published(pkg)} draft:${snapshot.drafts[pkg] ? next() : 'no draft'}`]),
  )
}

/** From this many packages on, their published trees are listed rather than resolved one by one. */
const listingFrom = 64

/** Every directory below the repository's directory on the published branch, with its tree. */
async function directoryTrees(snapshot: RepositorySnapshot): Promise<Map<string, string>> {
  return new Map((await listTree(snapshot.clone, snapshot.head!, snapshot.directory, true)).map((e) => [e.path, e.oid]))
}

/** The wanted package directory a path is in (the innermost), and the path inside it. */
function enclosing(path: string, wanted: ReadonlyMap<string, string>): { pkg: string; rest: string } | undefined {
  for (let cut = path.lastIndexOf('/'); cut > 0; cut = path.lastIndexOf('/', cut - 1)) {
    const pkg = wanted.get(path.slice(0, cut))
    if (pkg !== undefined) return { pkg, rest: path.slice(cut + 1) }
  }
  return undefined
}

/**
 * The packages on the published branch that `claimed` does not claim:
 * directories below the repository's directory that hold a Kptfile, not
 * inside another package. The branch's directories are listed, and only
 * those no claimed package is or holds are asked for a Kptfile: a branch of
 * 10,000 claimed packages costs a listing of 10,000 directories, not of
 * half a million files.
 */
export async function unclaimedPackages(
  snapshot: RepositorySnapshot,
  claimed: (pkg: string) => boolean,
): Promise<string[]> {
  if (!snapshot.head) return []
  const taken = new Set<string>()
  const candidates: string[] = []
  for (const { path: dir } of await listTree(snapshot.clone, snapshot.head, snapshot.directory, true)) {
    const pkg = packageOf(snapshot, dir)
    if (pkg === undefined || pkg === '') continue
    if (claimed(pkg)) taken.add(dir)
    else candidates.push(dir)
  }
  const inside = (dir: string) => {
    for (let cut = dir.lastIndexOf('/'); cut > 0; cut = dir.lastIndexOf('/', cut - 1))
      if (taken.has(dir.slice(0, cut))) return true
    return false
  }
  const open = candidates.filter((dir) => !inside(dir)).sort()
  const kptfiles = await resolveObjects(
    snapshot.clone,
    open.map((dir) => `${snapshot.head}:${dir}/Kptfile`),
  )
  const roots: string[] = []
  open.forEach((dir, i) => {
    if (kptfiles[i] !== undefined && !roots.some((r) => dir.startsWith(`${r}/`))) roots.push(dir)
  })
  return roots.map((dir) => packageOf(snapshot, dir)!)
}
