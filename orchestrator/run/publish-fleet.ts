/**
 * `kpt-variants publish --fleet DIR [REPO [PACKAGE...]]`: publishes the open
 * drafts of a fleet's downstream repositories (or of one) in one run, as far
 * as the fleet's Rollouts allow. The fleet is planned without rendering
 * (loadAndPlan), the repositories are opened once, every Rollout is
 * evaluated over all its set's variants (so a repository's canary in another
 * repository counts), and each repository's publishes go in one write.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { CompiledSelector } from '../../functions/krm/index.js'
import type { Fleet } from '../fleet/fleet.js'
import { GitOutput, openRepositories } from '../output/git/git-output.js'
import type { DraftDeclaration } from '../output/git/messages.js'
import { openDraftDeclarations } from '../output/git/publish-entries.js'
import { splitPath } from '../output/output.js'
import { guardDeletions } from '../plan/deletion-guard.js'
import type { DeletionGuardSettings, GuardedRemoval } from '../plan/deletion-guard.js'
import { withoutUnavailable } from '../plan/plan.js'
import type { FleetPlan, PlannedVariant } from '../plan/plan.js'
import type { RolloutSummary, VariantReport } from '../report/report.js'
import { readFleetRollouts } from '../rollout/gather.js'
import { afterWrite, gatePublishing, summarizeRollout } from './publish-gate.js'
import type { Gate } from './publish-gate.js'
import { loadAndPlan } from './setup.js'
import type { PlanSettings } from './setup.js'

/** What to publish, and how. */
export interface FleetPublishSettings extends PlanSettings {
  cacheDir: string
  lockTimeoutMs: number
  env: Readonly<Record<string, string | undefined>>
  /** The time the run acts at: rollout gates and windows, the commits' and tags' dates. */
  now: Date
  skipRollout: boolean
  /** Only this Repository of the fleet... */
  repository?: string
  /** ...and of it only these packages (none: all). */
  packages: readonly string[]
  /** Only variants whose target's labels match. */
  selector?: CompiledSelector
  /** Decide, write nothing. */
  dryRun: boolean
  /** `--force`: publish a draft whose PackageVariant is gone (or renders another package now) too. */
  force?: boolean
  /** `--max-deletions`, `--allow-deletions`: how many of a set's packages its removal drafts may remove in one run. */
  deletionGuard?: DeletionGuardSettings
}

/** One package's outcome. */
export type PackageOutcome =
  | { package: string; status: 'published'; tag: string; notReady?: string }
  | { package: string; status: 'removed' }
  | { package: string; status: 'would-publish' }
  | { package: string; status: 'held'; reason: string }
  | { package: string; status: 'failed'; reason: string }

/** What a fleet publish did. */
export interface FleetPublishReport {
  /** By package path (`<repo>/<package>`), sorted. */
  packages: PackageOutcome[]
  rollouts: RolloutSummary[]
  /** Invalid Rollouts, repositories that could not be opened. */
  problems: string[]
  warnings: string[]
}

/** Why a fleet publish cannot start (a user's mistake: exit 2). */
export class FleetPublishError extends Error {
  override name = 'FleetPublishError'
}

