/**
 * `kpt-variants publish REPO [PACKAGE...]`: approves drafts as Porch's
 * `porchctl rpkg approve` does: each draft becomes a commit on the
 * repository's branch, tagged `<package>/v<N>`, and its draft branch goes.
 */
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { defaultBranch } from '../../functions/api/repository.js'
import { UsageError } from './cli-io.js'
import type { CliIO } from './cli-io.js'
import { buildFleet, findRepository } from '../fleet/fleet.js'
import { loadFleetDirectory } from '../fleet/load.js'
import { defaultCacheDir } from '../git/clones.js'
import { GitError } from '../git/git.js'
import { committerFrom } from '../output/git/git-output.js'
import { openRepository, publishDrafts } from '../output/git/repository.js'
import type { RepositoryLocation } from '../output/git/repository.js'

/** The options commander parsed. */
export interface PublishOptions {
  fleet?: string
  branch?: string
  directory?: string
  cache?: string
  lockTimeout: number
  json?: boolean
}

/** Publishes; resolves to 0 when every named draft was published, else 1. */
export async function publishCommand(repo: string, packages: readonly string[], options: PublishOptions, io: CliIO): Promise<number> {
  if (options.fleet) checkFleetDirectory(io.cwd, options.fleet)
  else checkNotAFleet(io.cwd, repo)
  const repository = options.fleet ? fromFleet(resolve(io.cwd, options.fleet), repo) : fromUrl(repo, options)
  const base = options.fleet ? resolve(io.cwd, options.fleet) : io.cwd
  const cacheDir = resolve(io.cwd, options.cache ?? defaultCacheDir(io.env))
  let opened
  try {
    opened = await openRepository(repository, { base, cacheDir, lockTimeoutMs: options.lockTimeout * 1000 })
  } catch (err) {
    const why = err instanceof GitError ? (err.stderr.split('\n').find((line) => line.trim()) ?? err.message) : (err as Error).message
    throw new Error(`repository ${repository.url} cannot be opened: ${why.replace(/^fatal: /, '')}`)
  }
  const { snapshot, lock } = opened
  try {
    const { outcomes, rejected } = await publishDrafts(snapshot, packages, committerFrom(io.env))
    if (options.json)
      io.stdout(`${JSON.stringify({ apiVersion: 'kpt-variants.dev/v1alpha1', kind: 'PublishReport', repository: snapshot.source, published: outcomes, ...(rejected ? { rejected } : {}) }, null, 2)}\n`)
    for (const o of outcomes) {
      if (!o.ok) io.stderr(`${o.package}: not published: ${o.reason}\n`)
      else if (rejected) io.stderr(`${o.package}: not published: the push was refused: ${rejected}\n`)
      else io.stderr(o.removed ? `${o.package}: removed\n` : `${o.package}: published ${o.tag}\n`)
    }
    if (outcomes.length === 0) io.stderr(`no open drafts in ${snapshot.source}\n`)
    return rejected || outcomes.some((o) => !o.ok) ? 1 : 0
  } finally {
    lock.release()
  }
}

/** `--fleet DIR` must be a directory. */
function checkFleetDirectory(cwd: string, fleet: string): void {
  const dir = resolve(cwd, fleet)
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UsageError(`fleet directory ${fleet} does not exist`)
}

/** A REPO that is a local directory holding no git repository but YAML is a fleet given where its repository's name goes. */
function checkNotAFleet(cwd: string, repo: string): void {
  const dir = resolve(cwd, repo)
  if (!existsSync(dir) || !statSync(dir).isDirectory() || existsSync(join(dir, '.git')) || existsSync(join(dir, 'HEAD'))) return
  if (readdirSync(dir).some((name) => /\.ya?ml$/.test(name)))
    throw new UsageError(`${repo} is a fleet directory, not a git repository: name one of its Repositories, e.g. kpt-variants publish edge-01 --fleet ${repo}`)
  throw new UsageError(`${repo} is a directory but not a git repository`)
}

function fromFleet(fleetDir: string, name: string): RepositoryLocation {
  const fleet = buildFleet(loadFleetDirectory(fleetDir))
  const repository = findRepository(fleet, '', name)
  if (!repository) throw new UsageError(`no Repository named ${JSON.stringify(name)} in the fleet ${fleetDir}`)
  return repository
}

function fromUrl(url: string, options: PublishOptions): RepositoryLocation {
  return { name: url, url, branch: options.branch || defaultBranch, directory: (options.directory ?? '').replace(/^\/+|\/+$/g, '') }
}
