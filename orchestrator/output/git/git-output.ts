/**
 * The git output (`--git`): the downstream repositories of a run, opened
 * (locked, fetched) before rendering and read by every thread from the same
 * snapshot, then written as Porch writes them: each changed package a draft
 * branch, abandoned packages a draft that removes (or orphans) them, and with
 * `--publish` the packages the run may publish (run/publish-gate.ts decides)
 * published in the same write, without a draft branch in between. A
 * repository that cannot be opened or refuses the push fails its own variants only.
 */
import { resolve } from 'node:path'
import type { Repository } from '../../../functions/api/repository.js'
import type { Fleet } from '../../fleet/fleet.js'
import { forEachConcurrently } from '../../git/concurrency.js'
import type { Lock } from '../../git/lock.js'
import type { PackageFiles } from '../../package/files.js'
import type { FleetPlan } from '../../plan/plan.js'
import type { RunReport, VariantReport } from '../../report/report.js'
import { orphanPackage } from '../../package/ownership.js'
import { packageDiff } from '../diff.js'
import { appendTo } from '../../util/collections.js'
import { recordFailures } from '../last-failures.js'
import type {
  PackageState,
  PrefetchOptions,
  Removal,
  RemovalSettings,
  Restat,
  RunOutput,
  StagedChange,
  StateReads,
  StoredPackage,
} from '../output.js'
import { splitPath } from '../output.js'
import type { Signature } from './fast-import.js'
import { draftMessage } from './messages.js'
import {
  lockRepository,
  packageDigests,
  packageDir,
  readLockedRepository,
  readPackages,
  unclaimedPackages,
} from './repository.js'
import type { LockedRepository, RepositorySnapshot } from './repository.js'
import { heldForDeletion } from '../../rollout/pacing.js'
import { readPackageStates } from './package-states.js'
import { deleteDrafts, writeDrafts } from './write.js'
import type { DraftChange, DraftsWritten, PublishOutcome } from './write.js'
import { failure } from '../../report/failure.js'

/** The `--git` settings of a render. */
export interface GitSettings {
  /** Where working clones live between runs. */
  cacheDir: string
  /** How long to wait for another run's lock on a repository. */
  lockTimeoutMs: number
  /** Publish the run's drafts (`--publish`): the policy approves them, as far as rollouts allow. */
  publish: boolean
  /** With `publish`: publish drafts that report conflicts too (`--publish-conflicts`), and drafts that remove a package (`--publish-deletions`). */
  publishConflicts?: boolean
  publishDeletions?: boolean
}

/** What every thread needs to read the downstream repositories: plain data. */
export interface SharedRepositories {
  snapshots: RepositorySnapshot[]
  /** Repositories that could not be opened, by name, with the reason. */
  unavailable: Record<string, string>
}

/**
 * Opens (locks and fetches) the repositories the plan writes to and every
 * deployment Repository of the fleet (where abandoned packages may be), or
 * of those only the ones named in `only`; the locks are the caller's to
 * release. A repository that cannot be opened is named with the reason.
 */
export async function openRepositories(
  fleet: Fleet,
  plan: FleetPlan,
  settings: GitSettings,
  only?: ReadonlySet<string>,
): Promise<{ shared: SharedRepositories; locks: Lock[] }> {
  const wanted = new Map<string, Repository>()
  for (const v of plan.variants) if (!wanted.has(v.downstream.repo)) wanted.set(v.downstream.repo, v.downstreamRepo)
  for (const repo of fleet.repositories) if (repo.deployment && !wanted.has(repo.name)) wanted.set(repo.name, repo)
  if (only) for (const name of [...wanted.keys()]) if (!only.has(name)) wanted.delete(name)
  const shared: SharedRepositories = { snapshots: [], unavailable: {} }
  const locks: Lock[] = []
  // The locks one after another in name order (see lockRepository); the fetches at once.
  const locked: LockedRepository[] = []
  for (const [name, repo] of [...wanted].sort(([a], [b]) => (a < b ? -1 : 1))) {
    try {
      locked.push(
        await lockRepository(repo, {
          base: fleet.base,
          cacheDir: settings.cacheDir,
          lockTimeoutMs: settings.lockTimeoutMs,
        }),
      )
    } catch (err) {
      shared.unavailable[name] = (err as Error).message
    }
  }
  await forEachConcurrently(locked, async (repository) => {
    try {
      shared.snapshots.push(await readLockedRepository(repository))
      locks.push(repository.lock)
    } catch (err) {
      shared.unavailable[repository.repo.name] = (err as Error).message
    }
  })
  // In name order, whatever order they opened in: every thread of a run reads the same list.
  shared.snapshots.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  return { shared, locks }
}

