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
import { openDraftDeclarations } from '../output/git/write.js'
import { splitPath } from '../output/output.js'
import { withoutUnavailable } from '../plan/plan.js'
import type { FleetPlan } from '../plan/plan.js'
import type { RolloutSummary, VariantReport } from '../report/report.js'
import { readFleetRollouts } from '../rollout/gather.js'
import { afterWrite, gatePublishing, summarizeRollout } from './publish-gate.js'
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
}

/** One package's outcome. */
export type PackageOutcome =
  | { package: string; status: 'published'; tag: string }
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

async function publishOpened(
  fleet: Fleet,
  plan: FleetPlan,
  output: GitOutput,
  settings: FleetPublishSettings,
): Promise<FleetPublishReport> {
  const opened = new Map(output.shared.snapshots.map((s) => [s.name, s]))
  const inPlan = { ...plan, variants: plan.variants.filter((v) => opened.has(v.downstream.repo)) }
  const pacing = { now: settings.now, skipRollout: settings.skipRollout }
  const gate = await gatePublishing(fleet, inPlan, output, { changed: new Map(), failed: new Set() }, pacing)
  const variants = new Map(inPlan.variants.map((v) => [`${v.downstream.repo}/${v.downstream.package}`, v]))
  const named = new Set(settings.packages)
  const inScope = (path: string) => {
    const { repo, pkg } = splitPath(path)
    return (settings.repository === undefined || repo === settings.repository) && (named.size === 0 || named.has(pkg))
  }
  const outcomes = new Map<string, PackageOutcome>()
  const publish = new Map<string, VariantReport>()
  const take = (path: string, subject: string) => {
    if (settings.dryRun) outcomes.set(path, { package: path, status: 'would-publish' })
    else publish.set(path, { subject, path, status: 'unchanged', reasons: [], warnings: [], conflicts: [] })
  }
  for (const [path, decision] of gate.decisions) {
    const variant = variants.get(path)!
    if (!inScope(path) || (settings.selector && !settings.selector(variant.target?.labels() ?? {}))) continue
    if (decision.publish) take(path, `PackageVariant ${variant.key}`)
    else outcomes.set(path, { package: path, status: 'held', reason: decision.reason })
  }
  // Drafts no variant of the plan makes (a removal, a dependency, one made by hand) have no target: published unless a
  // selector picks. One a PackageVariant made that no longer makes it is refused (the next render removes it).
  for (const snapshot of output.shared.snapshots) {
    const unplanned = Object.keys(snapshot.drafts).filter(
      (pkg) => !variants.has(`${snapshot.name}/${pkg}`) && inScope(`${snapshot.name}/${pkg}`),
    )
    const declared =
      settings.selector || settings.force
        ? new Map<string, DraftDeclaration>()
        : await openDraftDeclarations(snapshot, unplanned)
    for (const pkg of unplanned) {
      const path = `${snapshot.name}/${pkg}`
      const orphaned = ownerGone(declared.get(pkg), plan)
      if (orphaned)
        outcomes.set(path, {
          package: path,
          status: 'failed',
          reason: `${orphaned}: the next render removes this draft; --force publishes it anyway`,
        })
      else if (!settings.selector) take(path, `package ${path}`)
    }
  }
  for (const pkg of named) {
    const path = `${settings.repository}/${pkg}`
    if (!outcomes.has(path) && !publish.has(path))
      outcomes.set(path, { package: path, status: 'failed', reason: 'no open draft' })
  }
  // Packages named are published as named: one whose needs are not published with it is refused.
  await output.commit([], publish, named.size === 0)
  for (const [path, report] of publish) {
    const failure =
      report.reasons[0] ?? report.warnings.find((w) => w.startsWith('not published: '))?.slice('not published: '.length)
    if (failure !== undefined) outcomes.set(path, { package: path, status: 'failed', reason: failure })
    else
      outcomes.set(
        path,
        report.published
          ? { package: path, status: 'published', tag: report.published }
          : { package: path, status: 'removed' },
      )
  }
  // What the held drafts wait for now that this run's publishes are out (see afterWrite).
  let evaluations = gate.evaluations
  if (evaluations.length > 0 && [...outcomes.values()].some((o) => o.status === 'published')) {
    const held = new Map(
      [...outcomes.values()].flatMap((o) => (o.status === 'held' ? [[o.package, o.reason] as const] : [])),
    )
    const again = await afterWrite(fleet, inPlan, output, held, pacing)
    for (const [path, reason] of again.reasons) outcomes.set(path, { package: path, status: 'held', reason })
    evaluations = again.evaluations
  }
  const problems = [
    ...gate.problems,
    ...Object.entries(output.shared.unavailable).map(([repo, reason]) => `Repository ${repo}: ${reason}`),
  ]
  return {
    packages: [...outcomes.values()].sort((a, b) => (a.package < b.package ? -1 : a.package > b.package ? 1 : 0)),
    rollouts: evaluations.map(summarizeRollout),
    problems,
    warnings: gate.warnings,
  }
}
