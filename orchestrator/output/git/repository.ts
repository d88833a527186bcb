/**
 * A downstream repository in Porch's layout, read and written through its
 * working clone in the cache:
 *
 *   refs/heads/<branch>                      the published packages
 *   refs/tags/<package dir>/v<N>             published revision N of a package
 *   refs/heads/drafts/<package dir>/<ws>     an open draft: one commit on the published branch
 *
 * Commits are written with one `git fast-import` into private refs and
 * pushed with one atomic, leased `git push`; the clone's branches and tags
 * move only after the remote took them, so a crash or a rejected push never
 * leaves a ref on a partial commit, here or there.
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Repository } from '../../../functions/api/repository.js'
import { catFileBatch, diffTrees, fastImport, listRefs, listRefsWithDates, listTree, pushAtomic, removeRefs, resolveObjects, updateRefs } from '../../git/git.js'
import type { RefUpdate } from '../../git/git.js'
import { gitPackageFiles } from '../../package/files.js'
import type { PackageFiles } from '../../package/files.js'
import { parseRevisionTags, workspaceFromMessage } from '../../upstream/revisions.js'
import { clonePath, cloneSource, syncClone } from '../../git/clones.js'
import type { StoredPackage } from '../output.js'
import { fastImportStream } from './fast-import.js'
import type { PackageCommit, Signature } from './fast-import.js'
import { commitMessage, publishGroups, publishMessage } from './publish-commits.js'
import type { PublishEntry } from './publish-commits.js'
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
export async function openRepository(repo: RepositoryLocation, options: { base: string; cacheDir: string; lockTimeoutMs: number }): Promise<{ snapshot: RepositorySnapshot; lock: Lock }> {
  const source = cloneSource(repo.url, options.base)
  const clone = clonePath(options.cacheDir, source)
  mkdirSync(join(clone, '..'), { recursive: true })
  const lock = await acquireLock(`${clone}.lock`, options.lockTimeoutMs)
  try {
    await syncClone(source, clone)
    return { snapshot: await readSnapshot(repo, source, clone), lock }
  } catch (err) {
    lock.release()
    throw err
  }
}

async function readSnapshot(repo: RepositoryLocation, source: string, clone: string): Promise<RepositorySnapshot> {
  // The tags' dates come with the refs, in the same process: a rollout's soak counts from them.
  const { refs, dates } = await listRefsWithDates(clone, ['refs/heads/', 'refs/tags/'])
  const snapshot: RepositorySnapshot = { name: repo.name, source, clone, branch: repo.branch, directory: repo.directory, drafts: {}, published: {} }
  const head = refs.get(`refs/heads/${repo.branch}`)
  if (head) snapshot.head = head
  for (const [ref, commit] of refs) {
    const match = /^refs\/heads\/drafts\/(.+)\/([^/]+)$/.exec(ref)
    if (!match) continue
    const pkg = packageOf(snapshot, match[1]!)
    // Several drafts of one package (made by hand): the first by name is the open one.
    if (pkg !== undefined && !snapshot.drafts[pkg]) snapshot.drafts[pkg] = { branch: `drafts/${match[1]}/${match[2]}`, commit, workspace: match[2]! }
  }
  const tags = [...refs.keys()].filter((r) => r.startsWith('refs/tags/')).map((r) => r.slice('refs/tags/'.length))
  for (const t of parseRevisionTags(tags, repo.directory)) {
    const pkg = packageOf(snapshot, t.directory)
    if (pkg === undefined) continue
    ;(snapshot.published[pkg] ??= []).push({ revision: t.revision, tag: t.tag, commit: refs.get(`refs/tags/${t.tag}`)!, time: dates.get(`refs/tags/${t.tag}`) ?? 0 })
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

/**
 * Reads packages as published and as drafted, with three git processes
 * whatever their number: the published tree, the drafts' changes against it,
 * and the contents.
 */
