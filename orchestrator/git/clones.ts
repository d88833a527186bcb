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
import { git } from './git.js'

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

/** Brings the working clone at `clone` up to date with `source`: a bare clone the first time, a pruning fetch after. */
export async function syncClone(source: string, clone: string): Promise<void> {
  if (!existsSync(join(clone, 'HEAD'))) {
    mkdirSync(join(clone, '..'), { recursive: true })
    // Cloned beside and renamed into place: a clone killed halfway is never taken for a clone to fetch into.
    const partial = `${clone}.partial`
    rmSync(partial, { recursive: true, force: true })
    await git(['clone', '--bare', '--quiet', source, partial], { cwd: join(clone, '..') })
    rmSync(clone, { recursive: true, force: true })
    renameSync(partial, clone)
    return
  }
  await git(
    ['fetch', '--quiet', '--prune', '--force', 'origin', '+refs/heads/*:refs/heads/*', '+refs/tags/*:refs/tags/*'],
    { cwd: clone },
  )
}
