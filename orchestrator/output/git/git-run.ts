/**
 * `kpt-variants render --git`: the downstream repositories of a run, opened
 * (locked, fetched) before rendering, then written as Porch writes them:
 * each changed package a draft branch, abandoned packages a draft that
 * removes (or orphans) them, and with `--publish` every draft of the run
 * published. A repository that cannot be opened or refuses the push fails
 * its own variants only.
 */
import type { Repository } from '../../../functions/api/repository.js'
import { abandonment } from '../../deletions.js'
import type { Fleet } from '../../fleet/fleet.js'
import type { PackageFiles } from '../../package/files.js'
import type { FleetPlan, Shard } from '../../plan.js'
import type { RunReport, VariantReport } from '../../report/report.js'
import { orphanPackage } from '../../variant/ownership.js'
import { packageDiff } from '../diff.js'
import { splitPath } from '../downstreams.js'
import type { Signature } from './fast-import.js'
import type { Lock } from './lock.js'
import { draftMessage } from './messages.js'
import { openRepository, packageDir, publishDrafts, publishedPackages, readPackages, writeDrafts } from './repository.js'
import type { DraftChange, RepositorySnapshot } from './repository.js'

/** The `--git` settings of a render. */
export interface GitSettings {
  /** Where working clones live between runs. */
  cacheDir: string
  /** How long to wait for another run's lock on a repository. */
  lockTimeoutMs: number
  /** Publish the run's drafts (`--publish`): the policy approves them. */
  publish: boolean
}

/** What every thread needs to read the downstream repositories: plain data. */
export interface SharedRepositories {
  snapshots: RepositorySnapshot[]
  /** Repositories that could not be opened, by name, with the reason. */
  unavailable: Record<string, string>
}

/** The downstream repositories of a run, held (locked) until `close`. */
export class GitRepositories {
  readonly #locks: Lock[]
  readonly #byName: Map<string, RepositorySnapshot>

  private constructor(
    readonly shared: SharedRepositories,
    locks: Lock[],
  ) {
    this.#locks = locks
    this.#byName = new Map(shared.snapshots.map((s) => [s.name, s]))
  }

  /** Opens the repositories the plan writes to and every deployment Repository of the fleet (where abandoned packages may be). */
  static async open(fleet: Fleet, plan: FleetPlan, settings: GitSettings): Promise<GitRepositories> {
    const wanted = new Map<string, Repository>()
    for (const v of plan.variants) if (!wanted.has(v.downstream.repo)) wanted.set(v.downstream.repo, v.downstreamRepo)
    for (const repo of fleet.repositories) if (repo.deployment && !wanted.has(repo.name)) wanted.set(repo.name, repo)
    const shared: SharedRepositories = { snapshots: [], unavailable: {} }
    const locks: Lock[] = []
    for (const [name, repo] of [...wanted].sort(([a], [b]) => (a < b ? -1 : 1))) {
      try {
        const { snapshot, lock } = await openRepository(repo, { base: fleet.base, cacheDir: settings.cacheDir, lockTimeoutMs: settings.lockTimeoutMs })
        shared.snapshots.push(snapshot)
        locks.push(lock)
      } catch (err) {
        shared.unavailable[name] = (err as Error).message
      }
    }
    return new GitRepositories(shared, locks)
  }

  /**
   * Proposes each rendered package as a draft, a push per repository; when a
   * repository refuses, its variants fail with the reason and the others are
   * unaffected.
   */
  async writeDrafts(changed: readonly { report: VariantReport; files: PackageFiles }[], committer: Signature): Promise<void> {
    const byRepo = new Map<string, { report: VariantReport; files: PackageFiles }[]>()
    for (const c of changed) {
      const { repo } = splitPath(c.report.path!)
      ;(byRepo.get(repo) ?? byRepo.set(repo, []).get(repo)!).push(c)
    }
    for (const [repo, entries] of byRepo) await this.#propose(repo, entries, committer)
  }

