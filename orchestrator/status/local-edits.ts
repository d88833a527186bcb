/**
 * Local edits: whether a package differs from what kpt-variants last left
 * there.
 *
 * With `--out`, the record of earlier renders (run/memo.ts) keeps a digest
 * of the files each variant's render left, and of their metadata: the
 * package has no edits when either still matches. A render merges local
 * edits into what it writes, so an edit counts until the next render. With
 * no record (another `--cache`, a render that failed or whose pipeline ran
 * in kpt), or one of a render that was not written, nobody knows.
 *
 * With `--git`, the package on the branch against its latest published
 * revision (the tag): a commit on the branch that changed it since is an edit.
 */
import { git, resolveObjects } from '../git/git.js'
import { packageDir } from '../output/git/repository.js'
import type { RepositorySnapshot } from '../output/git/repository.js'
import type { StoredPackage } from '../output/output.js'
import { filesDigest } from '../run/memo.js'
import type { MemoEntry } from '../run/memo.js'
import type { StoredState } from './fleet-status.js'

export type Edits = NonNullable<StoredState['edits']>

/**
 * The edits of a package in an output directory: `entry` is the record of
 * its last render, `stat` its metadata digest now (statPackageDirectory,
 * undefined when the files are too new to trust it), `stored` its files.
 */
export function directoryEdits(entry: MemoEntry | undefined, stat: string | undefined, stored: StoredPackage): Edits {
  if (!entry) return { state: 'unknown', reason: 'the cache holds no record of its last render' }
  if (entry.held)
    return { state: 'unknown', reason: 'its last render was not written (its dependencies could not be met)' }
  if (entry.stat !== undefined && stat === entry.stat) return { state: 'none' }
  return filesDigest(stored) === entry.files ? { state: 'none' } : { state: 'edited' }
}

/**
 * The edits of published packages of a repository: the package's tree on the
 * branch against the tree its latest tag holds (one git process), and for an
 * edited one how many commits on the branch changed it since.
 */
export async function gitEdits(snapshot: RepositorySnapshot, packages: readonly string[]): Promise<Map<string, Edits>> {
  const edits = new Map<string, Edits>()
  const head = snapshot.head
  if (!head) return edits
  const tagged: { pkg: string; tag: string; dir: string }[] = []
  for (const pkg of packages) {
    const revisions = snapshot.published[pkg] ?? []
    const latest = revisions[revisions.length - 1]
    if (latest) tagged.push({ pkg, tag: latest.tag, dir: packageDir(snapshot, pkg) })
    else
      edits.set(pkg, {
        state: 'unknown',
        reason: `no published revision (tag) of it to compare the package on ${snapshot.branch} with`,
      })
  }
  const trees = await resolveObjects(
    snapshot.clone,
    tagged.flatMap(({ tag, dir }) => [`refs/tags/${tag}:${dir}`, `${head}:${dir}`]),
  )
  for (const [i, { pkg, tag, dir }] of tagged.entries()) {
    if (trees[2 * i] === trees[2 * i + 1]) {
      edits.set(pkg, { state: 'none' })
      continue
    }
    const count = Number(
      (await git(['rev-list', '--count', `refs/tags/${tag}..${head}`, '--', dir], { cwd: snapshot.clone })).trim(),
    )
    const reason =
      count > 0
        ? `${count} commit(s) on ${snapshot.branch} changed it since ${tag}`
        : `the package on ${snapshot.branch} differs from ${tag}`
    edits.set(pkg, { state: 'edited', reason })
  }
  return edits
}
