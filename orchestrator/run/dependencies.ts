/**
 * The dependency phase of a run, after every variant is rendered: per
 * downstream repository, what its packages need (plan/dependencies.ts), and
 * with `--dependencies install` the plan carried out: a missing dependency
 * rendered into the repository from its source, an upgrade or downgrade a
 * 3-way update of its package, one nothing needs any more removed (or
 * orphaned). A variant whose needs cannot be met fails with the resolver's
 * reasons, and only its repository's plan goes without it.
 */
import type { KubeObject } from '../../functions/krm/index.js'
import { findRepository } from '../fleet/fleet.js'
import type { Fleet } from '../fleet/fleet.js'
import type { Removal, StoredPackage } from '../output/output.js'
import { splitPath } from '../output/output.js'
import { dependencyObjects } from '../package/dependency-objects.js'
import { readPackageRecord } from '../package/ownership.js'
import { dependencyVariant, planRepository, readFleetDependencies } from '../plan/dependencies.js'
import type { DependencyStep, PresentPackage, RepositoryPlan, TargetPackage } from '../plan/dependencies.js'
import { packageManifestKind, isDependencyKind } from '../../functions/api/dependencies.js'
import type { RepositoryDependencies, RunReport, VariantReport } from '../report/report.js'
import { upstreamCatalogs } from '../upstream/catalog.js'
import type { Pending, VariantContext } from './render-variant.js'
import { failUnstaged } from './render-share.js'
import type { Run } from './setup.js'

/** `--dependencies`: carry the plans out (`install`, the default), only report them (`check`), or skip the check (`off`). */
export type DependencyMode = 'install' | 'check' | 'off'

/** What the phase adds to the run: packages rendered for dependencies, and dependencies to remove. */
export interface DependencyOutcome {
  rendered: Pending[]
  removals: Removal[]
}

/**
 * Plans every repository where a package declares itself and, in install
 * mode, renders the steps with `context` (on this thread). `pending`: the
 * variants rendered (a failing variant is failed here); `others`: the
 * output's packages that are not this run's variants, minus those the run
 * deletes. The plans go into `report.dependencies`.
 */
export async function resolveDependencies(
  run: Run,
  context: VariantContext,
  pending: readonly Pending[],
  others: ReadonlyMap<string, StoredPackage>,
  report: RunReport,
  mode: Exclude<DependencyMode, 'off'>,
): Promise<DependencyOutcome> {
  const states = repositoryStates(run, context, pending, others)
  const outcome: DependencyOutcome = { rendered: [], removals: [] }
  if (states.length === 0) return outcome
  const fleet = readFleetDependencies(
    run.fleet.objects,
    await upstreamCatalogs(run.upstreams.repositories, run.upstreams.index, run.sources, run.settings.cacheDir),
  )
  const byPath = new Map(pending.map((p) => [p.path, p]))
  const repositories: RepositoryDependencies[] = []
  const installed: Installed[] = []
  for (const state of states) {
    const downstream = downstreamRepository(run.fleet, run, state.repo)
    const plan = planRepository(state, {
      fleet,
      mode,
      resolve: (step) =>
        downstream
          ? dependencyVariant(step, downstream, run.fleet, run.upstreams.index.revisions)
          : { ok: false, message: `repository ${state.repo} is not a Repository of the fleet` },
    })
    for (const [path, reasons] of plan.failures) {
      const p = byPath.get(path)
      if (!p) continue
      fail(p.report, reasons)
      p.dependencyFailure = true
    }
    for (const [path, warnings] of plan.warnings) byPath.get(path)?.report.warnings.push(...warnings)
    for (const [path, manifest] of plan.manifests) {
      const p = byPath.get(path)
      if (p) p.report.manifest = manifest
    }
    const steps =
      mode === 'install'
        ? await carryOut(plan, context, others, byPath, outcome, installed)
        : plan.steps.map((s) => ({
            ...stepReport(s),
            outcome: s.outsideGit && s.action === 'remove' ? ('outside-git' as const) : ('planned' as const),
          }))
    repositories.push({ name: state.repo, steps, packages: plan.packages })
  }
  if (repositories.length > 0) report.dependencies = repositories
  // A dependency rendered but not written (the disk full) is not installed: its step fails, and so do the packages
  // that need it, which are then not written either (as when its render fails).
  await failUnstaged(run.output, outcome.rendered)
  for (const { pending: p, step, report: stepReport, repo } of installed) {
    if (p.report.status !== 'failed') continue
    const reason = p.report.reasons.join('; ')
    Object.assign(stepReport, { outcome: 'failed', reason })
    failDependants(step, repo, reason, byPath)
  }
  return outcome
}

/** A dependency carried out by rendering it: its package, its step and the step's report, in `repo`. */
interface Installed {
  pending: Pending
  step: DependencyStep
  report: RepositoryDependencies['steps'][number]
  repo: string
}

