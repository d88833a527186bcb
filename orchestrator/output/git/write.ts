/**
 * Writing a downstream repository (see repository.ts for its layout): a
 * run's drafts and the packages it publishes, all in one `git fast-import`
 * into private refs and one atomic, leased `git push`. A package published
 * in the run that rendered it never gets a draft branch: its commit goes
 * straight onto the published branch, and the other drafts are made on top.
 */
import { catFileBatch, fastImportMarks, pushAtomic, resolveObjects } from '../../git/git.js'
import type { RefUpdate } from '../../git/git.js'
import type { PackageFiles } from '../../package/files.js'
import { appendTo } from '../../util/collections.js'
import { workspaceFromMessage } from '../../upstream/revisions.js'
import { importStream } from './fast-import.js'
import type { PackageCommit, Signature } from './fast-import.js'
import { publishGroups, publishMessage } from './publish-commits.js'
import { orderPublishes, publishEntries } from './publish-entries.js'
import type { DraftChange, Publishing, Refusal, WriteEntry } from './publish-entries.js'
import { packageDir } from './repository.js'
import type { Draft, RepositorySnapshot } from './repository.js'
import { stopPoint } from '../../util/stop-point.js'

export type { DraftChange } from './publish-entries.js'

/** One package published: its new revision and tag, or why it was not. */
export type PublishOutcome =
  | {
      package: string
      ok: true
      revision: number
      tag: string
      removed: boolean
      /** Published with `force` although its readiness gates are not all True: why it was not ready. */
      notReady?: string
    }
  | {
      package: string
      ok: false
      reason: string
      /** Refused because its readiness gates are not all True (`reason` says which): it waits, it did not fail. */
      notReady?: true
    }

/** How a write publishes. */
export interface PublishOptions {
  /** Publish the open drafts a published package needs with it (else it is refused). */
  withNeeded?: boolean
  /** Publish a package whose readiness gates are not all True (else it is refused, as Porch refuses to approve it). */
  force?: boolean
}

/** The outcome of a write: each package's draft branch and each publish's outcome, or why the repository refused them all. */
export type DraftsWritten =
  | { ok: true; drafts: Map<string, Draft>; published: PublishOutcome[] }
  | { ok: false; reason: string; published: PublishOutcome[] }

/**
 * Writes each change as a draft, one commit on the published branch that
 * replaces the open draft (or opens `drafts/<package dir>/packagevariant-<N>`,
 * Porch's next workspace name), and publishes the packages of `publish`:
 * a change of this write as it is, any other from its open draft (each
 * becomes a commit on the branch, tagged `<package dir>/v<N>` with its next
 * revision, and its draft branch goes; see publish-commits.ts for when
 * packages share a commit). A draft made from a published package that has
 * changed since is not published: rendering again rebases it. The failed
 * publishes are in `published` whatever the push's outcome.
 */
export async function writeDrafts(
  snapshot: RepositorySnapshot,
  changes: readonly DraftChange[],
  committer: Signature,
  publish: readonly string[] = [],
  options: PublishOptions = {},
): Promise<DraftsWritten> {
  const changed = new Map(changes.map((c) => [c.package, c]))
  // Dependencies first; a package whose dependency's draft stays open is refused (see publish-order.ts).
  const order = await orderPublishes(snapshot, changed, publish, options.withNeeded === true)
  const used = await workspacesInUse(
    snapshot,
    changes.map((c) => c.package),
  )
  // An open draft keeps its workspace; a new one takes Porch's next name.
  const workspaceOf = (pkg: string) => snapshot.drafts[pkg]?.workspace ?? nextWorkspace(used.get(pkg) ?? [])
  const publishing = await publishEntries(snapshot, changed, order, workspaceOf, options.force === true)
  // The refusals stand whatever the push's outcome.
  const outcomes = [...order.refused, ...publishing.refused].map(refusedOutcome)
  const trees = await writeTrees(snapshot, changes, publishing, committer)
  const planned = plannedCommits(snapshot, changes, publishing, trees, workspaceOf)
  if (planned.commits.length === 0) return { ok: true, drafts: planned.drafts, published: outcomes }
  // Every commit in one fast-import, every ref in one atomic, leased push.
  const written = await importCommits(snapshot, planned.commits, committer)
  await stopPoint('git-commits-imported')
  for (const [pkg, draft] of planned.drafts) draft.commit = written[planned.draftIndex.get(pkg)!]!
  const pushed = await pushAndRecord(snapshot, refUpdates(snapshot, planned, written, publishing.packages))
  if (!pushed.ok) return { ...pushed, published: outcomes }
  await stopPoint('git-pushed')
  outcomes.push(...recordWrite(snapshot, planned, written, publishing, committer.time))
  return { ok: true, drafts: planned.drafts, published: outcomes }
}

