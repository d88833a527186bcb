/**
 * `kpt-variants publish REPO [PACKAGE...]`: approves drafts as Porch's
 * `porchctl rpkg approve` does: each draft becomes a commit on the
 * repository's branch, tagged `<package>/v<N>`, and its draft branch goes.
 */
import { resolve } from 'node:path'
import { defaultBranch } from '../../functions/api/repository.js'
import { UsageError } from './cli-io.js'
import type { CliIO } from './cli-io.js'
import { buildFleet, findRepository } from '../fleet/fleet.js'
import { loadFleetDirectory } from '../fleet/load.js'
import { defaultCacheDir } from '../git/clones.js'
import { committerFrom } from '../output/git/git-output.js'
import { openRepository } from '../output/git/repository.js'
import { publishDrafts } from '../output/git/write.js'
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
  const repository = options.fleet ? fromFleet(resolve(io.cwd, options.fleet), repo) : fromUrl(repo, options)
  const base = options.fleet ? resolve(io.cwd, options.fleet) : io.cwd
  const cacheDir = resolve(io.cwd, options.cache ?? defaultCacheDir(io.env))
  const { snapshot, lock } = await openRepository(repository, { base, cacheDir, lockTimeoutMs: options.lockTimeout * 1000 })
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

function fromFleet(fleetDir: string, name: string): RepositoryLocation {
  const fleet = buildFleet(loadFleetDirectory(fleetDir))
  const repository = findRepository(fleet, '', name)
  if (!repository) throw new UsageError(`no Repository named ${JSON.stringify(name)} in the fleet ${fleetDir}`)
  return repository
}

function fromUrl(url: string, options: PublishOptions): RepositoryLocation {
  return { name: url, url, branch: options.branch || defaultBranch, directory: (options.directory ?? '').replace(/^\/+|\/+$/g, '') }
}
