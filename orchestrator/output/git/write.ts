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
import { kptfileNotReady, notReadyReason } from '../../package/readiness.js'
import { appendTo } from '../../util/collections.js'
import { workspaceFromMessage } from '../../upstream/revisions.js'
import { importStream } from './fast-import.js'
import type { PackageCommit, Signature } from './fast-import.js'
import { draftDeclaration } from './messages.js'
import type { DraftDeclaration } from './messages.js'
import { publishOrder } from './publish-order.js'
import { commitMessage, publishGroups, publishMessage } from './publish-commits.js'
import type { PublishEntry } from './publish-commits.js'
import { packageDir } from './repository.js'
import type { Draft, RepositorySnapshot } from './repository.js'
import { stopPoint } from '../../util/stop-point.js'

/** A new or changed package to propose as a draft (no files: the package's removal). */
export interface DraftChange {
  package: string
  files?: PackageFiles
  /** The commit message, given the workspace the draft gets. */
  message(workspace: string): string
}

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
  const outcomes: PublishOutcome[] = []
  const publishing = new Set<string>()
  const existing = publish.filter((pkg) => {
    if (changed.has(pkg) || snapshot.drafts[pkg]) return true
    outcomes.push({ package: pkg, ok: false, reason: 'no open draft' })
    return false
  })
  // Dependencies first; a package whose dependency's draft stays open is refused (see publish-order.ts).
  const order =
    existing.length === 0
      ? { ordered: [], needs: new Map<string, string[]>(), refused: [] }
      : publishOrder(
          existing,
          await declarations(snapshot, changed),
          (pkg) => snapshot.drafts[pkg]?.branch ?? `(this run's) of ${pkg}`,
          options.withNeeded === true,
        )
  for (const { package: pkg, reason } of order.refused) outcomes.push({ package: pkg, ok: false, reason })
  for (const pkg of order.ordered) publishing.add(pkg)
  const fromDrafts = [...publishing].filter((pkg) => !changed.has(pkg))
  const used = await workspacesInUse(
    snapshot,
    changes.map((c) => c.package),
  )
  const workspaceOf = (pkg: string) => snapshot.drafts[pkg]?.workspace ?? nextWorkspace(used.get(pkg) ?? [])
  const drafted = await readDrafts(snapshot, fromDrafts)
  const entries: (PublishEntry & { files?: PackageFiles })[] = []
  const forcedNotReady = new Map<string, string>()
  const refuse = (pkg: string, reason: string, notReady?: true) => {
    outcomes.push({ package: pkg, ok: false, reason, ...(notReady ? { notReady } : {}) })
    publishing.delete(pkg)
  }
  for (const pkg of [...publishing]) {
    const change = changed.get(pkg)
    const revision = Math.max(0, ...(snapshot.published[pkg] ?? []).map((p) => p.revision)) + 1
    const base = { package: pkg, directory: packageDir(snapshot, pkg), workspace: workspaceOf(pkg) }
    const draft = change ? undefined : drafted.get(pkg)!
    const blocked = order.needs.get(pkg)?.find((other) => !publishing.has(other))
    if (blocked !== undefined) {
      refuse(
        pkg,
        `it needs the package of draft ${snapshot.drafts[blocked]?.branch ?? blocked}, which is not published`,
      )
      continue
    }
    // Porch neither proposes nor approves a revision whose readiness gates are not all True.
    const notReady = change ? change.files && notReadyReason(change.files) : draft!.notReady
    if (notReady && !options.force) {
      refuse(pkg, notReady, true)
      continue
    }
    if (notReady) forcedNotReady.set(pkg, notReady)
    if (change) {
      entries.push({
        ...base,
        revision: change.files ? revision : 0,
        draftMessage: change.message(base.workspace),
        ...(change.files ? { files: change.files } : {}),
      })
      continue
    }
    if (!draft!.current) {
      refuse(
        pkg,
        `the published package changed after draft ${snapshot.drafts[pkg]!.branch} was made: render again to update the draft`,
      )
      continue
    }
    entries.push({
      ...base,
      revision: draft!.tree ? revision : 0,
      draftMessage: draft!.message,
      ...(draft!.tree ? { tree: draft!.tree } : {}),
    })
  }

  // Into a big directory, packages go as trees written beforehand (see packageTrees).
  const before = Object.keys(snapshot.published).length
  const after = new Set([...Object.keys(snapshot.published), ...entries.map((e) => e.package)]).size
  const asTrees = [
    ...(after > directWriteLimit ? entries : []),
    ...((entries.length > 0 ? after : before) > directWriteLimit
      ? changes.filter((c) => !publishing.has(c.package))
      : []),
  ]
  const trees = await packageTrees(snapshot, asTrees, committer)
  await stopPoint('git-trees-written')
  for (const e of entries) if (trees.has(e.package)) [e.tree, e.files] = [trees.get(e.package)!, undefined]

  // The published branch's new commits first, then the drafts on top of them.
  const commits: PackageCommit[] = []
  const tagged = new Map<string, { revision: number; tag: string; commitIndex: number }>()
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
  const head = commits.length
  const parent = head > 0 ? chainRef : snapshot.head
  const drafts = new Map<string, Draft>()
  const draftIndex = new Map<string, number>()
  for (const change of changes) {
    if (publishing.has(change.package)) continue
    const workspace = workspaceOf(change.package)
    drafts.set(change.package, {
      branch: `drafts/${packageDir(snapshot, change.package)}/${workspace}`,
      commit: '',
      workspace,
    })
    // Each draft names its parent (or has none): the one ref they are written to holds no history of theirs.
    const commit: PackageCommit = {
      ref: draftRef,
      message: change.message(workspace),
      directory: packageDir(snapshot, change.package),
    }
    draftIndex.set(change.package, commits.length)
    if (parent) commit.parent = parent
    else commit.orphan = true
    const tree = trees.get(change.package)
    if (tree) commit.tree = tree
    else if (change.files) commit.files = change.files
    commits.push(commit)
  }
  if (commits.length === 0) return { ok: true, drafts, published: outcomes }

  const written = await importCommits(snapshot, commits, committer)
  await stopPoint('git-commits-imported')
  const updates: RefUpdate[] = []
  const newHead = head > 0 ? written[head - 1] : undefined
  if (newHead) updates.push({ ref: `refs/heads/${snapshot.branch}`, oid: newHead, expect: snapshot.head ?? '' })
  for (const t of tagged.values()) updates.push({ ref: `refs/tags/${t.tag}`, oid: written[t.commitIndex]!, expect: '' })
  for (const [pkg, draft] of drafts) {
    draft.commit = written[draftIndex.get(pkg)!]!
    updates.push({ ref: `refs/heads/${draft.branch}`, oid: draft.commit, expect: snapshot.drafts[pkg]?.commit ?? '' })
  }
  for (const pkg of publishing)
    if (snapshot.drafts[pkg])
      updates.push({ ref: `refs/heads/${snapshot.drafts[pkg].branch}`, expect: snapshot.drafts[pkg].commit })
  const pushed = await pushAndRecord(snapshot, updates)
  if (!pushed.ok) return { ...pushed, published: outcomes }
  await stopPoint('git-pushed')

  if (newHead) snapshot.head = newHead
  for (const [pkg, draft] of drafts) snapshot.drafts[pkg] = draft
  for (const e of entries) {
    const t = tagged.get(e.package)
    if (t)
      (snapshot.published[e.package] ??= []).push({
        revision: t.revision,
        tag: t.tag,
        commit: written[t.commitIndex]!,
        time: committer.time,
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
  return { ok: true, drafts, published: outcomes }
}

/** What each open draft, and each draft of this write, declares (one git process for the open ones). */
async function declarations(
  snapshot: RepositorySnapshot,
  changed: ReadonlyMap<string, DraftChange>,
): Promise<Map<string, DraftDeclaration>> {
  const declared = await openDraftDeclarations(
    snapshot,
    Object.keys(snapshot.drafts).filter((pkg) => !changed.has(pkg)),
  )
  // A draft of this write declares what its message will: the workspace it gets changes nothing of that.
  for (const [pkg, change] of changed) declared.set(pkg, draftDeclaration(`\n\n${change.message('')}`))
  return declared
}

/** What the open drafts of `packages` declare in their messages, by package (one git process). */
export async function openDraftDeclarations(
  snapshot: RepositorySnapshot,
  packages: readonly string[],
): Promise<Map<string, DraftDeclaration>> {
  const declared = new Map<string, DraftDeclaration>()
  const open = packages.filter((pkg) => snapshot.drafts[pkg])
  if (open.length === 0) return declared
  const commits = await catFileBatch(
    snapshot.clone,
    open.map((pkg) => snapshot.drafts[pkg]!.commit),
  )
  open.forEach((pkg, i) => {
    const commit = commits[i]
    if (commit && 'content' in commit) declared.set(pkg, draftDeclaration(commit.content.toString('utf8')))
  })
  return declared
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

/** An open draft as publishing needs it: its package's tree (none: it removes the package), its message, whether it was made from the package as published now, and why it is not ready. */
interface DraftToPublish {
  tree?: string
  message: string
  current: boolean
  notReady?: string
}

/** Reads the open drafts of `packages`: one git process whatever their number. */
async function readDrafts(
  snapshot: RepositorySnapshot,
  packages: readonly string[],
): Promise<Map<string, DraftToPublish>> {
  if (packages.length === 0) return new Map()
  // Each draft's commit, its package's tree in the draft, in the draft's parent, and now (`<commit>:<dir>`: a tree, or
  // missing), and its root Kptfile (the readiness gates).
  const objects = await catFileBatch(
    snapshot.clone,
    packages.flatMap((pkg) => {
      const dir = packageDir(snapshot, pkg)
      const draft = snapshot.drafts[pkg]!.commit
      return [
        draft,
        `${draft}:${dir}`,
        `${draft}^:${dir}`,
        `${snapshot.head ?? emptyTree}:${dir}`,
        `${draft}:${dir}/Kptfile`,
      ]
    }),
  )
  const oidOf = (i: number) => (objects[i]!.type === 'missing' ? undefined : objects[i]!.oid)
  return new Map(
    packages.map((pkg, i) => {
      const commit = objects[5 * i]!
      const tree = oidOf(5 * i + 1)
      const kptfile = objects[5 * i + 4]!
      // A draft without a parent (in a repository without commits) was made from a missing package.
      const draft: DraftToPublish = {
        message: 'content' in commit ? commitMessage(commit.content) : '',
        current: oidOf(5 * i + 2) === oidOf(5 * i + 3),
      }
      const notReady = 'content' in kptfile ? kptfileNotReady(kptfile.content.toString('utf8')) : undefined
      if (notReady) draft.notReady = notReady
      if (tree) draft.tree = tree
      return [pkg, draft]
    }),
  )
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
/** Git's empty tree: the package directory in a repository without commits is missing. */
const emptyTree = '4b825dc642cb6eb9a060e54bf8d69288fbee4904'

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
