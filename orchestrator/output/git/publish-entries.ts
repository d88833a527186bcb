/**
 * What a write publishes (write.ts): the packages asked for, in the order
 * their declared needs allow (publish-order.ts), and each one's entry, from
 * this write's change or from its open draft, or why it is refused. Its
 * reads of the repository are one git process each, whatever the number of
 * packages.
 */
import { catFileBatch } from '../../git/git.js'
import type { PackageFiles } from '../../package/files.js'
import { kptfileNotReady, notReadyReason } from '../../package/readiness.js'
import { draftDeclaration } from './messages.js'
import type { DraftDeclaration } from './messages.js'
import { publishOrder } from './publish-order.js'
import type { PublishOrder } from './publish-order.js'
import { commitMessage } from './publish-commits.js'
import type { PublishEntry } from './publish-commits.js'
import { packageDir } from './repository.js'
import type { RepositorySnapshot } from './repository.js'

/** A new or changed package to propose as a draft (no files: the package's removal). */
export interface DraftChange {
  package: string
  files?: PackageFiles
  /** The commit message, given the workspace the draft gets. */
  message(workspace: string): string
}

/** A package asked for that is not published, and why; `notReady`: it waits for its readiness gates, it did not fail. */
export interface Refusal {
  package: string
  reason: string
  notReady?: true
}

/** A package published: from this write's files, or a tree (its open draft's, or one written beforehand). */
export type WriteEntry = PublishEntry & { files?: PackageFiles }

/** What a write publishes: each package's entry in publish order, and the packages refused on the way. */
export interface Publishing {
  entries: WriteEntry[]
  /** The packages of `entries`. */
  packages: Set<string>
  /** Those published with `force` although not ready, and why they were not. */
  forcedNotReady: Map<string, string>
  refused: Refusal[]
}

/**
 * The packages of `publish` in publish order, dependencies first; one with
 * no open draft and no change in this write is refused, and so is one whose
 * dependency's draft stays open (unless `withNeeded` publishes that too).
 */
export async function orderPublishes(
  snapshot: RepositorySnapshot,
  changed: ReadonlyMap<string, DraftChange>,
  publish: readonly string[],
  withNeeded: boolean,
): Promise<PublishOrder> {
  const refused: Refusal[] = []
  const existing = publish.filter((pkg) => {
    if (changed.has(pkg) || snapshot.drafts[pkg]) return true
    refused.push({ package: pkg, reason: 'no open draft' })
    return false
  })
  const order =
    existing.length === 0
      ? { ordered: [], needs: new Map<string, string[]>(), refused: [] }
      : publishOrder(
          existing,
          await declarations(snapshot, changed),
          (pkg) => snapshot.drafts[pkg]?.branch ?? `(this run's) of ${pkg}`,
          withNeeded,
        )
  return { ...order, refused: [...refused, ...order.refused] }
}

/**
 * Each package of `order` as it is published, in order; a package refused
 * on the way takes the packages that need it along. `force`: a package whose
 * readiness gates are not all True is published anyway.
 */
export async function publishEntries(
  snapshot: RepositorySnapshot,
  changed: ReadonlyMap<string, DraftChange>,
  order: PublishOrder,
  workspaceOf: (pkg: string) => string,
  force: boolean,
): Promise<Publishing> {
  const publishing: Publishing = {
    entries: [],
    packages: new Set(order.ordered),
    forcedNotReady: new Map(),
    refused: [],
  }
  const drafted = await readDrafts(
    snapshot,
    [...publishing.packages].filter((pkg) => !changed.has(pkg)),
  )
  for (const pkg of [...publishing.packages]) {
    const change = changed.get(pkg)
    const blocked = order.needs.get(pkg)?.find((other) => !publishing.packages.has(other))
    const from = change ? { change } : { draft: drafted.get(pkg)! }
    const chosen =
      blocked !== undefined
        ? {
            package: pkg,
            reason: `it needs the package of draft ${snapshot.drafts[blocked]?.branch ?? blocked}, which is not published`,
          }
        : publishEntry(snapshot, pkg, from, workspaceOf(pkg), force)
    if ('reason' in chosen) {
      publishing.refused.push(chosen)
      publishing.packages.delete(pkg)
      continue
    }
    publishing.entries.push(chosen.entry)
    if (chosen.notReady) publishing.forcedNotReady.set(pkg, chosen.notReady)
  }
  return publishing
}

/**
 * The entry publishing `pkg` from this write's change or from its open
 * draft, with why it is not ready where `force` publishes it anyway; or why
 * it is refused. Porch neither proposes nor approves a revision whose
 * readiness gates are not all True, nor does it publish a draft made from a
 * published package that has changed since.
 */
function publishEntry(
  snapshot: RepositorySnapshot,
  pkg: string,
  from: { change: DraftChange } | { draft: DraftToPublish },
  workspace: string,
  force: boolean,
): { entry: WriteEntry; notReady?: string } | Refusal {
  const notReady = 'change' in from ? from.change.files && notReadyReason(from.change.files) : from.draft.notReady
  if (notReady && !force) return { package: pkg, reason: notReady, notReady: true }
  const revision = Math.max(0, ...(snapshot.published[pkg] ?? []).map((p) => p.revision)) + 1
  const base = { package: pkg, directory: packageDir(snapshot, pkg), workspace }
  const forced = notReady ? { notReady } : {}
  if ('change' in from) {
    const { files } = from.change
    return {
      entry: {
        ...base,
        revision: files ? revision : 0,
        draftMessage: from.change.message(workspace),
        ...(files ? { files } : {}),
      },
      ...forced,
    }
  }
  const { tree, message, current } = from.draft
  if (!current)
    return {
      package: pkg,
      reason: `the published package changed after draft ${snapshot.drafts[pkg]!.branch} was made: render again to update the draft`,
    }
  return {
    entry: { ...base, revision: tree ? revision : 0, draftMessage: message, ...(tree ? { tree } : {}) },
    ...forced,
  }
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

/** An open draft as publishing needs it: its package's tree (none: it removes the package), its message, whether it was made from the package as published now, and why it is not ready. */
interface DraftToPublish {
  tree?: string
  message: string
  current: boolean
  notReady?: string
}

/** Git's empty tree: the package directory in a repository without commits is missing. */
const emptyTree = '4b825dc642cb6eb9a060e54bf8d69288fbee4904'

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
