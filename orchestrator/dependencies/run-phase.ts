/**
 * The dependency phase of a run, after every variant is rendered: per
 * downstream repository, what its packages need (repository-plan.ts), and
 * with `--dependencies install` the plan carried out: a missing dependency
 * rendered into the repository from its source, an upgrade or downgrade a
 * 3-way update of its package, one nothing needs any more removed (or
 * orphaned). A variant whose needs cannot be met fails with the resolver's
 * reasons, and only its repository's plan goes without it.
 */
import type { KubeObject } from '../../functions/krm/index.js'
import { findRepository } from '../fleet/fleet.js'
import type { Fleet } from '../fleet/fleet.js'
import type { Repository } from '../../functions/api/repository.js'
import type { Removal, StoredPackage } from '../output/output.js'
import { splitPath } from '../output/output.js'
import { dependencyObjects, rootManifest } from '../package/dependency-objects.js'
import { readPackageRecord } from '../package/ownership.js'
import { apiOwnershipFailures } from './api-ownership.js'
import type { OwningPackage } from './api-ownership.js'
import { dependencyVariant, planRepository, readFleetDependencies } from './repository-plan.js'
import { defaultRepositoryPolicy, PolicyIndex, readFleetPolicies } from './policy.js'
import type { RepositoryPolicy } from './policy.js'
import { clusterVersionOf, platformCheck } from './platform.js'
import type {
  DependencyStep,
  FleetDependencies,
  PresentPackage,
  RepositoryPlan,
  TargetPackage,
} from './repository-plan.js'
import type { PlannedVariant } from '../plan/plan.js'
import { packageManifestKind, isDependencyKind } from '../../functions/api/dependencies.js'
import type { RepositoryDependencies, RunReport, VariantReport } from '../report/report.js'
import { failure, messagesOf } from '../report/failure.js'
import type { Failure } from '../report/failure.js'
import { upstreamCatalogs } from '../upstream/catalog.js'
import type { Pending, VariantContext } from '../run/render-variant.js'
import { failUnstaged } from '../run/render-share.js'
import type { Run } from '../run/setup.js'

/** `--dependencies`: carry the plans out (`install`, the default), only report them (`check`), or skip the check (`off`). */
export type DependencyMode = 'install' | 'check' | 'off'

/** What the phase adds to the run: packages rendered for dependencies, and dependencies to remove. */
export interface DependencyOutcome {
  rendered: Pending[]
  removals: Removal[]
}

/** A repository's packages as repositoryStates gathers them. */
type GatheredState = { repo: string; targets: TargetPackage[]; present: PresentPackage[] }

/** What every part of the phase reads of the run, indexed once. */
interface Phase {
  run: Run
  /** The variants rendered, by path. */
  byPath: ReadonlyMap<string, Pending>
  /** The run's planned variants, by path. */
  variants: ReadonlyMap<string, PlannedVariant>
  policies: PolicyIndex
  downstreamRepository: (repo: string) => Repository | undefined
  /** Fails the variant rendered at `path` (if it is one) for `reasons`. */
  failed: (path: string, reasons: readonly Failure[]) => void
}

/** What planning a repository reads besides its state, and where carrying its plan out puts what it makes. */
interface RepositoryWork {
  fleet: FleetDependencies
  mode: Exclude<DependencyMode, 'off'>
  /** Repositories where a variant failed before the plan (its render): nothing of them is removed. */
  failedIn: ReadonlySet<string>
  context: VariantContext
  others: ReadonlyMap<string, StoredPackage>
  outcome: DependencyOutcome
  installed: Installed[]
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
  const phase = phaseOf(run, pending, report)
  const all = repositoryStates(run, context, pending, others)
  checkOwnershipAndPlatform(phase, all)
  const states = all
    .map((s) => ({ ...s, targets: s.targets.filter((t) => phase.byPath.get(t.path)?.report.status !== 'failed') }))
    .filter((s) => s.targets.some((t) => declares(t.objects)) || s.present.some((p) => declares(p.objects)))
  const outcome: DependencyOutcome = { rendered: [], removals: [] }
  if (states.length === 0) return outcome
  const read = readFleetDependencies(
    run.fleet.objects,
    await upstreamCatalogs(run.upstreams.repositories, run.upstreams.index, run.sources, run.settings.cacheDir),
  )
  const work: RepositoryWork = {
    // A DependencyPolicy that cannot be read fails every plan: which repositories it means is not known.
    fleet: { ...read, errors: [...read.errors, ...phase.policies.fleet.errors] },
    mode,
    failedIn: new Set(pending.filter((p) => p.report.status === 'failed').map((p) => splitPath(p.path).repo)),
    context,
    others,
    outcome,
    installed: [],
  }
  const repositories: RepositoryDependencies[] = []
  for (const state of states) repositories.push(await resolveRepository(phase, state, work))
  if (repositories.length > 0) report.dependencies = repositories
  // A dependency rendered but not written (the disk full) is not installed: its step fails, and so do the packages
  // that need it, which are then not written either (as when its render fails).
  await failUnstaged(run.output, outcome.rendered)
  for (const { pending: p, step, report: stepReport, repo } of work.installed) {
    if (p.report.status !== 'failed') continue
    const reason = messagesOf(p.report.reasons)
    Object.assign(stepReport, { outcome: 'failed', reason })
    failDependants(step, repo, reason, phase.byPath)
  }
  return outcome
}