/**
 * One thread's view of the downstream repositories, read from the snapshot
 * every thread shares, a repository at a time. Their digests (statDigest) are
 * their trees' ids: a package whose trees are those the record of earlier
 * renders holds is not read at all, and are taken again after a push
 * (Restat). Staged packages are held in memory until the commit writes them
 * (it has no Staging). The main thread's holds the locks and writes.
 */
export class GitOutput implements RunOutput, Restat {
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
    private readonly writes?: {
      locks: Lock[]
      env: Readonly<Record<string, string | undefined>>
      now?: Date
      cacheDir: string
      failureKey: string
      /** `publish --force`: publish drafts whose readiness gates are not all True too. */
      forcePublish?: boolean
    },
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
    await forEachConcurrently(this.#byRepo(paths), async ([repo, packages]) => {
      try {
        await this.#takeDigests(repo, packages)
      } catch {
        // The drafts are pushed by now: a package without a digest is only read again next time.
      }
    })
  }

  /**
   * Proposes each rendered package as a draft, and publishes the packages of
   * `publish`, in one write per repository; when a repository refuses, its
   * variants fail with the reason and the others are unaffected. With
   * `withNeeded` (a render's publish) the open drafts a published package
   * needs are published with it; without (packages a person named), a
   * package whose needs are not published is refused.
   */
  async commit(
    changes: readonly StagedChange[],
    publish: ReadonlyMap<string, VariantReport> = new Map(),
    withNeeded = true,
  ): Promise<VariantReport[]> {
    const byRepo = new Map<string, { entries: Proposal[]; publish: Map<string, VariantReport> }>()
    const slot = (repo: string) => byRepo.get(repo) ?? byRepo.set(repo, { entries: [], publish: new Map() }).get(repo)!
    for (const { report, staged } of changes) {
      if ('files' in staged) slot(splitPath(report.path!).repo).entries.push({ report, files: staged.files })
    }
    for (const [path, report] of publish) {
      const { repo, pkg } = splitPath(path)
      if (this.#repos.has(repo)) slot(repo).publish.set(pkg, report)
    }
    const needed: VariantReport[] = []
    await forEachConcurrently(
      byRepo,
      async ([repo, { entries, publish }]) =>
        void needed.push(...(await this.#propose(repo, entries, publish, withNeeded))),
    )
    return needed
  }

  /** Every package of the opened repositories, published or only drafted, but those at `rendered` paths. */
  async otherPackages(rendered: ReadonlySet<string>, only?: readonly string[]): Promise<Map<string, StoredPackage>> {
    const others = new Map<string, StoredPackage>()
    const wanted = only && new Set(only)
    await forEachConcurrently(this.shared.snapshots, async (snapshot) => {
      const ours = (pkg: string) =>
        rendered.has(`${snapshot.name}/${pkg}`) || (wanted !== undefined && !wanted.has(`${snapshot.name}/${pkg}`))
      const packages = [
        ...new Set([
          ...(await unclaimedPackages(snapshot, ours)),
          ...Object.keys(snapshot.drafts).filter((pkg) => !ours(pkg)),
        ]),
      ].sort()
      if (packages.length === 0) return
      for (const [pkg, stored] of await readPackages(snapshot, packages)) others.set(`${snapshot.name}/${pkg}`, stored)
    })
    return others
  }

  /**
   * Deletion (or orphaning) drafts, one write per repository, published at
   * once as `settings.publish` says; a package whose open draft is already
   * this very change is left out (or only published). A package never
   * published loses its draft instead (or, orphaned, gets one without its owner).
   */
  async remove(removals: readonly Removal[], settings: RemovalSettings): Promise<Removal[]> {
    const proposed: Removal[] = []
    const byRepo = new Map<string, { entries: Proposal[]; publish: Map<string, VariantReport>; gone: Removal[] }>()
    const slot = (repo: string) =>
      byRepo.get(repo) ?? byRepo.set(repo, { entries: [], publish: new Map(), gone: [] }).get(repo)!
    for (const removal of removals) {
      const { report, stored, orphan } = removal
      const path = report.path!
      const { repo, pkg } = splitPath(path)
      const { published, draft } = stored
      const publishes = orphan ? settings.publish?.orphans : settings.publish?.deletions
      if (!published) {
        // Never published: deleting it is deleting its draft; orphaning it, a draft without the owner.
        if (!draft || draft.size === 0) continue
        proposed.push(removal)
        if (settings.dryRun && settings.diff)
          report.diff = packageDiff(path, draft, orphan ? orphanPackage(draft, report.warnings) : undefined)
        if (!orphan) slot(repo).gone.push(removal)
        else {
          slot(repo).entries.push({ report, files: orphanPackage(draft, report.warnings) })
          if (publishes) slot(repo).publish.set(pkg, report)
        }
        continue
      }
      const files = orphan ? orphanPackage(published, report.warnings) : undefined
      // Already proposed: the open draft is this very change (published now if it may be).
      const already = draft !== undefined && (files ? packageDiff(path, draft, files) === '' : draft.size === 0)
      if (already && !publishes) continue
      if (settings.dryRun && settings.diff) report.diff = packageDiff(path, published, files)
      if (settings.publish && !publishes) report.held = heldForDeletion
      proposed.push(removal)
      if (!already) slot(repo).entries.push(files ? { report, files } : { report })
      if (publishes) slot(repo).publish.set(pkg, report)
    }
    if (!settings.dryRun) {
      await forEachConcurrently(byRepo, async ([repo, { entries, publish, gone }]) => {
        await this.#propose(repo, entries, publish, false)
        if (gone.length > 0) await this.#discard(repo, gone)
      })
    }
    return proposed
  }

  async packageStates(paths: readonly string[], reads: StateReads): Promise<Map<string, PackageState>> {
    const states = new Map<string, PackageState>()
    await forEachConcurrently(this.#byRepo(paths), async ([repo, packages]) => {
      const snapshot = this.#repos.get(repo)!
      const known = await readPackageStates(
        snapshot,
        packages,
        packages.filter((pkg) => reads.upstreams.has(`${repo}/${pkg}`)),
        packages.filter((pkg) => reads.drafts.has(`${repo}/${pkg}`)),
      )
      for (const [pkg, state] of known) states.set(`${repo}/${pkg}`, state)
    })
    return states
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
    return (this.#signature ??= committerFrom(this.#writes().env, this.#writes().now))
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
      if (this.#repos.has(repo)) appendTo(byRepo, repo, pkg)
    }
    return byRepo
  }

  async #takeDigests(repo: string, packages: readonly string[]): Promise<Map<string, string>> {
    const digests = await packageDigests(this.#repos.get(repo)!, packages)
    for (const [pkg, digest] of digests) this.#digests.set(`${repo}/${pkg}`, digest)
    return digests
  }

  /** Deletes the drafts of never-published packages; a refused push fails their entries. */
  async #discard(repo: string, removals: readonly Removal[]): Promise<void> {
    const snapshot = this.#repos.get(repo)
    if (!snapshot) return
    let deleted
    try {
      deleted = await deleteDrafts(
        snapshot,
        removals.map((r) => splitPath(r.report.path!).pkg),
      )
    } catch (err) {
      deleted = { ok: false as const, reason: (err as Error).message }
    }
    if (!deleted.ok)
      for (const { report } of removals) fail(report, `pushing to ${snapshot.source} was refused: ${deleted.reason}`)
  }

  /**
   * One repository's write: `entries` as drafts, `publish` published (with
   * the open drafts they need when `withNeeded`). Returns the reports of
   * those needed drafts, published along.
   */
  async #propose(
    repo: string,
    entries: readonly Proposal[],
    publish: ReadonlyMap<string, VariantReport>,
    withNeeded: boolean,
  ): Promise<VariantReport[]> {
    const snapshot = this.#repos.get(repo)
    if (!snapshot || (entries.length === 0 && publish.size === 0)) return []
    let written: DraftsWritten
    try {
      // What is published takes the open drafts it needs along (a dependency installed by an earlier run).
      written = await writeDrafts(snapshot, draftChanges(snapshot, entries), this.#committer(), [...publish.keys()], {
        withNeeded,
        force: this.#writes().forcePublish === true,
      })
    } catch (err) {
      written = { ok: false, reason: (err as Error).message, published: [] }
    }
    if (!written.ok) {
      failRefused(snapshot, { entries, publish }, written.reason)
      return []
    }
    for (const { report } of entries) {
      const draft = written.drafts.get(splitPath(report.path!).pkg)
      if (draft) report.draft = draft.branch
    }
    return recordPublished(repo, written.published, publish)
  }
}

