/**
 * The git output (`--git`): the downstream repositories of a run, opened
 * (locked, fetched) before rendering and read by every thread from the same
 * snapshot, then written as Porch writes them: each changed package a draft
 * branch, abandoned packages a draft that removes (or orphans) them, and with
 * `--publish` every draft of the run published. A repository that cannot be
 * opened or refuses the push fails its own variants only.
 */
import { resolve } from 'node:path'
import type { Repository } from '../../../functions/api/repository.js'
import type { Fleet } from '../../fleet/fleet.js'
import type { Lock } from '../../git/lock.js'
import type { PackageFiles } from '../../package/files.js'
import type { FleetPlan } from '../../plan/plan.js'
import type { RunReport, VariantReport } from '../../report/report.js'
import { orphanPackage } from '../../package/ownership.js'
import { packageDiff } from '../diff.js'
import { recordFailures } from '../last-failures.js'
import type { PrefetchOptions, Removal, RemovalSettings, RunOutput, StagedChange, StagedPackage, StoredPackage } from '../output.js'
import { splitPath } from '../output.js'
import type { Signature } from './fast-import.js'
import { draftMessage } from './messages.js'
import { openRepository, packageDigests, packageDir, publishDrafts, publishedPackages, readPackages, writeDrafts } from './repository.js'
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

/**
 * Opens (locks and fetches) the repositories the plan writes to and every
 * deployment Repository of the fleet (where abandoned packages may be); the
 * locks are the caller's to release. A repository that cannot be opened is
 * named with the reason.
 */
export async function openRepositories(fleet: Fleet, plan: FleetPlan, settings: GitSettings): Promise<{ shared: SharedRepositories; locks: Lock[] }> {
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
  return { shared, locks }
}

/**
 * One thread's view of the downstream repositories, read from the snapshot
 * every thread shares, a repository at a time. Their digests (statDigest) are
 * their trees' ids: a package whose trees are those the record of earlier
 * renders holds is not read at all. The main thread's holds the locks and
 * writes.
 */
export class GitOutput implements RunOutput {
  readonly drafts = true
  readonly #repos: Map<string, RepositorySnapshot>
  readonly #read = new Map<string, StoredPackage>()
  readonly #digests = new Map<string, string>()
  /** Who signs the run's commits, and when: taken at the first commit, the same for every commit of the run. */
  #signature: Signature | undefined

  /**
   * `root`: the directory packages are named in (for pipelines run in-process,
   * which see a package's path; nothing is written there); `writes`, on the
   * main thread: the locks it holds, the identity of its commits, and where
   * (`cacheDir`) and under which key the run's failures are recorded.
   */
  constructor(
    readonly shared: SharedRepositories,
    private readonly root: string,
    private readonly writes?: { locks: Lock[]; env: Readonly<Record<string, string | undefined>>; cacheDir: string; failureKey: string },
  ) {
    this.#repos = new Map(shared.snapshots.map((s) => [s.name, s]))
  }

  packageDir(path: string): string {
    return resolve(this.root, path)
  }

  async prefetch(paths: readonly string[], options?: PrefetchOptions): Promise<void> {
    for (const [repo, packages] of this.#byRepo(paths.filter((path) => !this.#read.has(path)))) {
      const snapshot = this.#repos.get(repo)!
      const digests = await this.#takeDigests(repo, packages)
      const unread = packages.filter((pkg) => options?.recorded?.get(`${repo}/${pkg}`) !== digests.get(pkg))
      const read = await readPackages(snapshot, unread)
      for (const pkg of unread) this.#read.set(`${repo}/${pkg}`, read.get(pkg) ?? {})
    }
  }