  /** Deletion (or orphaning) drafts for the packages of the opened repositories that no PackageVariant wants any more. */
  async proposeRemovals(plan: FleetPlan, fleet: Fleet, report: RunReport, settings: { dryRun: boolean; diff: boolean; shard?: Shard }, committer: Signature): Promise<void> {
    const abandoned = abandonment(plan, fleet, report, settings.shard)
    if (!abandoned) return
    for (const snapshot of this.shared.snapshots) {
      const candidates = (await publishedPackages(snapshot)).filter((pkg) => !abandoned.claimed(`${snapshot.name}/${pkg}`))
      if (candidates.length === 0) continue
      const stored = await readPackages(snapshot, candidates)
      const entries: { report: VariantReport; files?: PackageFiles }[] = []
      for (const pkg of candidates) {
        const { published, draft } = stored.get(pkg) ?? {}
        const path = `${snapshot.name}/${pkg}`
        const entry = published && abandoned.entry(path, published)
        if (!entry) continue
        const files = entry.status === 'orphaned' ? orphanPackage(published) : undefined
        // Already proposed: the open draft is this very change.
        if (draft && (files ? packageDiff(path, draft, files) === '' : draft.size === 0)) continue
        if (settings.dryRun && settings.diff) entry.diff = packageDiff(path, published, files)
        report.variants.push(entry)
        entries.push(files ? { report: entry, files } : { report: entry })
      }
      if (!settings.dryRun) await this.#propose(snapshot.name, entries, committer)
    }
  }

  /** Publishes the open drafts of the run's packages (`--publish`), recording each tag on its report. */
  async publish(reports: readonly VariantReport[], committer: Signature): Promise<void> {
    const byRepo = new Map<string, Map<string, VariantReport>>()
    for (const r of reports) {
      if (!r.path || r.status === 'failed') continue
      const { repo, pkg } = splitPath(r.path)
      const snapshot = this.#byName.get(repo)
      if (!snapshot?.drafts[pkg]) continue
      ;(byRepo.get(repo) ?? byRepo.set(repo, new Map()).get(repo)!).set(pkg, r)
    }
    for (const [repo, packages] of byRepo) {
      const { outcomes, rejected } = await publishDrafts(this.#byName.get(repo)!, [...packages.keys()], committer)
      for (const outcome of outcomes) {
        const r = packages.get(outcome.package)!
        if (outcome.ok) {
          delete r.draft
          if (outcome.tag) r.published = outcome.tag
        } else r.warnings.push(`not published: ${outcome.reason}`)
      }
      if (rejected) for (const r of packages.values()) fail(r, `publishing to ${this.#byName.get(repo)!.source} was refused: ${rejected}`)
    }
  }

  /** Releases every repository's lock. */
  close(): void {
    for (const lock of this.#locks) lock.release()
  }

  async #propose(repo: string, entries: readonly { report: VariantReport; files?: PackageFiles }[], committer: Signature): Promise<void> {
    const snapshot = this.#byName.get(repo)
    if (!snapshot || entries.length === 0) return
    const changes: DraftChange[] = entries.map(({ report, files }) => {
      const pkg = splitPath(report.path!).pkg
      const change: DraftChange = { package: pkg, message: (workspace) => draftMessage(report, packageDir(snapshot, pkg), workspace) }
      if (files) change.files = files
      return change
    })
    let written
    try {
      written = await writeDrafts(snapshot, changes, committer)
    } catch (err) {
      written = { ok: false as const, reason: (err as Error).message }
    }
    if (!written.ok) {
      for (const { report } of entries) fail(report, `pushing to ${snapshot.source} was refused: ${written.reason}`)
      return
    }
    for (const { report } of entries) report.draft = written.drafts.get(splitPath(report.path!).pkg)!.branch
  }
}

/** The identity commits are made with: git's own environment variables, else kpt-variants. */
export function committerFrom(env: Readonly<Record<string, string | undefined>>, now = Date.now()): Signature {
  return {
    name: env['GIT_COMMITTER_NAME'] || env['GIT_AUTHOR_NAME'] || 'kpt-variants',
    email: env['GIT_COMMITTER_EMAIL'] || env['GIT_AUTHOR_EMAIL'] || 'kpt-variants@localhost',
    time: now / 1000,
  }
}

function fail(report: VariantReport, reason: string): void {
  report.status = 'failed'
  report.reasons.push(reason)
  delete report.draft
  delete report.published
}