function refusedOutcome({ package: pkg, reason, notReady }: Refusal): PublishOutcome {
  return { package: pkg, ok: false, reason, ...(notReady ? { notReady } : {}) }
}

/**
 * Writes the packages bound for a big directory as trees beforehand (see
 * packageTrees): those published when the directory has more than
 * directWriteLimit packages after the write, the drafts when it has before
 * (after, when the write publishes: the drafts are made on top). The entries
 * published take their trees instead of their files.
 */
async function writeTrees(
  snapshot: RepositorySnapshot,
  changes: readonly DraftChange[],
  { entries, packages }: Publishing,
  committer: Signature,
): Promise<Map<string, string>> {
  const before = Object.keys(snapshot.published).length
  const after = new Set([...Object.keys(snapshot.published), ...entries.map((e) => e.package)]).size
  const asTrees = [
    ...(after > directWriteLimit ? entries : []),
    ...((entries.length > 0 ? after : before) > directWriteLimit
      ? changes.filter((c) => !packages.has(c.package))
      : []),
  ]
  const trees = await packageTrees(snapshot, asTrees, committer)
  await stopPoint('git-trees-written')
  for (const e of entries) if (trees.has(e.package)) [e.tree, e.files] = [trees.get(e.package)!, undefined]
  return trees
}

/** A write's commits, in order: the published branch's new ones first (`head` of them), then the drafts on top. */
interface PlannedCommits {
  commits: PackageCommit[]
  head: number
  /** Each package published at a new revision: its tag, and the index of the commit the tag names. */
  tagged: Map<string, { revision: number; tag: string; commitIndex: number }>
  /** The drafts made (their `commit` set once imported), and each one's commit index. */
  drafts: Map<string, Draft>
  draftIndex: Map<string, number>
}

function plannedCommits(
  snapshot: RepositorySnapshot,
  changes: readonly DraftChange[],
  publishing: Publishing,
  trees: ReadonlyMap<string, string>,
  workspaceOf: (pkg: string) => string,
): PlannedCommits {
  const published = publishCommits(snapshot, publishing.entries)
  const head = published.commits.length
  const drafted = draftCommits(
    snapshot,
    changes.filter((c) => !publishing.packages.has(c.package)),
    { parent: head > 0 ? chainRef : snapshot.head, first: head },
    trees,
    workspaceOf,
  )
  return { ...published, ...drafted, commits: [...published.commits, ...drafted.commits], head }
}

/** The published branch's new commits, on its head; each new revision is tagged. */
function publishCommits(
  snapshot: RepositorySnapshot,
  entries: readonly WriteEntry[],
): Pick<PlannedCommits, 'commits' | 'tagged'> {
  const commits: PackageCommit[] = []
  const tagged: PlannedCommits['tagged'] = new Map()
  // Packages share commits only where a commit each would write too many trees (see publishGroups).
  const known = new Set([...Object.keys(snapshot.published), ...entries.map((e) => e.package)])
  for (const group of publishGroups(entries, known.size)) {
    const [first, ...rest] = group.map((e) => ({
      directory: e.directory,
      ...(e.files ? { files: e.files } : {}),
      ...(e.tree ? { tree: e.tree } : {}),
    }))
    const commit: PackageCommit = { ref: chainRef, message: publishMessage(group), ...first! }
    if (commits.length === 0) Object.assign(commit, snapshot.head ? { parent: snapshot.head } : { orphan: true })
    if (rest.length > 0) commit.more = rest
    for (const e of group)
      if (e.revision > 0)
        tagged.set(e.package, {
          revision: e.revision,
          tag: `${e.directory}/v${e.revision}`,
          commitIndex: commits.length,
        })
    commits.push(commit)
  }
  return { commits, tagged }
}

/**
 * A draft of each change, a commit each on `parent` (none: it has no
 * parent), numbered from `first` among the write's commits.
 */