/** Publishes what may be published now; resolves to each package's outcome. */
export async function publishFleet(settings: FleetPublishSettings): Promise<FleetPublishReport> {
  const scratch = mkdtempSync(join(tmpdir(), 'kpt-variants-'))
  try {
    const { fleet, plan } = await loadAndPlan(settings, scratch)
    if (settings.repository !== undefined && !fleet.repositories.some((r) => r.name === settings.repository)) {
      throw new FleetPublishError(
        `no Repository named ${JSON.stringify(settings.repository)} in the fleet ${fleet.root}`,
      )
    }
    const only =
      settings.repository === undefined
        ? undefined
        : repositoriesToOpen(fleet, plan, settings.repository, settings.skipRollout)
    const { shared, locks } = await openRepositories(
      fleet,
      plan,
      { cacheDir: settings.cacheDir, lockTimeoutMs: settings.lockTimeoutMs, publish: true },
      only,
    )
    const output = new GitOutput(shared, scratch, {
      locks,
      env: settings.env,
      now: settings.now,
      cacheDir: settings.cacheDir,
      failureKey: '',
      ...(settings.force ? { forcePublish: true } : {}),
    })
    try {
      return await publishOpened(fleet, withoutUnavailable(plan, shared.unavailable), output, settings)
    } finally {
      output.close()
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

/** Why a package published with --force was not ready, from its report's warning. */
function forcedNotReady(report: VariantReport): { notReady?: string } {
  const warning = report.warnings.find((w) => w.startsWith('published although not ready: '))
  return warning ? { notReady: warning.slice('published although '.length).replace(/ \(--force\)$/, '') } : {}
}

/** True for a reason a draft waits for its readiness gates (see package/readiness.ts). */
function isNotReady(reason: string): boolean {
  return reason.startsWith('not ready: ')
}

/**
 * Why a draft's PackageVariant no longer stands behind it: the variant is
 * gone from the fleet, or renders another package now. Undefined for a draft
 * no PackageVariant made, one that removes its package, or one whose variant
 * could not be read (it may still own the package).
 */
function ownerGone(declared: DraftDeclaration | undefined, plan: FleetPlan): string | undefined {
  const owner = declared?.owner
  if (!owner || declared.removes || plan.failures.some((f) => f.key === owner && f.downstream === undefined))
    return undefined
  const now = plan.downstreams.get(owner)
  return now === undefined
    ? `its PackageVariant ${owner} no longer exists`
    : `its PackageVariant ${owner} renders ${now} now`
}

/**
 * The removal drafts the deletion guard holds, by path, with its message: a
 * set's removal drafts (their `PackageVariantSet` trailer) counted against
 * its packages published in the opened repositories.
 */
function guardRemovalDrafts(
  fleet: Fleet,
  plan: FleetPlan,
  output: GitOutput,
  unplanned: ReadonlyMap<string, DraftDeclaration | undefined>,
  guard: DeletionGuardSettings,
): Map<string, string> {
  const removals: GuardedRemoval[] = []
  for (const [path, declared] of unplanned)
    if (declared?.removes && declared.set)
      removals.push({ path, set: declared.set, status: declared.orphans ? 'orphaned' : 'deleted' })
  if (removals.length === 0) return new Map()
  const snapshots = new Map(output.shared.snapshots.map((s) => [s.name, s]))
  const published = (repo: string, pkg: string) => (snapshots.get(repo)?.published[pkg] ?? []).length > 0
  const standing = (set: string) => ({
    existing:
      removals.filter((r) => r.set === set).length +
      plan.variants.filter((v) => v.set === set && published(v.downstream.repo, v.downstream.package)).length,
    emptyMatches: plan.emptyMatches.get(set) ?? [],
  })
  const action = {
    actor: 'publishing its removal drafts',
    instead: 'None of them was published.',
  }
  const held = new Map<string, string>()
  for (const h of guardDeletions(removals, standing, fleet.sets, guard, action))
    for (const r of removals) if (r.set === h.set) held.set(r.path, `PackageVariantSet ${h.set}: ${h.message}`)
  // A dependency's removal draft beside a held one goes with it: what the held package needs stays.
  const heldRepos = new Map([...held.keys()].map((path) => [splitPath(path).repo, path]))
  for (const [path, declared] of unplanned) {
    const beside = heldRepos.get(splitPath(path).repo)
    if (declared?.removes && !declared.owner && beside && !held.has(path))
      held.set(path, `held with the removal of ${beside}, which the deletion guard holds`)
  }
  return held
}

/** The repository, and the repositories of every variant of the paced sets that have a variant in it: their rollouts are evaluated whole. */
function repositoriesToOpen(fleet: Fleet, plan: FleetPlan, repository: string, skipRollout: boolean): Set<string> {
  const paced = skipRollout ? new Set<string>() : new Set(readFleetRollouts(fleet.objects).bySet.keys())
  const sets = new Set(
    plan.variants
      .filter((v) => v.downstream.repo === repository && v.set !== undefined && paced.has(v.set))
      .map((v) => v.set),
  )
  return new Set([repository, ...plan.variants.filter((v) => sets.has(v.set)).map((v) => v.downstream.repo)])
}

/** What one fleet publish chooses, package by package: each outcome decided, and the drafts to publish with their reports. */
class PublishChoice {
  readonly outcomes = new Map<string, PackageOutcome>()
  readonly publish = new Map<string, VariantReport>()
  /** The packages named on the command line (none: every one in scope). */
  readonly named: ReadonlySet<string>

  constructor(private readonly settings: FleetPublishSettings) {
    this.named = new Set(settings.packages)
  }

  /** The path is of the repository and packages asked for. */
  inScope(path: string): boolean {
    const { repo, pkg } = splitPath(path)
    return (
      (this.settings.repository === undefined || repo === this.settings.repository) &&
      (this.named.size === 0 || this.named.has(pkg))
    )
  }

  /** Publishes the draft at `path` (with --dry-run, says it would). */
  take(path: string, subject: string): void {
    if (this.settings.dryRun) this.outcomes.set(path, { package: path, status: 'would-publish' })
    else this.publish.set(path, { subject, path, status: 'unchanged', reasons: [], warnings: [], conflicts: [] })
  }

  /** The plan's drafts, as the gate decided them; a package named that is not ready fails, the others wait. */
  choosePlanned(decisions: Gate['decisions'], variants: ReadonlyMap<string, PlannedVariant>): void {
    for (const [path, decision] of decisions) {
      const variant = variants.get(path)!
      if (!this.inScope(path) || (this.settings.selector && !this.settings.selector(variant.target?.labels() ?? {})))
        continue
      if (decision.publish) this.take(path, `PackageVariant ${variant.key}`)
      else if (this.named.size > 0 && isNotReady(decision.reason))
        this.#fail(path, `${decision.reason}; --force publishes it anyway`)
      else this.outcomes.set(path, { package: path, status: 'held', reason: decision.reason })
    }
  }

  /**
   * Drafts no variant of the plan makes: published unless a selector picks
   * (they have no target), the deletion guard holds them (`guarded`), or
   * the PackageVariant that made one no longer makes it (without --force).
   */
  chooseUnplanned(unplanned: UnplannedDrafts, guarded: ReadonlyMap<string, string>, plan: FleetPlan): void {
    for (const [path, declared] of unplanned) {
      const held = guarded.get(path)
      const orphaned = this.settings.force ? undefined : ownerGone(declared, plan)
      if (held) this.#fail(path, held)
      else if (orphaned)
        this.#fail(path, `${orphaned}: the next render removes this draft; --force publishes it anyway`)
      else if (!this.settings.selector) this.take(path, `package ${path}`)
    }
  }

  /** A package named that has no open draft fails. */
  failNamedWithoutDraft(): void {
    for (const pkg of this.named) {
      const path = `${this.settings.repository}/${pkg}`
      if (!this.outcomes.has(path) && !this.publish.has(path)) this.#fail(path, 'no open draft')
    }
  }

  /** The outcome of each draft taken, from its report after the write. */
  recordPublished(): void {
    for (const [path, report] of this.publish) {
      const failure =
        report.reasons[0]?.message ??
        report.warnings.find((w) => w.startsWith('not published: '))?.slice('not published: '.length)
      if (failure !== undefined) this.#fail(path, failure)
      else if (report.notReady && this.named.size > 0)
        this.#fail(path, `${report.notReady}; --force publishes it anyway`)
      else if (report.notReady) this.outcomes.set(path, { package: path, status: 'held', reason: report.notReady })
      else
        this.outcomes.set(
          path,
          report.published
            ? { package: path, status: 'published', tag: report.published, ...forcedNotReady(report) }
            : { package: path, status: 'removed' },
        )
    }
  }

  /** The held packages, with why. */
  held(): Map<string, string> {
    return new Map(
      [...this.outcomes.values()].flatMap((o) => (o.status === 'held' ? [[o.package, o.reason] as const] : [])),
    )
  }

  #fail(path: string, reason: string): void {
    this.outcomes.set(path, { package: path, status: 'failed', reason })
  }
}

/** Open drafts of the opened repositories that no variant of the plan makes, in scope, with what each declares. */
type UnplannedDrafts = Map<string, DraftDeclaration | undefined>

async function unplannedDrafts(
  output: GitOutput,
  variants: ReadonlyMap<string, PlannedVariant>,
  choice: PublishChoice,
  selector: CompiledSelector | undefined,
): Promise<UnplannedDrafts> {
  const unplanned: UnplannedDrafts = new Map()
  for (const snapshot of output.shared.snapshots) {
    const packages = Object.keys(snapshot.drafts).filter(
      (pkg) => !variants.has(`${snapshot.name}/${pkg}`) && choice.inScope(`${snapshot.name}/${pkg}`),
    )
    // With a selector they are not published: what they declare is not read.
    const declared = selector ? new Map<string, DraftDeclaration>() : await openDraftDeclarations(snapshot, packages)
    for (const pkg of packages) unplanned.set(`${snapshot.name}/${pkg}`, declared.get(pkg))
  }
  return unplanned
}

/** Publishes what the gate allows of the opened repositories' drafts, in one write per repository. */
async function publishOpened(
  fleet: Fleet,
  plan: FleetPlan,
  output: GitOutput,
  settings: FleetPublishSettings,
): Promise<FleetPublishReport> {
  const opened = new Set(output.shared.snapshots.map((s) => s.name))
  const inPlan = { ...plan, variants: plan.variants.filter((v) => opened.has(v.downstream.repo)) }
  const pacing = { now: settings.now, skipRollout: settings.skipRollout, publishNotReady: settings.force === true }
  const gate = await gatePublishing(fleet, inPlan, output, { changed: new Map(), failed: new Map() }, pacing)
  const variants = new Map(inPlan.variants.map((v) => [`${v.downstream.repo}/${v.downstream.package}`, v]))
  const choice = new PublishChoice(settings)
  choice.choosePlanned(gate.decisions, variants)
  const unplanned = await unplannedDrafts(output, variants, choice, settings.selector)
  // Removal drafts that would take too many of a set's packages at once are held, as a render holds the set.
  choice.chooseUnplanned(
    unplanned,
    guardRemovalDrafts(fleet, plan, output, unplanned, settings.deletionGuard ?? {}),
    plan,
  )
  choice.failNamedWithoutDraft()
  // Packages named are published as named: one whose needs are not published with it is refused.
  await output.commit([], choice.publish, choice.named.size === 0)
  choice.recordPublished()
  // What the held drafts wait for now that this run's publishes are out (see afterWrite).
  let evaluations = gate.evaluations
  if (evaluations.length > 0 && [...choice.outcomes.values()].some((o) => o.status === 'published')) {
    const again = await afterWrite(fleet, inPlan, output, choice.held(), pacing)
    for (const [path, reason] of again.reasons) choice.outcomes.set(path, { package: path, status: 'held', reason })
    evaluations = again.evaluations
  }
  return {
    packages: [...choice.outcomes.values()].sort((a, b) =>
      a.package < b.package ? -1 : a.package > b.package ? 1 : 0,
    ),
    rollouts: evaluations.map(summarizeRollout),
    problems: [
      ...gate.problems,
      ...Object.entries(output.shared.unavailable).map(([repo, reason]) => `Repository ${repo}: ${reason}`),
    ],
    warnings: gate.warnings,
  }
}
