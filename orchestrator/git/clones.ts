/**
 * Repository URLs, and clones of repositories kept in a cache directory
 * between runs (downstream working clones, remote upstreams): cloned bare
 * once, then fetched (branches and tags mirrored, deleted ones pruned), never
 * cloned again (where each lives: cache/layout.ts). Anything `git clone`
 * accepts is a repository URL; a local path is resolved against the fleet
 * directory.
 */
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs'
import { isAbsolute, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { git, listRefs, listRefsWithDates } from './git.js'

/** Where a repository URL points: a local git directory, or a URL to clone. */
export function locateRepository(url: string, base: string): { local: string } | { remote: string } {
  if (url.startsWith('file://')) return { local: fileURLToPath(url) }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url) || /^[^/]+@[^/]+:/.test(url)) return { remote: url }
  return { local: isAbsolute(url) ? url : resolve(base, url) }
}

/**
 * A local repository path as git and kpt find it: `repo` also finds the bare
 * repository `repo.git`, as git does, and `repo.git` finds `repo`, as kpt
 * does (it records and clones URLs without `.git`).
 */
export function resolveLocalRepository(path: string): string {
  if (existsSync(path)) return path
  if (existsSync(`${path}.git`)) return `${path}.git`
  if (path.endsWith('.git') && existsSync(path.slice(0, -4))) return path.slice(0, -4)
  return path
}

/** What `git clone` is given for a Repository URL: a local path made absolute (and `repo` found as `repo.git`), else the URL. */
export function cloneSource(url: string, base: string): string {
  const where = locateRepository(url, base)
  return 'local' in where ? resolveLocalRepository(where.local) : where.remote
}

/** A clone's branches and tags (ref -> object), with each tag's committer date (seconds since the epoch). */
export interface CloneRefs {
  refs: Map<string, string>
  tagDates: Map<string, number>
}

/**
 * Lists a clone's branches and tags. The tags' dates come with them (a
 * rollout's soak counts from them); a branch's would read its commit, a
 * draft's each.
 */
export async function listCloneRefs(clone: string): Promise<CloneRefs> {
  const [heads, tags] = await Promise.all([listRefs(clone, ['refs/heads/']), listRefsWithDates(clone, ['refs/tags/'])])
  return { refs: new Map([...heads, ...tags.refs]), tagDates: tags.dates }
}

/**
 * Brings the working clone at `clone` up to date with `source`: a bare clone
 * the first time, a pruning fetch after, and none when the remote's branches
 * and tags are the clone's already (a fetch that brings nothing still compares
 * every ref, which at thousands of drafts costs far more than listing both).
 * Refs a fetch wrote are packed: git reads each loose ref as a file at every
 * listing and push. Resolves to the clone's refs as it listed them when it
 * fetched nothing (they are still the clone's: its caller need not list them
 * again), else to undefined.
 */
export async function syncClone(source: string, clone: string): Promise<CloneRefs | undefined> {
  if (!existsSync(join(clone, 'HEAD'))) {
    mkdirSync(join(clone, '..'), { recursive: true })
    // Cloned beside and renamed into place: a clone killed halfway is never taken for a clone to fetch into.
    const partial = `${clone}.partial`
    rmSync(partial, { recursive: true, force: true })
    await git(['clone', '--bare', '--quiet', source, partial], { cwd: join(clone, '..') })
    rmSync(clone, { recursive: true, force: true })
    renameSync(partial, clone)
    return undefined
  }
  const [remote, local] = await Promise.all([
    git(['ls-remote', '--refs', '--heads', '--tags', 'origin'], { cwd: clone }),
    listCloneRefs(clone),
  ])
  if (sameRefs(remote, local.refs)) return local
  await git(
    ['fetch', '--quiet', '--prune', '--force', 'origin', '+refs/heads/*:refs/heads/*', '+refs/tags/*:refs/tags/*'],
    { cwd: clone },
  )
  await git(['pack-refs', '--all'], { cwd: clone })
  return undefined
}

/** True when `ls-remote`'s lines (`<oid>\t<ref>`) name exactly the refs of `local`, each at the same object. */
function sameRefs(lsRemote: string, local: ReadonlyMap<string, string>): boolean {
  let count = 0
  for (const line of lsRemote.split('\n')) {
    const tab = line.indexOf('\t')
    if (tab < 0) continue
    if (local.get(line.slice(tab + 1)) !== line.slice(0, tab)) return false
    count++
  }
  return count === local.size
}