/** Fails the packages that need `step`'s dependency, which could not be carried out for `reason`. */
function failDependants(
  step: DependencyStep,
  repo: string,
  reason: string,
  byPath: ReadonlyMap<string, Pending>,
): void {
  for (const dependant of step.neededBy) {
    const p = byPath.get(dependant)
    if (!p) continue
    p.dependencyFailure = true
    fail(p.report, [
      `dependency ${step.package} ${step.version} could not be ${step.action === 'install' ? 'installed' : 'moved to'} in repository ${repo}: ${reason}`,
    ])
  }
}

/** The repositories to plan: each with the packages its variants rendered and the packages it holds besides, where any declares itself. */
function repositoryStates(
  run: Run,
  context: VariantContext,
  pending: readonly Pending[],
  others: ReadonlyMap<string, StoredPackage>,
): { repo: string; targets: TargetPackage[]; present: PresentPackage[] }[] {
  const states = new Map<string, { repo: string; targets: TargetPackage[]; present: PresentPackage[] }>()
  const state = (repo: string) => states.get(repo) ?? states.set(repo, { repo, targets: [], present: [] }).get(repo)!
  for (const p of pending)
    if (p.report.status !== 'failed' && p.dependencies.length > 0)
      state(splitPath(p.path).repo).targets.push({ path: p.path, objects: p.dependencies })
  for (const [path, stored] of others) {
    const files = stored.draft ?? stored.published
    // A draft that removes the package: it is on its way out.
    if (!files || files.size === 0) continue
    const root = run.output.packageDir(path)
    const objects = dependencyObjects(context.codec, files, root)
    if (objects.length === 0) continue
    state(splitPath(path).repo).present.push({
      pkg: splitPath(path).pkg,
      objects,
      root,
      record: readPackageRecord(files),
    })
  }
  // Only repositories where something declares itself to the check (a PackageManifest) are planned.
  const declares = (objects: readonly KubeObject[]) => objects.some((o) => isDependencyKind(o, packageManifestKind))
  return [...states.values()]
    .filter((s) => s.targets.some((t) => declares(t.objects)) || s.present.some((p) => declares(p.objects)))
    .sort((a, b) => (a.repo < b.repo ? -1 : 1))
}

/** The downstream Repository named `repo`: a planned variant's, else the fleet's. */
function downstreamRepository(fleet: Fleet, run: Run, repo: string) {
  return run.plan.variants.find((v) => v.downstream.repo === repo)?.downstreamRepo ?? findRepository(fleet, '', repo)
}

/** Renders a repository's steps in order and collects its removals; a step that fails fails the variants that need it. */
async function carryOut(
  plan: RepositoryPlan,
  context: VariantContext,
  others: ReadonlyMap<string, StoredPackage>,
  byPath: ReadonlyMap<string, Pending>,
  outcome: DependencyOutcome,
  installed: Installed[],
): Promise<RepositoryDependencies['steps']> {
  const steps: RepositoryDependencies['steps'] = []
  // A dependency is only installed for a dependant that renders.
  const wanted = (step: DependencyStep) =>
    step.neededBy.length === 0 || step.neededBy.some((path) => byPath.get(path)?.report.status !== 'failed')
  for (const step of plan.steps) {
    const path = `${plan.repo}/${step.pkg}`
    if (step.action === 'remove') {
      const stored = step.outsideGit ? undefined : others.get(path)
      if (!stored) {
        steps.push({ ...stepReport(step), outcome: 'outside-git' })
        continue
      }
      const orphan = step.deletionPolicy === 'orphan'
      const entry: VariantReport = {
        subject: `Dependency ${path}`,
        path,
        status: orphan ? 'orphaned' : 'deleted',
        reasons: [],
        warnings: [],
        conflicts: [],
        requiredBy: [],
      }
      outcome.removals.push({ report: entry, stored, orphan })
      steps.push({ ...stepReport(step), outcome: 'done' })
      continue
    }
    if (!wanted(step)) continue
    const rendered = await context.render(step.variant!)
    rendered.report.requiredBy = step.requiredBy
    rendered.report.manifest = {
      name: step.package,
      ...(step.version ? { version: step.version } : {}),
      requires: step.requires,
    }
    if (rendered.report.status === 'failed') {
      const reason = rendered.report.reasons.join('; ')
      steps.push({ ...stepReport(step), outcome: 'failed', reason })
      failDependants(step, plan.repo, reason, byPath)
    } else {
      const report: RepositoryDependencies['steps'][number] = { ...stepReport(step), outcome: 'done' }
      steps.push(report)
      installed.push({ pending: rendered, step, report, repo: plan.repo })
    }
    outcome.rendered.push(rendered)
  }
  return steps
}

function stepReport(step: DependencyStep): Omit<RepositoryDependencies['steps'][number], 'outcome'> {
  return {
    action: step.action,
    package: step.package,
    ...(step.version !== undefined ? { version: step.version } : {}),
    ...(step.from !== undefined ? { from: step.from } : {}),
    path: step.pkg,
    requiredBy: step.requiredBy,
    ...(step.outsideGit ? { outsideGit: true as const } : {}),
  }
}

function fail(report: VariantReport, reasons: readonly string[]): void {
  report.status = 'failed'
  for (const r of reasons) if (!report.reasons.includes(r)) report.reasons.push(r)
  delete report.diff
}
