/**
 * Working clones of downstream repositories, kept in a cache directory
 * between runs: cloned bare once, then fetched (branches and tags mirrored,
 * deleted ones pruned), never cloned again. Anything `git clone` accepts is a
 * repository URL; a local path is resolved against the fleet directory.
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { git } from '../../git/git.js'
import { locateRepository, resolveLocalRepository } from '../../upstream/git-source.js'

/** The default cache: `$XDG_CACHE_HOME/kpt-variants`, else `~/.cache/kpt-variants`. */
export function defaultCacheDir(env: Readonly<Record<string, string | undefined>>): string {
  return join(env['XDG_CACHE_HOME'] || join(env['HOME'] || homedir(), '.cache'), 'kpt-variants')
}

/** What `git clone` is given for a Repository URL: a local path made absolute (and `repo` found as `repo.git`), else the URL. */
export function cloneSource(url: string, base: string): string {
  const where = locateRepository(url, base)
  return 'local' in where ? resolveLocalRepository(where.local) : where.remote
}

/** The working clone of a repository in the cache: one directory per clone source. */
export function clonePath(cacheDir: string, source: string): string {
  const name = source
    .replace(/\/+$/, '')
    .replace(/\.git$/, '')
    .split(/[/:]/)
    .pop()!
    .replace(/[^A-Za-z0-9._-]/g, '_')
  return join(cacheDir, 'repos', `${name}-${createHash('sha1').update(source).digest('hex').slice(0, 12)}.git`)
}

/** Brings the working clone at `clone` up to date with `source`: a bare clone the first time, a pruning fetch after. */
export async function syncClone(source: string, clone: string): Promise<void> {
  if (!existsSync(join(clone, 'HEAD'))) {
    mkdirSync(join(clone, '..'), { recursive: true })
    await git(['clone', '--bare', '--quiet', source, clone], { cwd: join(clone, '..') })
    return
  }
  await git(['fetch', '--quiet', '--prune', '--force', 'origin', '+refs/heads/*:refs/heads/*', '+refs/tags/*:refs/tags/*'], { cwd: clone })
}