  async read(path: string): Promise<StoredPackage> {
    if (!this.#read.has(path)) await this.prefetch([path])
    const stored = this.#read.get(path)
    if (!stored) throw new Error(`downstream repository ${JSON.stringify(splitPath(path).repo)} was not opened`)
    // Read once: a share renders each path once, and the memory is better spent on the next one.
    this.#read.delete(path)
    return stored
  }

  statDigest(path: string): string | undefined {
    const digest = this.#digests.get(path)
    this.#digests.delete(path)
    return digest
  }

  async restat(paths: readonly string[]): Promise<void> {
    for (const [repo, packages] of this.#byRepo(paths)) {
      try {
        await this.#takeDigests(repo, packages)
      } catch {
        // The drafts are pushed by now: a package without a digest is only read again next time.
      }
    }
  }

  async stage(files: PackageFiles): Promise<StagedPackage> {
    return { files }
  }

  async settle(): Promise<Map<string, string>> {
    return new Map()
  }

  discard(): void {
    // Held in memory only.
  }

  prepare(): void {
    // Drafts go straight into git: nothing is staged on disk.
  }

  /**
   * Proposes each rendered package as a draft, a push per repository; when a
   * repository refuses, its variants fail with the reason and the others are
   * unaffected.
   */
  async commit(changes: readonly StagedChange[]): Promise<void> {
    const byRepo = new Map<string, { report: VariantReport; files?: PackageFiles }[]>()
    for (const { report, staged } of changes) {
      if (!('files' in staged)) continue
      const { repo } = splitPath(report.path!)
      ;(byRepo.get(repo) ?? byRepo.set(repo, []).get(repo)!).push({ report, files: staged.files })
    }
    for (const [repo, entries] of byRepo) await this.#propose(repo, entries)
  }

  /** Every package of the opened repositories, published or only drafted, but those at `rendered` paths. */
  async otherPackages(rendered: ReadonlySet<string>, only?: readonly string[]): Promise<Map<string, StoredPackage>> {
    const others = new Map<string, StoredPackage>()
    const wanted = only && new Set(only)
    for (const snapshot of this.shared.snapshots) {
      const packages = [...new Set([...(await publishedPackages(snapshot)), ...Object.keys(snapshot.drafts)])]
        .filter((pkg) => !rendered.has(`${snapshot.name}/${pkg}`) && (!wanted || wanted.has(`${snapshot.name}/${pkg}`)))
        .sort()
      if (packages.length === 0) continue
      for (const [pkg, stored] of await readPackages(snapshot, packages)) others.set(`${snapshot.name}/${pkg}`, stored)
    }
    return others
  }

  /** Deletion (or orphaning) drafts, a push per repository; a package whose open draft is already this very change is left out. */
  async remove(removals: readonly Removal[], settings: RemovalSettings): Promise<Removal[]> {
    const proposed: Removal[] = []
    const byRepo = new Map<string, { report: VariantReport; files?: PackageFiles }[]>()
    for (const removal of removals) {
      const { report, stored, orphan } = removal
      const path = report.path!
      const { published, draft } = stored
      if (!published) continue
      const files = orphan ? orphanPackage(published) : undefined
      // Already proposed: the open draft is this very change.
      if (draft && (files ? packageDiff(path, draft, files) === '' : draft.size === 0)) continue
      if (settings.dryRun && settings.diff) report.diff = packageDiff(path, published, files)
      proposed.push(removal)
      const { repo } = splitPath(path)
      ;(byRepo.get(repo) ?? byRepo.set(repo, []).get(repo)!).push(files ? { report, files } : { report })
    }
    if (!settings.dryRun) for (const [repo, entries] of byRepo) await this.#propose(repo, entries)
    return proposed
  }

  /**
   * Publishes the open drafts of the run's packages (`--publish`), and those
   * of earlier runs they need, recording each tag on its report; returns the
   * reports of the latter.
   */
  async publish(reports: readonly VariantReport[]): Promise<VariantReport[]> {
    const published: VariantReport[] = []
    const byRepo = new Map<string, Map<string, VariantReport>>()
    for (const r of reports) {
      if (!r.path || r.status === 'failed') continue
      const { repo, pkg } = splitPath(r.path)
      const snapshot = this.#repos.get(repo)
      if (!snapshot?.drafts[pkg]) continue
      ;(byRepo.get(repo) ?? byRepo.set(repo, new Map()).get(repo)!).set(pkg, r)
    }
    for (const [repo, packages] of byRepo) {
      const { outcomes, rejected } = await publishDrafts(this.#repos.get(repo)!, [...packages.keys()], this.#committer(), { withNeeded: true })
      for (const outcome of outcomes) {
        // A draft of an earlier run that one of this run's needed: published with it.
        const r = packages.get(outcome.package) ?? {
          subject: `Dependency ${repo}/${outcome.package}`,
          path: `${repo}/${outcome.package}`,
          status: 'unchanged' as const,
          reasons: [],
          warnings: [],
          conflicts: [],
        }
        if (!packages.has(outcome.package)) {
          packages.set(outcome.package, r)
          published.push(r)
        }
        if (outcome.ok) {
          delete r.draft
          if (outcome.tag) r.published = outcome.tag
        } else r.warnings.push(`not published: ${outcome.reason}`)
      }
      if (rejected) for (const r of packages.values()) fail(r, `publishing to ${this.#repos.get(repo)!.source} was refused: ${rejected}`)
    }
    return published
  }

  record(report: RunReport): void {
    const { cacheDir, failureKey } = this.#writes()
    recordFailures(cacheDir, failureKey, report)
  }

  /** Releases every repository's lock (the main thread's). */
  close(): void {
    for (const lock of this.writes?.locks ?? []) lock.release()
  }

  #committer(): Signature {
    return (this.#signature ??= committerFrom(this.#writes().env))
  }

  #writes(): NonNullable<GitOutput['writes']> {
    if (!this.writes) throw new Error('only the main thread writes to the downstream repositories')
    return this.writes
  }

  /** The packages of `paths` by repository, of the repositories this run opened. */
  #byRepo(paths: readonly string[]): Map<string, string[]> {
    const byRepo = new Map<string, string[]>()
    for (const path of paths) {
      const { repo, pkg } = splitPath(path)
      if (this.#repos.has(repo)) (byRepo.get(repo) ?? byRepo.set(repo, []).get(repo)!).push(pkg)
    }
    return byRepo
  }

  async #takeDigests(repo: string, packages: readonly string[]): Promise<Map<string, string>> {
    const digests = await packageDigests(this.#repos.get(repo)!, packages)
    for (const [pkg, digest] of digests) this.#digests.set(`${repo}/${pkg}`, digest)
    return digests
  }

  async #propose(repo: string, entries: readonly { report: VariantReport; files?: PackageFiles }[]): Promise<void> {
    const snapshot = this.#repos.get(repo)
    if (!snapshot || entries.length === 0) return
    const changes: DraftChange[] = entries.map(({ report, files }) => {
      const pkg = splitPath(report.path!).pkg
      const change: DraftChange = { package: pkg, message: (workspace) => draftMessage(report, packageDir(snapshot, pkg), workspace) }
      if (files) change.files = files
      return change
    })
    let written
    try {
      written = await writeDrafts(snapshot, changes, this.#committer())
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
