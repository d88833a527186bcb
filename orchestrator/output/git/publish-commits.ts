/**
 * The commits that publish a repository's drafts (pure): which packages share
 * a commit, and the commits' messages.
 *
 * Porch publishes each package revision as a commit of its own, and so do we,
 * unless that would make git write too many trees: each commit writes a new
 * tree of the directory holding the packages, with an entry per package, so
 * publishing P packages into a directory of D costs P x D entries (10,000 into
 * 10,000 is 10^8 entries: gigabytes of trees for fast-import to write and the
 * remote to index; see bench/RESULTS.md, 'render --git --publish 10,000 new
 * variants'). Beyond `treeEntryBudget` the packages are
 * published in as many commits as the budget allows, in order, each listing
 * its packages and carrying each one's `kpt:` annotation, and each tag names
 * the commit that published its package: Porch and `kpt pkg get` read a
 * revision from its tag's commit and the package's directory there.
 */

/** One draft to publish. */
export interface PublishEntry {
  /** The package, relative to the repository's directory. */
  package: string
  /** Its directory in the repository. */
  directory: string
  workspace: string
  /** The new revision; 0 for a draft that removes the package. */
  revision: number
  /** The package's tree in the draft; absent when the draft removes it. */
  tree?: string
  /** The draft commit's message. */
  draftMessage: string
}

/**
 * The most tree entries a repository's publish writes by giving every
 * package a commit of its own: 1,000 packages published into a directory of
 * 1,000, whose trees git writes and indexes on both sides of the push in a
 * small part of the publish (see bench/RESULTS.md, 'render --git --publish
 * 1,000 new variants').
 */
export const treeEntryBudget = 1_000_000

/**
 * `entries` in commits, in order: one each while `entries.length x
 * directoryEntries` (an estimate of the entries of the trees each commit
 * rewrites) is within the budget, else as many equal groups as it allows.
 */
export function publishGroups<T>(entries: readonly T[], directoryEntries: number, budget = treeEntryBudget): T[][] {
  const commits = Math.max(1, Math.min(entries.length, Math.floor(budget / Math.max(1, directoryEntries))))
  const size = Math.ceil(entries.length / commits)
  const groups: T[][] = []
  for (let at = 0; at < entries.length; at += size) groups.push(entries.slice(at, at + size))
  return groups
}

/** The message of a commit object (its text after the headers). */
export function commitMessage(object: Buffer): string {
  const text = object.toString('utf8')
  const blank = text.indexOf('\n\n')
  return blank < 0 ? '' : text.slice(blank + 2)
}

/**
 * A publishing commit's message. For one package: the draft's message under
 * a first line saying what was published, and Porch's `kpt:` annotation. For
 * several: a line saying how many, then each package's draft message
 * (indented under `<dir> v<N>:`), then an annotation per package.
 */
export function publishMessage(group: readonly PublishEntry[]): string {
  const annotations = group.map(
    (e) =>
      `kpt:${JSON.stringify({ package: e.directory, workspaceName: e.workspace, revision: e.revision > 0 ? `v${e.revision}` : '' })}`,
  )
  if (group.length === 1) {
    const e = group[0]!
    return `${e.revision > 0 ? `Publish ${e.directory} v${e.revision}` : `Remove ${e.directory}`}\n\n${withoutAnnotation(e.draftMessage)}\n\n${annotations[0]}\n`
  }
  const sections = group.map((e) => {
    const [title = '', ...body] = withoutAnnotation(e.draftMessage).split('\n')
    const lines = body.filter((line) => line.trim() !== '').map((line) => `  ${line}`)
    return [`${e.directory} ${e.revision > 0 ? `v${e.revision}` : 'removed'}: ${title}`, ...lines].join('\n')
  })
  const published = group.filter((e) => e.revision > 0).length
  const removed = group.length - published
  const what =
    published === 0
      ? `Remove ${removed} packages`
      : `Publish ${published} package(s)${removed > 0 ? `, remove ${removed}` : ''}`
  return `${what}: ${group[0]!.directory} to ${group[group.length - 1]!.directory}\n\n${sections.join('\n\n')}\n\n${annotations.join('\n')}\n`
}

function withoutAnnotation(message: string): string {
  return message.replace(/^kpt:.*\n?/m, '').trimEnd()
}
