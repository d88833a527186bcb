/**
 * What a publish needs to know of a repository's packages: each one's latest
 * published revision (its tag, commit and date, and where asked the upstream
 * revision it was rendered from, from its Kptfile's `upstreamLock` at the
 * tag) and its open draft (where asked, whether it reports conflicts or
 * removes the package; always, whether its package is ready). One
 * `git cat-file --batch` whatever their number.
 */
import { catFileBatch } from '../../git/git.js'
import { textFile } from '../../package/files.js'
import { readPackageRecord } from '../../package/ownership.js'
import { kptfileNotReady } from '../../package/readiness.js'
import { rolloutRevision } from '../../rollout/gather.js'
import type { PackageState } from '../output.js'
import { commitMessage } from './publish-commits.js'
import { packageDir } from './repository.js'
import type { RepositorySnapshot } from './repository.js'

/** The states of `packages`; `upstreams` and `drafts`: the packages whose upstream revision, and whose draft's content, are read. */
export async function readPackageStates(
  snapshot: RepositorySnapshot,
  packages: readonly string[],
  upstreams: readonly string[],
  drafts: readonly string[],
): Promise<Map<string, PackageState>> {
  const states = new Map<string, PackageState>()
  for (const pkg of packages) {
    const state: PackageState = {}
    const latest = snapshot.published[pkg]?.at(-1)
    if (latest)
      state.published = { tag: latest.tag, commit: latest.commit, upstream: '', time: new Date(latest.time * 1000) }
    if (snapshot.drafts[pkg]) state.draft = {}
    states.set(pkg, state)
  }
  const locks = upstreams.filter((pkg) => states.get(pkg)?.published)
  const opened = drafts.filter((pkg) => snapshot.drafts[pkg])
  const gated = packages.filter((pkg) => snapshot.drafts[pkg])
  const names = [
    ...locks.map((pkg) => `${states.get(pkg)!.published!.commit}:${packageDir(snapshot, pkg)}/Kptfile`),
    ...opened.flatMap((pkg) => [
      snapshot.drafts[pkg]!.commit,
      `${snapshot.drafts[pkg]!.commit}:${packageDir(snapshot, pkg)}`,
    ]),
    // Every open draft's root Kptfile: its readiness gates.
    ...gated.map((pkg) => `${snapshot.drafts[pkg]!.commit}:${packageDir(snapshot, pkg)}/Kptfile`),
  ]
  const objects = await catFileBatch(snapshot.clone, names)
  locks.forEach((pkg, i) => {
    const object = objects[i]!
    const lock =
      'content' in object
        ? readPackageRecord(new Map([['Kptfile', textFile(object.content.toString('utf8'))]])).lock
        : undefined
    if (lock) states.get(pkg)!.published!.upstream = rolloutRevision(lock)
  })
  opened.forEach((pkg, i) => {
    const [commit, tree] = [objects[locks.length + 2 * i]!, objects[locks.length + 2 * i + 1]!]
    const message = 'content' in commit ? commitMessage(commit.content) : ''
    states.get(pkg)!.draft = { conflicts: /^Conflict: /m.test(message), removes: tree.type === 'missing' }
  })
  gated.forEach((pkg, i) => {
    const kptfile = objects[locks.length + 2 * opened.length + i]!
    const notReady = 'content' in kptfile ? kptfileNotReady(kptfile.content.toString('utf8')) : undefined
    if (notReady) states.get(pkg)!.draft!.notReady = notReady
  })
  return states
}