/** Indexes the run for the phase; the fleet's policies that cannot be read become problems of the report. */
function phaseOf(run: Run, pending: readonly Pending[], report: RunReport): Phase {
  const byPath = new Map(pending.map((p) => [p.path, p]))
  const variants = new Map(run.plan.variants.map((v) => [`${v.downstream.repo}/${v.downstream.package}`, v]))
  const policies = new PolicyIndex(readFleetPolicies(run.fleet.objects))
  // A policy that cannot be read is a problem of the fleet (exit 1) even where no repository has a plan to fail.
  for (const error of policies.fleet.errors)
    report.problems.push(`${error}: every repository's dependency plan fails while it cannot be read`)
  const failed = (path: string, reasons: readonly Failure[]) => {
    const p = byPath.get(path)
    if (!p) return
    fail(p.report, reasons)
    p.dependencyFailure = true
  }
  return { run, byPath, variants, policies, downstreamRepository: downstreamRepositories(run.fleet, run), failed }
}

/** One owner per API, and what the packages need of the cluster's Kubernetes: checked wherever packages are. */
function checkOwnershipAndPlatform(phase: Phase, states: readonly GatheredState[]): void {
  const { byPath, failed } = phase
  for (const state of states) {
    for (const [path, reasons] of apiOwnershipFailures(state.repo, ownershipOf(state))) failed(path, reasons)
    const downstream = phase.downstreamRepository(state.repo)
    const policy = downstream ? phase.policies.of(downstream).policy : undefined
    for (const t of state.targets) {
      // Read only where a manifest says something of Kubernetes: most say nothing.
      if (!t.objects.some((o) => declares([o]) && o.has(['spec', 'kubernetesVersion']))) continue
      const required = t.root ? rootManifest(t.objects, t.root) : undefined
      if (!required?.kubernetesVersion || byPath.get(t.path)?.report.status === 'failed') continue
      const variant = phase.variants.get(t.path)
      const cluster = clusterVersionOf(
        (policy ?? defaultRepositoryPolicy).clusterVersion,
        variant?.target,
        variant?.downstreamRepo ?? downstream,
      )
      const problem = platformCheck(
        `${required.name}${required.version ? ` ${required.version}` : ''}`,
        required.kubernetesVersion,
        cluster,
      )
      if (problem && 'error' in problem) failed(t.path, [failure('PlatformMismatch', problem.error)])
      else if (problem) byPath.get(t.path)?.report.warnings.push(problem.warning)
    }
  }
}

/** Plans one repository under its policy, records what the plan says of its variants, and carries it out or reports it. */
async function resolveRepository(
  phase: Phase,
  state: GatheredState,
  work: RepositoryWork,
): Promise<RepositoryDependencies> {
  const { run, byPath } = phase
  const downstream = phase.downstreamRepository(state.repo)
  const { policy, warnings: policyWarnings } = downstream
    ? phase.policies.of(downstream)
    : { policy: defaultRepositoryPolicy, warnings: [] }
  const targetOf = (paths: readonly string[]) =>
    paths.map((p) => phase.variants.get(p)?.target).find((t) => t !== undefined)
  const cluster = clusterVersionOf(policy.clusterVersion, targetOf(state.targets.map((t) => t.path)), downstream)
  // A repository whose policy says install: false has its plan reported only, as --dependencies check does.
  const repoMode = policy.install ? work.mode : 'check'
  const plan = planRepository(state, {
    fleet: work.fleet,
    mode: repoMode,
    policy,
    cluster,
    holdRemovals: work.failedIn.has(state.repo),
    resolve: (step) =>
      downstream
        ? dependencyVariant(step, downstream, run.fleet, run.upstreams.index.revisions, {
            configured: policy.configure.get(step.package),
            target: targetOf(step.neededBy),
          })
        : { ok: false, message: `repository ${state.repo} is not a Repository of the fleet` },
  })
  for (const [path, reasons] of plan.failures) phase.failed(path, reasons)
  for (const [path, warnings] of plan.warnings) byPath.get(path)?.report.warnings.push(...warnings)
  for (const [path, manifest] of plan.manifests) {
    const p = byPath.get(path)
    if (p) p.report.manifest = manifest
  }
  const steps =
    repoMode === 'install'
      ? await carryOut(plan, work.context, work.others, byPath, work.outcome, work.installed)
      : plannedSteps(plan)
  const entry: RepositoryDependencies = { name: state.repo, steps, packages: plan.packages }
  if (plan.overrides.length > 0) entry.overrides = plan.overrides
  if (plan.kept.length > 0) entry.kept = plan.kept
  const described = describePolicy(policy, policyWarnings)
  if (described.length > 0) entry.policy = described
  return entry
}

