/**
 * `kpt-variants publish`: approves drafts as Porch's `porchctl rpkg approve`
 * does: each draft becomes a commit on the repository's branch, tagged
 * `<package>/v<N>`, and its draft branch goes.
 *
 *   publish REPO [PACKAGE...]                  a repository by URL: every (or the named) open draft
 *   publish --fleet DIR [REPO [PACKAGE...]]    a fleet's repositories (or one), as its Rollouts allow
 */
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { defaultBranch } from '../../functions/api/repository.js'
import { UsageError } from './cli-io.js'
import type { CliIO } from './cli-io.js'
import { nowOf } from './now.js'
import { parseSelectorOption } from './selector.js'
import { defaultCacheDir } from '../cache/layout.js'
import { GitError } from '../git/git.js'
import { committerFrom } from '../output/git/git-output.js'
import { openRepository } from '../output/git/repository.js'
import { publishDrafts } from '../output/git/write.js'
import type { PublishOutcome } from '../output/git/write.js'
import type { DeletionLimit } from '../plan/deletion-guard.js'
import type { FleetPublishReport } from '../run/publish-fleet.js'
import { deletionGuardOf } from './deletion-options.js'

/** The options commander parsed. */
export interface PublishOptions {
  fleet?: string
  branch?: string
  directory?: string
  cache?: string
  lockTimeout: number
  json?: boolean
  namespace?: string
  /** With --fleet: only variants whose target's labels match. */
  selector?: string
  now?: string
  skipRollout?: boolean
  dryRun?: boolean
  force?: boolean
  maxDeletions?: DeletionLimit
  allowDeletions?: boolean
}

/** Publishes; resolves to 0 when nothing failed (drafts a rollout holds are not failures), else 1. */
export async function publishCommand(
  repo: string | undefined,
  packages: readonly string[],
  options: PublishOptions,
  io: CliIO,
): Promise<number> {
  const now = nowOf(options.now)
  const cacheDir = resolve(io.cwd, options.cache ?? defaultCacheDir(io.env))
  if (options.fleet)
    return publishFleetCommand(resolve(io.cwd, options.fleet), repo, packages, cacheDir, now, options, io)
  if (repo === undefined)
    throw new UsageError('give a REPO to publish, or --fleet DIR to publish the drafts of every repository of a fleet')
  checkRepositoryOptions(options)
  checkNotAFleet(io.cwd, repo)
  const { snapshot, lock } = await openByUrl(repo, options, { cwd: io.cwd, cacheDir })
  try {
    // The drafts chosen as they are before publishing them.
    const chosen = packages.length > 0 ? [...packages] : Object.keys(snapshot.drafts).sort()
    const published = await publishDrafts(snapshot, packages, committerFrom(io.env, now), {
      force: options.force === true,
    })
    const { rejected } = published
    const outcomes = rejected ? withRefusedPush(published.outcomes, chosen, rejected) : published.outcomes
    if (options.json)
      io.stdout(
        `${JSON.stringify({ apiVersion: 'kpt-variants.dev/v1alpha1', kind: 'PublishReport', repository: snapshot.source, published: outcomes, ...(rejected ? { rejected } : {}) }, null, 2)}\n`,
      )
    printOutcomes(outcomes, io)
    if (outcomes.length === 0) io.stderr(`no open drafts in ${snapshot.source}\n`)
    return rejected || outcomes.some((o) => !o.ok) ? 1 : 0
  } finally {
    lock.release()
  }
}

/** Refuses the options that only a fleet gives a meaning to, for a repository given by URL. */
function checkRepositoryOptions(options: PublishOptions): void {
  for (const [option, given] of [
    ['--selector', options.selector],
    ['--skip-rollout', options.skipRollout],
    ['--namespace', options.namespace],
    ['--max-deletions', options.maxDeletions],
    ['--allow-deletions', options.allowDeletions],
  ] as const)
    if (given !== undefined)
      throw new UsageError(
        `${option} needs --fleet: a repository given by URL has no fleet, so no PackageVariants, targets or Rollouts`,
      )
  if (options.dryRun) throw new UsageError('--dry-run needs --fleet')
}

/** The repository at `url`, locked; one that cannot be opened says git's first line of why. */
async function openByUrl(
  url: string,
  options: PublishOptions,
  where: { cwd: string; cacheDir: string },
): ReturnType<typeof openRepository> {
  const repository = {
    name: url,
    url,
    branch: options.branch || defaultBranch,
    directory: (options.directory ?? '').replace(/^\/+|\/+$/g, ''),
  }
  try {
    return await openRepository(repository, {
      base: where.cwd,
      cacheDir: where.cacheDir,
      lockTimeoutMs: options.lockTimeout * 1000,
    })
  } catch (err) {
    const why =
      err instanceof GitError
        ? (err.stderr.split('\n').find((line) => line.trim()) ?? err.message)
        : (err as Error).message
    throw new Error(`repository ${repository.url} cannot be opened: ${why.replace(/^fatal: /, '')}`)
  }
}