/** The drafts of `entries`: each package's files (none: removed) and its commit message. */
function draftChanges(snapshot: RepositorySnapshot, entries: readonly Proposal[]): DraftChange[] {
  return entries.map(({ report, files }) => {
    const pkg = splitPath(report.path!).pkg
    const change: DraftChange = {
      package: pkg,
      message: (workspace) => draftMessage(report, packageDir(snapshot, pkg), workspace),
    }
    if (files) change.files = files
    return change
  })
}

/** A write the remote refused: every draft and publish of it fails, with why. */
function failRefused(
  snapshot: RepositorySnapshot,
  write: { entries: readonly Proposal[]; publish: ReadonlyMap<string, VariantReport> },
  reason: string,
): void {
  for (const { report } of write.entries) fail(report, `pushing to ${snapshot.source} was refused: ${reason}`)
  for (const report of write.publish.values())
    if (report.status !== 'failed') fail(report, `publishing to ${snapshot.source} was refused: ${reason}`)
}

/**
 * Each publish's outcome on its report (`publish`'s, by package); an open
 * draft a published package needed, published with it, gets a report of its
 * own: those are returned.
 */
function recordPublished(
  repo: string,
  outcomes: readonly PublishOutcome[],
  publish: ReadonlyMap<string, VariantReport>,
): VariantReport[] {
  const needed: VariantReport[] = []
  for (const outcome of outcomes) {
    let report = publish.get(outcome.package)
    if (!report) {
      const path = `${repo}/${outcome.package}`
      report = { subject: `Dependency ${path}`, path, status: 'unchanged', reasons: [], warnings: [], conflicts: [] }
      needed.push(report)
    }
    if (outcome.ok) {
      delete report.draft
      if (outcome.tag) report.published = outcome.tag
      if (outcome.notReady) report.warnings.push(`published although ${outcome.notReady} (--force)`)
    } else if (outcome.notReady) {
      // Not a failure: the draft waits for its gates (a required injection point filled by a later render).
      report.held = outcome.reason
      report.notReady = outcome.reason
    } else report.warnings.push(`not published: ${outcome.reason}`)
  }
  return needed
}

/** A package to propose: its variant's report and its files (none: its removal). */
interface Proposal {
  report: VariantReport
  files?: PackageFiles
}

/** The identity commits are made with: git's own environment variables, else kpt-variants. */
export function committerFrom(
  env: Readonly<Record<string, string | undefined>>,
  now: Date | number = Date.now(),
): Signature {
  return {
    name: env['GIT_COMMITTER_NAME'] || env['GIT_AUTHOR_NAME'] || 'kpt-variants',
    email: env['GIT_COMMITTER_EMAIL'] || env['GIT_AUTHOR_EMAIL'] || 'kpt-variants@localhost',
    time: Math.floor(Number(now) / 1000),
  }
}

/** Fails a report the remote refused (the only failure made here). */
function fail(report: VariantReport, reason: string): void {
  report.status = 'failed'
  report.reasons.push(failure('GitPushRefused', reason))
  delete report.draft
  delete report.published
}