export async function readPackages(snapshot: RepositorySnapshot, packages: readonly string[]): Promise<Map<string, StoredPackage>> {
  // No package, no process: a re-render that its record answers reads none, and the published tree may be big.
  if (packages.length === 0) return new Map()
  const wanted = new Map(packages.map((pkg) => [packageDir(snapshot, pkg), pkg]))
  const found = new Map<string, { published?: Map<string, { mode: string; oid: string }>; draft?: Map<string, { mode: string; oid: string }> }>()
  const slot = (pkg: string) => found.get(pkg) ?? found.set(pkg, {}).get(pkg)!
  if (snapshot.head) {
    for (const entry of await listTree(snapshot.clone, snapshot.head, snapshot.directory)) {
      if (entry.type !== 'blob') continue
      const hit = enclosing(entry.path, wanted)
      if (!hit) continue
      const s = slot(hit.pkg)
      ;(s.published ??= new Map()).set(hit.rest, { mode: entry.mode, oid: entry.oid })
    }
  }
  const drafted = packages.filter((pkg) => snapshot.drafts[pkg])
  const changes = await diffTrees(
    snapshot.clone,
    drafted.map((pkg) => [snapshot.drafts[pkg]!.commit, snapshot.head] as const),
  )
  for (const pkg of drafted) {
    const s = slot(pkg)
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
  const oids = [...new Set([...found.values()].flatMap((s) => [...(s.published?.values() ?? []), ...(s.draft?.values() ?? [])].map((e) => e.oid)))]
  const objects = await catFileBatch(snapshot.clone, oids)
  const contents = new Map<string, Buffer>()
  objects.forEach((o, i) => {
    if (!('content' in o)) throw new Error(`repository ${snapshot.source}: object ${oids[i]} is missing`)
    contents.set(oids[i]!, o.content)
  })
  const asFiles = (entries: Map<string, { mode: string; oid: string }>) => gitPackageFiles(new Map([...entries].map(([path, e]) => [path, { mode: e.mode, content: contents.get(e.oid)! }])))
  const out = new Map<string, StoredPackage>()
  for (const [pkg, s] of found) {
    const stored: StoredPackage = {}
    if (s.published) stored.published = asFiles(s.published)
    if (s.draft) stored.draft = asFiles(s.draft)
    out.set(pkg, stored)
  }
  return out
}

/**
 * A digest of each package as published and as drafted, made of the ids of
 * its directory's trees (one git process whatever their number): git names a
 * tree by its content, so packages with the same digest hold the same files,
 * and a re-render can know a package untouched without reading it.
 */
export async function packageDigests(snapshot: RepositorySnapshot, packages: readonly string[]): Promise<Map<string, string>> {
  const names: string[] = []
  for (const pkg of packages) {
    const dir = packageDir(snapshot, pkg)
    if (snapshot.head) names.push(`${snapshot.head}:${dir}`)
    if (snapshot.drafts[pkg]) names.push(`${snapshot.drafts[pkg].commit}:${dir}`)
  }
  const trees = await resolveObjects(snapshot.clone, names)
  let at = 0
  const next = () => trees[at++] ?? 'none'
  // A draft without the directory proposes the package's removal: not the same as no draft.
  return new Map(packages.map((pkg) => [pkg, `git published:${snapshot.head ? next() : 'none'} draft:${snapshot.drafts[pkg] ? next() : 'no draft'}`]))
}

/** The wanted package directory a path is in (the innermost), and the path inside it. */
function enclosing(path: string, wanted: ReadonlyMap<string, string>): { pkg: string; rest: string } | undefined {
  for (let cut = path.lastIndexOf('/'); cut > 0; cut = path.lastIndexOf('/', cut - 1)) {
    const pkg = wanted.get(path.slice(0, cut))
    if (pkg !== undefined) return { pkg, rest: path.slice(cut + 1) }
  }
  return undefined
}

/** The packages on the published branch: directories below the repository's directory that hold a Kptfile (not nested ones). */
export async function publishedPackages(snapshot: RepositorySnapshot): Promise<string[]> {
  if (!snapshot.head) return []
  const dirs = (await listTree(snapshot.clone, snapshot.head, snapshot.directory))
    .filter((e) => e.path === 'Kptfile' || e.path.endsWith('/Kptfile'))
    .map((e) => e.path.slice(0, -'/Kptfile'.length))
    .sort()
  const roots: string[] = []
  for (const dir of dirs) if (!roots.some((r) => dir.startsWith(`${r}/`))) roots.push(dir)
  return roots.map((dir) => packageOf(snapshot, dir)).filter((pkg): pkg is string => pkg !== undefined && pkg !== '')
}

/** A new or changed package to propose as a draft (no files: the package's removal). */
export interface DraftChange {
  package: string
  files?: PackageFiles
  /** The commit message, given the workspace the draft gets. */
  message(workspace: string): string
}

/** The outcome of writing drafts: each package's draft branch, or why the repository refused them. */
export type DraftsWritten = { ok: true; drafts: Map<string, Draft> } | { ok: false; reason: string }

/**
 * Writes each change as a draft: one commit on the published branch,
 * replacing the open draft (or opening `drafts/<package dir>/packagevariant-<N>`,
 * Porch's next workspace name). All of a repository's drafts are pushed at once.
 */
export async function writeDrafts(snapshot: RepositorySnapshot, changes: readonly DraftChange[], committer: Signature): Promise<DraftsWritten> {
  if (changes.length === 0) return { ok: true, drafts: new Map() }
  const used = await workspacesInUse(
    snapshot,
    changes.map((c) => c.package),
  )
  const drafts = new Map<string, Draft>()
  const commits: PackageCommit[] = changes.map((change, i) => {
    const open = snapshot.drafts[change.package]
    const workspace = open?.workspace ?? nextWorkspace(used.get(change.package) ?? [])
    drafts.set(change.package, { branch: `drafts/${packageDir(snapshot, change.package)}/${workspace}`, commit: '', workspace })
    const commit: PackageCommit = { ref: `${pendingPrefix}${i}`, message: change.message(workspace), directory: packageDir(snapshot, change.package) }
    if (snapshot.head) commit.parent = snapshot.head
    if (change.files) commit.files = change.files
    return commit
  })
  const written = await importCommits(snapshot, commits, committer)
  const updates: RefUpdate[] = changes.map((change, i) => {
    const draft = drafts.get(change.package)!
    draft.commit = written.get(commits[i]!.ref)!
    return { ref: `refs/heads/${draft.branch}`, oid: draft.commit, expect: snapshot.drafts[change.package]?.commit ?? '' }
  })
  const pushed = await pushAndRecord(snapshot, updates)
  if (!pushed.ok) return pushed
  for (const [pkg, draft] of drafts) snapshot.drafts[pkg] = draft
  return { ok: true, drafts }
}

/** One package published: its new revision and tag, or why it was not. */
export type PublishOutcome = { package: string; ok: true; revision: number; tag: string; removed: boolean } | { package: string; ok: false; reason: string }

/**
 * Publishes the open drafts of `packages` (every open draft when empty): each
 * becomes a commit on the published branch, tagged `<package dir>/v<N>` with
 * the package's next revision (a draft that removes a package is committed
 * untagged), and its draft branch is deleted. A draft made from a published
 * package that has changed since is refused: rendering again rebases it.
 */
export async function publishDrafts(snapshot: RepositorySnapshot, packages: readonly string[], committer: Signature): Promise<{ outcomes: PublishOutcome[]; rejected?: string }> {
  const outcomes: PublishOutcome[] = []
  const chosen = packages.length > 0 ? [...packages] : Object.keys(snapshot.drafts).sort()
  const drafted = chosen.filter((pkg) => {
    if (snapshot.drafts[pkg]) return true
    outcomes.push({ package: pkg, ok: false, reason: 'no open draft' })
    return false
  })
  if (drafted.length === 0) return { outcomes }
  // The draft's parent and the package tree there, in the draft, and now: `<commit>:<dir>` resolves to a tree or is missing.
  const commits = await catFileBatch(
    snapshot.clone,
    drafted.map((pkg) => snapshot.drafts[pkg]!.commit),
  )
  const parents = commits.map((c) => ('content' in c ? /^parent ([0-9a-f]+)$/m.exec(c.content.toString('utf8'))?.[1] : undefined))
  const trees = await catFileBatch(
    snapshot.clone,
    drafted.flatMap((pkg, i) => {
      const dir = packageDir(snapshot, pkg)
      return [`${snapshot.drafts[pkg]!.commit}:${dir}`, `${parents[i] ?? emptyTree}:${dir}`, `${snapshot.head ?? emptyTree}:${dir}`]
    }),
  )
  const oidOf = (i: number) => (trees[i]!.type === 'missing' ? undefined : trees[i]!.oid)
  const entries: PublishEntry[] = []
  drafted.forEach((pkg, i) => {
    const [drafted, base, now] = [oidOf(3 * i), oidOf(3 * i + 1), oidOf(3 * i + 2)]
    if (base !== now) {
      outcomes.push({ package: pkg, ok: false, reason: `the published package changed after draft ${snapshot.drafts[pkg]!.branch} was made: render again to update the draft` })
      return
    }
    const revision = drafted ? Math.max(0, ...(snapshot.published[pkg] ?? []).map((p) => p.revision)) + 1 : 0
    const draftText = commits[i]!.type === 'missing' ? '' : commitMessage((commits[i] as { content: Buffer }).content)
    entries.push({ package: pkg, directory: packageDir(snapshot, pkg), workspace: snapshot.drafts[pkg]!.workspace, revision, draftMessage: draftText, ...(drafted ? { tree: drafted } : {}) })
  })
  if (entries.length === 0) return { outcomes }
  // Packages share commits only where a commit each would write too many trees (see publishGroups).
  const known = new Set([...Object.keys(snapshot.published), ...entries.map((e) => e.package)])
  const stream: PackageCommit[] = []
  const tagged = new Map<string, { revision: number; tag: string; commitIndex: number }>()
  for (const group of publishGroups(entries, known.size)) {
    const [first, ...rest] = group
    const commit: PackageCommit = { ref: `${pendingPrefix}published`, message: publishMessage(group), directory: first!.directory }
    if (stream.length === 0 && snapshot.head) commit.parent = snapshot.head
    if (first!.tree) commit.tree = first!.tree
    if (rest.length > 0) commit.more = rest.map((e) => ({ directory: e.directory, ...(e.tree ? { tree: e.tree } : {}) }))
    for (const e of group) if (e.tree) tagged.set(e.package, { revision: e.revision, tag: `${e.directory}/v${e.revision}`, commitIndex: stream.length })
    stream.push(commit)
  }
  const written = await importCommits(
    snapshot,
    stream,
    committer,
    [...tagged.values()].map((t) => ({ ref: `${pendingPrefix}tags/${t.tag}`, commitIndex: t.commitIndex })),
  )
  const head = written.get(`${pendingPrefix}published`)!
  const updates: RefUpdate[] = [{ ref: `refs/heads/${snapshot.branch}`, oid: head, expect: snapshot.head ?? '' }]
  for (const t of tagged.values()) updates.push({ ref: `refs/tags/${t.tag}`, oid: written.get(`${pendingPrefix}tags/${t.tag}`)!, expect: '' })
  for (const e of entries) updates.push({ ref: `refs/heads/${snapshot.drafts[e.package]!.branch}`, expect: snapshot.drafts[e.package]!.commit })
  const pushed = await pushAndRecord(snapshot, updates)
  if (!pushed.ok) return { outcomes, rejected: pushed.reason }
  snapshot.head = head
  for (const { package: pkg } of entries) {
    const t = tagged.get(pkg)
    if (t) (snapshot.published[pkg] ??= []).push({ revision: t.revision, tag: t.tag, commit: written.get(`${pendingPrefix}tags/${t.tag}`)!, time: committer.time })
    outcomes.push(t ? { package: pkg, ok: true, revision: t.revision, tag: t.tag, removed: false } : { package: pkg, ok: true, revision: 0, tag: '', removed: true })
    delete snapshot.drafts[pkg]
  }
  return { outcomes }
}

/** Where imported commits wait until the push: never a branch or tag, and removed by the next run if a crash left them. */
const pendingPrefix = 'refs/kpt-variants/pending/'
/** Git's empty tree: the package directory in a repository without commits is missing. */
const emptyTree = '4b825dc642cb6eb9a060e54bf8d69288fbee4904'

/** Imports commits (and tags at some of them) into pending refs; resolves to every pending ref's new commit. */
async function importCommits(
  snapshot: RepositorySnapshot,
  commits: readonly PackageCommit[],
  committer: Signature,
  tags: readonly { ref: string; commitIndex: number }[] = [],
): Promise<Map<string, string>> {
  await removeRefs(snapshot.clone, [pendingPrefix])
  await fastImport(snapshot.clone, fastImportStream(commits, committer, tags))
  return listRefs(snapshot.clone, [pendingPrefix])
}

/** Pushes the updates; then the clone's refs follow the remote's, and the pending refs go, whatever the outcome. */
async function pushAndRecord(snapshot: RepositorySnapshot, updates: readonly RefUpdate[]): Promise<{ ok: true } | { ok: false; reason: string }> {
  const pushed = await pushAtomic(snapshot.clone, 'origin', updates)
  const pending = await listRefs(snapshot.clone, [pendingPrefix])
  const commands = [...pending.keys()].map((ref) => `delete ${ref}`)
  if (pushed.ok) for (const u of updates) commands.push(u.oid ? `update ${u.ref} ${u.oid}` : `delete ${u.ref}`)
  await updateRefs(snapshot.clone, commands)
  return pushed
}

/** The workspace names each package's drafts and published revisions use (Porch's `kpt:` commit annotations). */
async function workspacesInUse(snapshot: RepositorySnapshot, packages: readonly string[]): Promise<Map<string, string[]>> {
  const used = new Map<string, string[]>()
  const revisions = packages.flatMap((pkg) => (snapshot.drafts[pkg] ? [] : (snapshot.published[pkg] ?? []).map((p) => ({ pkg, commit: p.commit }))))
  const messages = await catFileBatch(
    snapshot.clone,
    revisions.map((r) => r.commit),
  )
  revisions.forEach((r, i) => {
    const object = messages[i]!
    const workspace = 'content' in object ? workspaceFromMessage(object.content.toString('utf8'), packageDir(snapshot, r.pkg)) : undefined
    if (workspace) (used.get(r.pkg) ?? used.set(r.pkg, []).get(r.pkg)!).push(workspace)
  })
  return used
}

/** Porch's PackageVariant workspace names: `packagevariant-<N>`, one past the highest in use. */
export function nextWorkspace(used: readonly string[]): string {
  let highest = 0
  for (const name of used) {
    const match = /^packagevariant-(\d+)$/.exec(name)
    if (match) highest = Math.max(highest, Number(match[1]))
  }
  return `packagevariant-${highest + 1}`
}