/** A refused push published none of them: each says so (its outcome lists only the packages refused before the push). */
function withRefusedPush(outcomes: PublishOutcome[], chosen: readonly string[], rejected: string): PublishOutcome[] {
  return [
    ...outcomes,
    ...chosen
      .filter((pkg) => !outcomes.some((o) => o.package === pkg))
      .map((pkg) => ({ package: pkg, ok: false as const, reason: `the push was refused: ${rejected}` })),
  ]
}

/** A line per package on stderr: published (and its tag), removed, or why not. */
function printOutcomes(outcomes: readonly PublishOutcome[], io: CliIO): void {
  for (const o of outcomes) {
    if (!o.ok)
      io.stderr(`${o.package}: not published: ${o.reason}${o.notReady ? '; --force publishes it anyway' : ''}\n`)
    else if (o.removed) io.stderr(`${o.package}: removed\n`)
    else io.stderr(`${o.package}: published ${o.tag}${o.notReady ? ` although ${o.notReady} (--force)` : ''}\n`)
  }
}

/** A REPO that is a local directory holding no git repository but YAML is a fleet given where a repository goes. */
function checkNotAFleet(cwd: string, repo: string): void {
  const dir = resolve(cwd, repo)
  if (
    !existsSync(dir) ||
    !statSync(dir).isDirectory() ||
    existsSync(join(dir, '.git')) ||
    existsSync(join(dir, 'HEAD'))
  )
    return
  if (readdirSync(dir).some((name) => /\.ya?ml$/.test(name)))
    throw new UsageError(
      `${repo} is a fleet directory, not a git repository: kpt-variants publish --fleet ${repo} publishes its repositories' drafts`,
    )
  throw new UsageError(`${repo} is a directory but not a git repository`)
}

async function publishFleetCommand(
  fleetDir: string,
  repo: string | undefined,
  packages: readonly string[],
  cacheDir: string,
  now: Date,
  options: PublishOptions,
  io: CliIO,
): Promise<number> {
  if (!existsSync(fleetDir) || !statSync(fleetDir).isDirectory())
    throw new UsageError(`fleet directory ${options.fleet} does not exist`)
  if (options.branch !== undefined || options.directory !== undefined)
    throw new UsageError('--branch and --directory are for a REPO given by URL: with --fleet, its Repository says them')
  const selector = options.selector === undefined ? undefined : parseSelectorOption(options.selector)
  if (selector && !selector.ok) throw new UsageError(selector.error)
  const { FleetPublishError, publishFleet } = await import('../run/publish-fleet.js')
  let report: FleetPublishReport
  try {
    report = await publishFleet({
      fleetDir,
      cwd: io.cwd,
      ...(options.namespace ? { namespace: options.namespace } : {}),
      upstreamCache: { dir: cacheDir, lockTimeoutMs: options.lockTimeout * 1000 },
      cacheDir,
      lockTimeoutMs: options.lockTimeout * 1000,
      env: io.env,
      now,
      skipRollout: options.skipRollout === true,
      ...(repo !== undefined ? { repository: repo } : {}),
      packages,
      ...(selector?.ok ? { selector: selector.matches } : {}),
      dryRun: options.dryRun === true,
      force: options.force === true,
      ...deletionGuardOf(options),
    })
  } catch (err) {
    if (err instanceof FleetPublishError) throw new UsageError(err.message)
    throw err
  }
  if (options.json)
    io.stdout(
      `${JSON.stringify({ apiVersion: 'kpt-variants.dev/v1alpha1', kind: 'PublishReport', dryRun: options.dryRun === true, ...report }, null, 2)}\n`,
    )
  io.stderr(formatFleetPublish(report, options.dryRun === true))
  return report.problems.length > 0 || report.packages.some((p) => p.status === 'failed') ? 1 : 0
}

/** The human report: a line per package, each rollout's state, the totals. */
export function formatFleetPublish(report: FleetPublishReport, dryRun: boolean): string {
  const lines: string[] = []
  for (const p of report.packages) {
    if (p.status === 'published')
      lines.push(`${p.package}: published ${p.tag}${p.notReady ? ` although ${p.notReady} (--force)` : ''}`)
    else if (p.status === 'removed') lines.push(`${p.package}: removed`)
    else if (p.status === 'would-publish') lines.push(`${p.package}: would be published`)
    else if (p.status === 'held') lines.push(`${p.package}: ${p.reason}`)
    else lines.push(`${p.package}: not published: ${p.reason}`)
  }
  for (const r of report.rollouts) {
    lines.push('', `Rollout ${r.rollout} (${r.revision}): ${r.state}: ${r.reason}`)
    for (const step of r.steps) lines.push(`  ${step.name}: ${step.state}${step.reason ? `: ${step.reason}` : ''}`)
  }
  for (const w of report.warnings) lines.push(`warning: ${w}`)
  for (const p of report.problems) lines.push(`problem: ${p}`)
  const count = (status: string) => report.packages.filter((p) => p.status === status).length
  const done = dryRun
    ? `${count('would-publish')} would be published`
    : `${count('published')} published, ${count('removed')} removed`
  lines.push(
    '',
    `${dryRun ? 'Dry run (nothing written): ' : ''}${done}, ${count('held')} held back, ${count('failed')} not published`,
  )
  return `${lines.join('\n').replace(/^\n/, '')}\n`
}