function draftCommits(
  snapshot: RepositorySnapshot,
  changes: readonly DraftChange[],
  { parent, first }: { parent: string | undefined; first: number },
  trees: ReadonlyMap<string, string>,
  workspaceOf: (pkg: string) => string,
): Pick<PlannedCommits, 'commits' | 'drafts' | 'draftIndex'> {
  const drafted: Pick<PlannedCommits, 'commits' | 'drafts' | 'draftIndex'> = {
    commits: [],
    drafts: new Map(),
    draftIndex: new Map(),
  }
  for (const change of changes) {
    const workspace = workspaceOf(change.package)
    const directory = packageDir(snapshot, change.package)
    drafted.drafts.set(change.package, { branch: `drafts/${directory}/${workspace}`, commit: '', workspace })
    // Each draft names its parent (or has none): the one ref they are written to holds no history of theirs.
    const commit: PackageCommit = { ref: draftRef, message: change.message(workspace), directory }
    drafted.draftIndex.set(change.package, first + drafted.commits.length)
    if (parent) commit.parent = parent
    else commit.orphan = true
    const tree = trees.get(change.package)
    if (tree) commit.tree = tree
    else if (change.files) commit.files = change.files
    drafted.commits.push(commit)
  }
  return drafted
}

/**
 * The refs the push moves, each leased on what the snapshot read: the
 * published branch to its new head, the new tags, the drafts made, and the
 * branches of the drafts published, deleted.
 */
function refUpdates(
  snapshot: RepositorySnapshot,
  { head, tagged, drafts }: PlannedCommits,
  written: readonly string[],
  published: ReadonlySet<string>,
): RefUpdate[] {
  const updates: RefUpdate[] = []
  const newHead = head > 0 ? written[head - 1] : undefined
  if (newHead) updates.push({ ref: `refs/heads/${snapshot.branch}`, oid: newHead, expect: snapshot.head ?? '' })
  for (const t of tagged.values()) updates.push({ ref: `refs/tags/${t.tag}`, oid: written[t.commitIndex]!, expect: '' })
  for (const [pkg, draft] of drafts)
    updates.push({ ref: `refs/heads/${draft.branch}`, oid: draft.commit, expect: snapshot.drafts[pkg]?.commit ?? '' })
  for (const pkg of published)
    if (snapshot.drafts[pkg])
      updates.push({ ref: `refs/heads/${snapshot.drafts[pkg].branch}`, expect: snapshot.drafts[pkg].commit })
  return updates
}

/** Records a pushed write in the snapshot (the new head, tags and drafts; the drafts published gone); returns each publish's outcome. */
function recordWrite(
  snapshot: RepositorySnapshot,
  { head, tagged, drafts }: PlannedCommits,
  written: readonly string[],
  { entries, forcedNotReady }: Publishing,
  time: number,
): PublishOutcome[] {
  const outcomes: PublishOutcome[] = []
  const newHead = head > 0 ? written[head - 1] : undefined
  if (newHead) snapshot.head = newHead
  for (const [pkg, draft] of drafts) snapshot.drafts[pkg] = draft
  for (const e of entries) {
    const t = tagged.get(e.package)
    if (t)
      (snapshot.published[e.package] ??= []).push({
        revision: t.revision,
        tag: t.tag,
        commit: written[t.commitIndex]!,
        time,
      })
    const notReady = forcedNotReady.get(e.package)
    outcomes.push(
      t
        ? {
            package: e.package,
            ok: true,
            revision: t.revision,
            tag: t.tag,
            removed: false,
            ...(notReady ? { notReady } : {}),
          }
        : { package: e.package, ok: true, revision: 0, tag: '', removed: true },
    )
    delete snapshot.drafts[e.package]
  }
  return outcomes
}

/** Deletes the open drafts of `packages` (packages never published: nothing else of them is left), in one atomic, leased push. */
export async function deleteDrafts(
  snapshot: RepositorySnapshot,
  packages: readonly string[],
): Promise<{ ok: true } | { ok: false; reason: string }> {
  const updates: RefUpdate[] = packages.flatMap((pkg) =>
    snapshot.drafts[pkg]
      ? [{ ref: `refs/heads/${snapshot.drafts[pkg].branch}`, expect: snapshot.drafts[pkg].commit }]
      : [],
  )
  if (updates.length === 0) return { ok: true }
  const pushed = await pushAndRecord(snapshot, updates)
  if (pushed.ok) for (const pkg of packages) delete snapshot.drafts[pkg]
  return pushed
}

/**
 * Publishes the open drafts of `packages` (every open draft when empty), as
 * `writeDrafts` publishes them: a draft that needs another open draft is
 * refused unless that one is published with it.
 */
