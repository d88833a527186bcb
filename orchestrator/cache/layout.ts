/**
 * Where each kind of file lives in the cache directory (`--cache DIR`). The
 * names are derived from what a file is for (an output, a repository URL),
 * never chosen per run, so that every run with the same cache finds them.
 */
import { createHash } from 'node:crypto'
import { homedir } from 'node:os'
import { basename, dirname, join } from 'node:path'

/** The cache's folders, one kind of file each (docs/render.md, "The cache"). */
export const cacheFolders = {
  /** The record of earlier renders of one output (run/memo.ts). */
  renders: 'renders',
  /** The record of a run that changed nothing (run/quiet-run.ts), named as its output's record of renders. */
  quietRuns: 'quiet-runs',
  /** Each variant's last failure, per output (output/last-failures.ts). */
  failures: 'runs',
  /** What each upstream commit declares to the dependency check, per repository (upstream/catalog.ts). */
  catalogs: 'catalogs',
  /** Bare working clones of downstream repositories (`--git`). */
  repos: 'repos',
  /** Bare clones of remote upstream repositories. */
  upstreams: 'upstreams',
  /** A `--git` run's packages staged before they are committed. */
  staging: 'staging',
  /** Snapshots of a cluster's fleet (`--cluster`, the controller), each removed when its run ends. */
  cluster: 'cluster',
} as const

/** The default cache: `$XDG_CACHE_HOME/kpt-variants`, else `~/.cache/kpt-variants`. */
export function defaultCacheDir(env: Readonly<Record<string, string | undefined>>): string {
  return join(env['XDG_CACHE_HOME'] || join(env['HOME'] || homedir(), '.cache'), 'kpt-variants')
}

/** The record of earlier renders into `output` (a directory, or `git <fleet>`). */
export function renderRecordFile(cacheDir: string, output: string): string {
  return join(cacheDir, cacheFolders.renders, `${digest('sha256', output, 32)}.json`)
}

/** The quiet-run record of the output whose record of renders is `renderRecord` (settings carry only that path). */
export function quietRunFile(renderRecord: string): string {
  return join(dirname(dirname(renderRecord)), cacheFolders.quietRuns, basename(renderRecord))
}

/** The last failures recorded under `key` (output/last-failures.ts says what the key is). */
export function failuresFile(cacheDir: string, key: string): string {
  return join(cacheDir, cacheFolders.failures, `${digest('sha1', key, 16)}.json`)
}

/** The catalog entries of the repository at `url`. */
export function catalogFile(cacheDir: string, url: string): string {
  return join(cacheDir, cacheFolders.catalogs, `${digest('sha256', url, 32)}.json`)
}

/** A bare clone of `source`: named after the repository, for a person looking, and its hash, to be one per source. */
export function clonePath(cacheDir: string, source: string, kind: 'repos' | 'upstreams' = 'repos'): string {
  const name = source
    .replace(/\/+$/, '')
    .replace(/\.git$/, '')
    .split(/[/:]/)
    .pop()!
    .replace(/[^A-Za-z0-9._-]/g, '_')
  return join(cacheDir, cacheFolders[kind], `${name}-${digest('sha1', source, 12)}.git`)
}

/** Where a `--git` run stages its packages. */
export function stagingDir(cacheDir: string): string {
  return join(cacheDir, cacheFolders.staging)
}

/** Where cluster snapshots are written. */
export function clusterDir(cacheDir: string): string {
  return join(cacheDir, cacheFolders.cluster)
}

// The algorithms and lengths are those of the first caches: changed, every clone would be made again.
function digest(algorithm: 'sha1' | 'sha256', text: string, length: number): string {
  return createHash(algorithm).update(text).digest('hex').slice(0, length)
}