/** A plan only checked, as the report shows its steps: configurations are not steps of their own. */
function plannedSteps(plan: RepositoryPlan): RepositoryDependencies['steps'] {
  return plan.steps
    .filter((s) => s.action !== 'configure')
    .map((s) => ({
      ...stepReport(s),
      outcome: s.outsideGit && s.action === 'remove' ? ('outside-git' as const) : ('planned' as const),
    }))
}

/** Something a package declares to the dependency check: a PackageManifest. */
function declares(objects: readonly KubeObject[]): boolean {
  return objects.some((o) => isDependencyKind(o, packageManifestKind))
}

/** A repository's packages as the API ownership check sees them. */
function ownershipOf(state: { repo: string; targets: TargetPackage[]; present: PresentPackage[] }): OwningPackage[] {
  return [
    ...state.present.map((p) => ({
      path: `${state.repo}/${p.pkg}`,
      objects: p.objects,
      root: p.root,
      age: 'present' as const,
    })),
    ...state.targets.map((t) => ({
      path: t.path,
      objects: t.objects,
      root: t.root ?? '',
      age: t.existing ? ('existing' as const) : ('new' as const),
    })),
  ]
}

/** What a repository's policy sets, for the report: `upgrades: Deny (DependencyPolicy default/frozen)`, and its warnings. */
function describePolicy(policy: RepositoryPolicy, warnings: readonly string[]): string[] {
  const out: string[] = []
  const r = policy.resolver
  const values: Record<keyof RepositoryPolicy['setBy'], string> = {
    upgrades: r.upgrades,
    downgrades: r.downgrades,
    prereleases:
      typeof r.prereleases === 'object' ? `{identifiers: [${r.prereleases.identifiers.join(', ')}]}` : r.prereleases,
    install: String(policy.install),
    autoUpgrade: String(r.autoUpgrade === 'Dependencies'),
    clusterVersion:
      'label' in policy.clusterVersion ? `label ${policy.clusterVersion.label}` : `field ${policy.clusterVersion.path}`,
  }
  for (const [key, from] of Object.entries(policy.setBy))
    out.push(`${key}: ${values[key as keyof typeof values]} (${from})`)
  for (const [pkg, { pin, from }] of policy.pins) out.push(`pin ${pkg} ${pin.version} (${from} ${pin.field})`)
  for (const [pkg, { dependency, from }] of policy.configure) out.push(`configure ${pkg} (${from} ${dependency.field})`)
  out.push(...warnings.map((w) => `warning: ${w}`))
  return out
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
      failure(
        'DependencyFailed',
        `dependency ${step.package} ${step.version} could not be ${step.action === 'install' ? 'installed' : step.action === 'configure' ? 'configured' : 'moved to'} in repository ${repo}: ${reason}`,
      ),
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
      state(splitPath(p.path).repo).targets.push({
        path: p.path,
        objects: p.dependencies,
        root: run.output.packageDir(p.path),
        existing: p.report.status !== 'created',
      })
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
  return [...states.values()].sort((a, b) => (a.repo < b.repo ? -1 : 1))
}

/** The downstream Repository named `repo`: a planned variant's, else the fleet's (indexed once per run). */
function downstreamRepositories(fleet: Fleet, run: Run): (repo: string) => Repository | undefined {
  const byName = new Map<string, Repository>()
  for (const v of run.plan.variants) if (!byName.has(v.downstream.repo)) byName.set(v.downstream.repo, v.downstreamRepo)
  return (repo) => byName.get(repo) ?? findRepository(fleet, '', repo)
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
    // Its source could not be resolved: the variants that need it failed with why; the step says it too.
    if (!step.variant) {
      steps.push({ ...stepReport(step), outcome: 'failed', reason: step.unresolved ?? 'nothing renders it' })
      continue
    }
    const rendered = await context.render(step.variant)
    rendered.report.requiredBy = step.requiredBy
    rendered.report.manifest = {
      name: step.package,
      ...(step.version ? { version: step.version } : {}),
      requires: step.requires,
    }
    // A configured dependency whose configuration did not change is not a step of this run.
    if (step.action === 'configure' && rendered.report.status === 'unchanged') continue
    if (rendered.report.status === 'failed') {
      const reason = messagesOf(rendered.report.reasons)
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

function fail(report: VariantReport, reasons: readonly Failure[]): void {
  report.status = 'failed'
  for (const r of reasons)
    if (!report.reasons.some((known) => known.code === r.code && known.message === r.message)) report.reasons.push(r)
  delete report.diff
}