export async function publishDrafts(
  snapshot: RepositorySnapshot,
  packages: readonly string[],
  committer: Signature,
  options: Pick<PublishOptions, 'force'> = {},
): Promise<{ outcomes: PublishOutcome[]; rejected?: string }> {
  const chosen = packages.length > 0 ? [...packages] : Object.keys(snapshot.drafts).sort()
  const written = await writeDrafts(snapshot, [], committer, chosen, options)
  return written.ok ? { outcomes: written.published } : { outcomes: written.published, rejected: written.reason }
}

/** From this many packages in the directory a commit writes into on, packages go into it as trees written beforehand. */
const directWriteLimit = 64

/**
 * Writes the files of each package that has some as a tree of its own, with
 * one fast-import (each a parentless commit of that tree alone, on a scratch
 * ref, known by its mark), and resolves to each one's tree. fast-import finds
 * a path in a tree by a linear search, so the 51 files of a package written
 * into a directory of 10,000 packages cost 51 searches of 10,000 entries, a
 * minute for 10,000 packages; a directory set to a tree costs one search.
 */
async function packageTrees(
  snapshot: RepositorySnapshot,
  changes: readonly { package: string; files?: PackageFiles }[],
  committer: Signature,
): Promise<Map<string, string>> {
  const withFiles = changes.filter((c) => c.files && c.files.size > 0)
  if (withFiles.length === 0) return new Map()
  const { stream, commitMarks } = importStream(
    withFiles.map((c) => ({
      ref: treeRef,
      orphan: true,
      message: 'tree\n',
      directory: packageDir(snapshot, c.package),
      files: c.files!,
    })),
    committer,
  )
  const marks = await fastImportMarks(snapshot.clone, stream)
  const trees = await resolveObjects(
    snapshot.clone,
    withFiles.map((c, i) => `${marks.get(commitMarks[i]!)}:${packageDir(snapshot, c.package)}`),
  )
  return new Map(withFiles.map((c, i) => [c.package, trees[i]!]))
}

/**
 * Where imported commits wait until the push, never a branch or tag: the
 * published branch's new commits, the drafts (each naming its parent), the
 * package trees written beforehand. Every commit is found by its mark
 * (`--export-marks`), so a push of thousands of tags and drafts makes no ref
 * of its own here; a ref a crash left is written over, as each first commit
 * names its parent or has none. They stay after the push (a git process
 * less per repository) until the next write writes over them.
 */
const chainRef = 'refs/kpt-variants/pending/published'
const draftRef = 'refs/kpt-variants/pending/drafts'
const treeRef = 'refs/kpt-variants/pending/trees'

/** Imports commits; resolves to each one's id, in order. */
async function importCommits(
  snapshot: RepositorySnapshot,
  commits: readonly PackageCommit[],
  committer: Signature,
): Promise<string[]> {
  const { stream, commitMarks } = importStream(commits, committer)
  const marks = await fastImportMarks(snapshot.clone, stream)
  return commitMarks.map((mark) => marks.get(mark)!)
}

/**
 * Pushes the updates; the clone's refs follow the remote's once it took them.
 * The pending refs stay until the next write writes over them.
 */
async function pushAndRecord(
  snapshot: RepositorySnapshot,
  updates: readonly RefUpdate[],
): Promise<{ ok: true } | { ok: false; reason: string }> {
  // The clone was made from `source`: its origin's URL.
  return pushAtomic(snapshot.clone, 'origin', updates, { url: snapshot.source, mirror: true })
}

/** The workspace names each package's drafts and published revisions use (Porch's `kpt:` commit annotations). */
async function workspacesInUse(
  snapshot: RepositorySnapshot,
  packages: readonly string[],
): Promise<Map<string, string[]>> {
  const used = new Map<string, string[]>()
  const revisions = packages.flatMap((pkg) =>
    snapshot.drafts[pkg] ? [] : (snapshot.published[pkg] ?? []).map((p) => ({ pkg, commit: p.commit })),
  )
  const messages = await catFileBatch(
    snapshot.clone,
    revisions.map((r) => r.commit),
  )
  revisions.forEach((r, i) => {
    const object = messages[i]!
    const workspace =
      'content' in object
        ? workspaceFromMessage(object.content.toString('utf8'), packageDir(snapshot, r.pkg))
        : undefined
    if (workspace) appendTo(used, r.pkg, workspace)
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
