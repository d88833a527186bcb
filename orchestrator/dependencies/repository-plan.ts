/**
 * The dependency plan of one downstream repository (pure): what the packages
 * this run renders into it need (the targets), against what the repository
 * already holds (its other packages, read from the output), the
 * InstalledPackage objects labelled for it (what was installed outside git)
 * and the catalogs, planned with dependency-check's exact resolver. The
 * answer is the steps that carry the plan out, in dependency order (install,
 * upgrade, downgrade, remove), and the variants that cannot be rendered
 * because what they need cannot be had, each with the resolver's reasons.
 * Every other variant of the repository keeps its plan: a target that
 * cannot be satisfied is taken out and the rest planned again.
 */
import {
  clusterAPIsKind,
  defaultDependencyPolicy,
  dependenciesGroup,
  installedPackageKind,
  packageCatalogKind,
  readInstalledPackage,
} from '../../functions/api/dependencies.js'
import type { DependencyCheck, GVK, InstalledPackage, PackageManifest } from '../../functions/api/dependencies.js'
import { gatherInputs, planDependencies } from '../../functions/dependency-check/index.js'
import type { DependencyReport, Plan, PlanCatalog, PlanInput } from '../../functions/dependency-check/index.js'
import { packagePathAnnotation } from '../../functions/krm/index.js'
import type { KubeObject } from '../../functions/krm/index.js'
import type { PlannedVariant } from '../plan/plan.js'
import type { RepositoryDependencies } from '../report/report.js'
import { failure } from '../report/failure.js'
import type { Failure, FailureCode } from '../report/failure.js'
import { appendTo } from '../util/collections.js'
import { configureSteps, graphOf, needing, presentPackages, requirementsOf, sourcesOf, stepsOf } from './steps.js'
import type { DependencyStep, Present, PresentPackage } from './steps.js'
import { applyPins, pinConflicts } from './pins.js'
import { defaultRepositoryPolicy } from './policy.js'
import type { RepositoryPolicy } from './policy.js'
import { runnableCatalogs } from './platform.js'
import type { ClusterVersion } from './platform.js'

export type { DependencyStep, PresentPackage }
export { dependencyVariant } from './step-variant.js'

/** Label that binds an InstalledPackage to one downstream repository (an unlabelled one applies to every repository). */
export const repositoryLabel = 'kpt-variants.dev/repository'

/** A package this run renders into the repository for a variant. */
export interface TargetPackage {
  /** `<repo>/<package>`, the variant's path. */
  path: string
  objects: readonly KubeObject[]
  /** Its root's package-path annotation (the output's directory of the package). */
  root?: string
  /** It was rendered into the repository before this run (not created now). */
  existing?: boolean
}

/** One repository's packages, as the plan sees them. */
export interface RepositoryState {
  repo: string
  targets: readonly TargetPackage[]
  present: readonly PresentPackage[]
}

/** What the fleet says about dependencies, read once for every repository: catalogs, InstalledPackages, ClusterAPIs. */
export interface FleetDependencies {
  /** The fleet's PackageCatalogs and the catalogs made from upstream repositories. */
  catalogs: readonly PlanCatalog[]
  clusterAPIs: readonly GVK[]
  /** InstalledPackages by the repository their label names (`""`: unlabelled, every repository's). */
  installed: ReadonlyMap<string, readonly Omit<InstalledPackage, 'object'>[]>
  /** Objects that cannot be read (each fails the variants of every repository that has dependencies to plan). */
  errors: readonly string[]
}

/** Reads the fleet's dependency objects once; `catalogs`: those made from upstream repositories, besides the fleet's own. */
export function readFleetDependencies(
  objects: readonly KubeObject[],
  catalogs: readonly PlanCatalog[],
): FleetDependencies {
  const config = { name: 'dependency-check', targets: [], policy: { ...defaultDependencyPolicy } }
  const read = gatherInputs(
    [],
    objects.filter(
      (o) => o.isGroupKind(dependenciesGroup, packageCatalogKind) || o.isGroupKind(dependenciesGroup, clusterAPIsKind),
    ),
    config,
  )
  const errors = read.results.filter((r) => r.severity === 'error').map((r) => r.message)
  const installed = new Map<string, Omit<InstalledPackage, 'object'>[]>()
  for (const object of objects) {
    if (!object.isGroupKind(dependenciesGroup, installedPackageKind)) continue
    const one = readInstalledPackage(object)
    if (!one.ok) {
      errors.push(...one.errors.map((e) => `${object.describe()}: ${e.message}`))
      continue
    }
    const { object: _object, ...value } = one.value
    const repo = object.getLabel(repositoryLabel) ?? ''
    appendTo(installed, repo, value)
  }
  return { catalogs: [...read.input.catalogs, ...catalogs], clusterAPIs: read.input.clusterAPIs, installed, errors }
}

/** What the plan reads besides the repository: the fleet's dependency objects, and whether it is carried out. */
export interface PlanContext {
  fleet: FleetDependencies
  /** `install`: steps are to be carried out, so one that cannot be (no source) blocks its dependants; `check`: only reported. */
  mode: 'install' | 'check'
  /** In install mode: the variant that renders a step's package, or why its source cannot be rendered. */
  resolve?: (step: DependencyStep) => { ok: true; variant: PlannedVariant } | { ok: false; message: string }
  /** The repository's DependencyPolicy (default: today's behaviour). */
  policy?: RepositoryPolicy
  /** The repository's cluster: catalog versions that do not run on its Kubernetes version are not planned. */
  cluster?: ClusterVersion
  /** A variant of the repository failed before the plan: nothing is removed (its package as it was may need it). */
  holdRemovals?: boolean
}

/** A repository's dependency plan. */
export interface RepositoryPlan {
  repo: string
  /** The steps, dependencies first (removals last). */
  steps: DependencyStep[]
  /** Variants (by path) that cannot be rendered, and why. */
  failures: Map<string, Failure[]>
  /** Warnings for variants (by path): conflicts the plan resolves, ambiguous APIs. */
  warnings: Map<string, string[]>
  /** What each variant's package (by path) declares: its name, version, and the packages it needs (by name), which must be published before it. */
  manifests: Map<string, { name: string; version?: string; requires: string[] }>
  /** What the repository holds once the plan is carried out (and what was installed outside git), for the fleet page's graph. */
  packages: RepositoryDependencies['packages']
  /** What the policy's pins override: each dependant whose own range the planned version does not satisfy. */
  overrides: string[]
  /** Removals not made because a variant of the repository failed (its package as it was may need them). */
  kept: string[]
}

/** Plans one repository; see the module doc. */
export function planRepository(state: RepositoryState, context: PlanContext): RepositoryPlan {
  return new RepositoryPlanner(state, context).plan()
}

/** What one round of planning reads: the targets' manifests and the plan's input, which it planned into `plan`. */
interface Round {
  targets: readonly TargetPackage[]
  manifests: readonly PackageManifest[]
  input: PlanInput
  /** Which variant (path) each target manifest (`namespace/name`) belongs to. */
  owners: ReadonlyMap<string, string>
  pinned: ReturnType<typeof applyPins>
  plan: Plan
}

/** A round's answer: the repository's plan, or the targets left to plan again without those blamed. */
type RoundEnd = { plan: RepositoryPlan } | { remaining: TargetPackage[] }

/** One repository's planning: the failures and warnings found so far, and the rounds that plan its targets. */
class RepositoryPlanner {
  readonly #failures = new Map<string, Failure[]>()
  readonly #warnings = new Map<string, string[]>()
  readonly #policy: RepositoryPolicy
  readonly #config: DependencyCheck
  readonly #present: Present[]

  constructor(
    private readonly state: RepositoryState,
    private readonly context: PlanContext,
  ) {
    this.#policy = context.policy ?? defaultRepositoryPolicy
    this.#config = { name: 'dependency-check', targets: [], policy: { ...this.#policy.resolver } }
    this.#present = presentPackages(state.present)
  }

  /** Plans the targets; one blamed for what cannot be had is taken out and the others planned again. */
  plan(): RepositoryPlan {
    let targets = this.#readableTargets()
    for (;;) {
      const end = this.#round(targets)
      if ('plan' in end) return end.plan
      targets = end.remaining
    }
  }

  #fail(path: string, code: FailureCode, message: string): void {
    const list = this.#failures.get(path) ?? this.#failures.set(path, []).get(path)!
    if (!list.some((f) => f.code === code && f.message === message)) list.push(failure(code, message))
  }

  /** The repository's plan with `parts` (none: no step, the packages as they are). */
  #result(parts: Partial<RepositoryPlan> & Pick<RepositoryPlan, 'packages'>): RepositoryPlan {
    const empty = { steps: [], manifests: new Map(), overrides: [], kept: [] }
    return { repo: this.state.repo, ...empty, failures: this.#failures, warnings: this.#warnings, ...parts }
  }

  /** The targets whose own manifests read: one that cannot be read fails alone, the others are planned together. */
  #readableTargets(): TargetPackage[] {
    const targets: TargetPackage[] = []
    for (const target of this.state.targets) {
      const own = gatherInputs([...target.objects], [], this.#config)
      const errors = own.results.filter((r) => r.severity === 'error')
      if (errors.length > 0) for (const e of errors) this.#fail(target.path, 'InvalidManifest', e.message)
      else targets.push(target)
    }
    return targets
  }

  /** Plans `targets` together: the plan, or which are blamed and taken out. */
  #round(targets: readonly TargetPackage[]): RoundEnd {
    const gathered = this.#gather(targets)
    if (!gathered) return { plan: this.#result({ packages: [] }) }
    const { manifests, input } = gathered
    // No step: the repository's packages as they are.
    const unchanged = () => this.#result({ packages: graphOf(manifests, this.#present, input.installed, []) })
    if (input.targets.length === 0 && !input.installed.some((i) => i.installedAsDependency))
      return { plan: unchanged() }
    // Pins replace what dependants ask; what they replace is reported once planned.
    const pinned = applyPins(input, this.#policy.pins)
    const round: Round = {
      targets,
      manifests,
      input,
      owners: ownersOf(manifests, targets),
      pinned,
      plan: planDependencies(pinned.input),
    }
    const blocked = new Map<string, string[]>()
    const pathWarnings = new Map<string, string[]>()
    attribute(round.plan, this.state.repo, round.owners, targets, blocked, pathWarnings, this.#policy.setBy.upgrades)
    // Several variants blamed for one conflict: those that are satisfied alone were only caught in it.
    if (blocked.size > 1) {
      const alone = [...blocked.keys()].filter((path) => satisfiedAlone(pinned.input, manifests, round.owners, path))
      if (alone.length < blocked.size) for (const path of alone) blocked.delete(path)
    }
    const { steps, kept } = this.#steps(round, blocked.size > 0)
    if (blocked.size === 0 && this.context.mode === 'install') this.#resolveSteps(steps, blocked)
    if (blocked.size === 0) return { plan: this.#planned(round, { steps, kept, pathWarnings }) }
    return this.#takeOut(targets, blocked, unchanged)
  }

  /** The plan's input from the targets' manifests and the fleet's; undefined (the targets failed) when it cannot be read. */
  #gather(targets: readonly TargetPackage[]): { manifests: PackageManifest[]; input: PlanInput } | undefined {
    const gathered = gatherInputs(
      targets.flatMap((t) => t.objects),
      [],
      this.#config,
    )
    const inputErrors = [
      ...gathered.results.filter((r) => r.severity === 'error').map((r) => r.message),
      ...this.context.fleet.errors,
    ]
    if (inputErrors.length > 0) {
      for (const t of targets)
        for (const e of inputErrors) this.#fail(t.path, 'DependencyInputInvalid', `repository ${this.state.repo}: ${e}`)
      return undefined
    }
    const input = gathered.input
    // What the repository holds replaces an InstalledPackage of the same package: git is what the cluster is to run.
    const inGit = new Set(this.#present.map((p) => `${p.installed.package}|${p.installed.namespace}`))
    const installed = this.context.fleet.installed
    const outside = [...(installed.get('') ?? []), ...(installed.get(this.state.repo) ?? [])]
    input.installed = [
      ...outside.filter((i) => !inGit.has(`${i.package}|${i.namespace}`)),
      ...this.#present.map((p) => p.installed),
    ]
    // Versions the cluster's Kubernetes does not run are not to be had.
    input.catalogs = [...runnableCatalogs(this.context.fleet.catalogs, this.context.cluster)]
    input.clusterAPIs = [...this.context.fleet.clusterAPIs]
    return { manifests: gathered.manifests, input }
  }

  /**
   * The round's steps (none while a target is blocked), each with the
   * variants that need it and what it needs. Removals wait while a variant of
   * the repository failed (`kept` says which); configured dependencies the
   * plan keeps are rendered again for the variants that need them.
   */
  #steps({ plan, input, owners }: Round, blocked: boolean): { steps: DependencyStep[]; kept: string[] } {
    const catalogSources = sourcesOf(input.catalogs)
    const planned = blocked ? [] : stepsOf(plan, this.#present, input.installed, catalogSources)
    // A variant that failed keeps its package as it was, which may still need what the plan would remove.
    const holding = this.context.holdRemovals === true || this.#failures.size > 0
    const steps = holding ? planned.filter((s) => s.action !== 'remove') : planned
    const kept = holding
      ? planned
          .filter((s) => s.action === 'remove')
          .map(
            (s) =>
              `${s.package}${s.from ? ` ${s.from}` : ''} at ${s.pkg} (a variant of the repository failed: its package as it was may still need it)`,
          )
      : []
    // So that a change of their configuration reaches them (its `target` is theirs).
    if (!blocked)
      for (const step of configureSteps(plan, steps, this.#present, this.#policy, catalogSources))
        if (needing(plan, step.package, owners).length > 0) steps.push(step)
    for (const step of steps) {
      step.neededBy = needing(plan, step.package, owners)
      step.requires = requirementsOf(plan, step.package)
    }
    return { steps, kept }
  }

  /** In install mode: the variant that renders each step's package; one that cannot be carried out blocks the targets that need it. */
  #resolveSteps(steps: DependencyStep[], blocked: Map<string, string[]>): void {
    for (const step of steps) {
      if (step.action === 'remove') continue
      const resolved = step.source
        ? this.context.resolve?.(step)
        : {
            ok: false as const,
            message: `no catalog names where it comes from (a PackageCatalog version's \`source\`, or a published revision of a package in an upstream Repository): it can be checked but not installed`,
          }
      if (resolved?.ok) step.variant = resolved.variant
      else if (resolved) step.unresolved = resolved.message
      if (resolved && !resolved.ok)
        for (const path of step.neededBy)
          appendOnce(
            blocked,
            path,
            `${step.package} ${step.version} cannot be installed in repository ${this.state.repo}: ${resolved.message}`,
          )
    }
  }

  /** The plan of a round that blocked nothing: its steps, what the pins override, each variant's manifest. */
  #planned(
    { plan, pinned, owners, manifests, input }: Round,
    found: { steps: DependencyStep[]; kept: string[]; pathWarnings: Map<string, string[]> },
  ): RepositoryPlan {
    const overrides = pinConflicts(plan, pinned.overridden, pinned.input.installed)
    const { pathWarnings } = found
    for (const o of overrides)
      for (const [key, path] of owners)
        if (o.includes(` overrides ${key.slice(key.indexOf('/') + 1)}@`)) appendOnce(pathWarnings, path, o)
    for (const [path, list] of pathWarnings) for (const w of list) appendOnce(this.#warnings, path, w)
    const variantManifests = new Map<string, { name: string; version?: string; requires: string[] }>()
    for (const m of manifests) {
      const path = owners.get(`${m.namespace}/${m.name}`)
      if (path)
        variantManifests.set(path, {
          name: m.name,
          ...(m.version ? { version: m.version } : {}),
          requires: requirementsOf(plan, m.name),
        })
    }
    return this.#result({
      steps: found.steps,
      manifests: variantManifests,
      packages: graphOf(manifests, this.#present, input.installed, found.steps),
      overrides,
      kept: found.kept,
    })
  }

  /**
   * The blocked targets fail and the others are planned again; when nothing
   * blamed a target (a conflict among installed packages alone) every target
   * fails with it, and the repository stays as it is.
   */
  #takeOut(
    targets: readonly TargetPackage[],
    blocked: ReadonlyMap<string, string[]>,
    unchanged: () => RepositoryPlan,
  ): RoundEnd {
    for (const [path, reasons] of blocked) for (const r of reasons) this.#fail(path, 'DependencyUnresolved', r)
    const remaining = targets.filter((t) => !blocked.has(t.path))
    if (remaining.length < targets.length) return { remaining }
    for (const t of targets) for (const r of [...blocked.values()].flat()) this.#fail(t.path, 'DependencyUnresolved', r)
    return { plan: unchanged() }
  }
}

/** Whether the variant at `path` is satisfied when it is the repository's only target. */
function satisfiedAlone(
  input: PlanInput,
  manifests: readonly PackageManifest[],
  owners: ReadonlyMap<string, string>,
  path: string,
): boolean {
  const own = new Set(
    manifests.filter((m) => owners.get(`${m.namespace}/${m.name}`) === path).map((m) => `${m.namespace}/${m.name}`),
  )
  const plan = planDependencies({
    ...input,
    targets: input.targets.filter((t) => own.has(`${t.namespace}/${t.package}`)),
  })
  return plan.result !== 'CONFLICT'
}

/** Which variant each target manifest belongs to (by its package-path annotation). */
function ownersOf(manifests: readonly PackageManifest[], targets: readonly TargetPackage[]): Map<string, string> {
  const byRoot = new Map<string, string>()
  for (const t of targets) for (const o of t.objects) byRoot.set(o.getAnnotation(packagePathAnnotation) ?? '', t.path)
  const owners = new Map<string, string>()
  for (const m of manifests) {
    const path = byRoot.get(m.object.getAnnotation(packagePathAnnotation) ?? '')
    if (path) owners.set(`${m.namespace}/${m.name}`, path)
  }
  return owners
}

/**
 * Gives each variant the reports of its own targets that fail; conflicts no
 * target owns go to every variant. An upgrade the policy denies
 * (`upgradesDeniedBy`) fails the dependant, as Glasskube fails a package whose
 * dependency is too old; other resolvable conflicts are warnings.
 */
function attribute(
  plan: Plan,
  repo: string,
  owners: ReadonlyMap<string, string>,
  targets: readonly TargetPackage[],
  blocked: Map<string, string[]>,
  warnings: Map<string, string[]>,
  upgradesDeniedBy?: string,
): void {
  const reported = new Set<string>()
  const explanation = plan.explanation?.length ? `: ${plan.explanation.join('; ')}` : ''
  const denied = new Map(
    plan.conflicts
      .filter((c) => c.reason === 'UpgradeNotAllowed')
      .map((c) => [
        `${c.requiredBy}\0${c.message}`,
        `: upgrades: Deny (${upgradesDeniedBy ?? 'policy'})${c.resolution ? `; allowing it would upgrade ${c.resolution.package ?? c.package} to ${c.resolution.version}` : ''}`,
      ]),
  )
  for (const target of plan.packages) {
    const path = owners.get(`${target.namespace}/${target.package}`)
    if (!path) continue
    for (const dep of target.dependencies) {
      if (!failing(dep)) continue
      reported.add(`${dep.requiredBy}\0${dep.message}`)
      const text = `dependency ${dep.requiredBy} -> ${dep.name} in repository ${repo}: ${dep.message}`
      const deniedUpgrade = denied.get(`${dep.requiredBy}\0${dep.message}`)
      if (deniedUpgrade !== undefined) appendOnce(blocked, path, `${text}${deniedUpgrade}`)
      else if (dep.state === 'Conflict' && dep.resolvable) appendOnce(warnings, path, text)
      else appendOnce(blocked, path, `${text}${explanation}`)
    }
  }
  for (const conflict of plan.conflicts) {
    if (reported.has(`${conflict.requiredBy}\0${conflict.message}`)) continue
    const text = `dependency conflict in repository ${repo}: ${conflict.message} (required by ${conflict.requiredBy})`
    const owner = owners.get(`${conflict.namespace}/${conflict.package}`)
    for (const t of owner ? targets.filter((t) => t.path === owner) : targets) {
      if (conflict.reason === 'UpgradeNotAllowed')
        appendOnce(blocked, t.path, `${text}${denied.get(`${conflict.requiredBy}\0${conflict.message}`) ?? ''}`)
      else if (conflict.resolvable) appendOnce(warnings, t.path, text)
      else appendOnce(blocked, t.path, `${text}${explanation}`)
    }
  }
}

function failing(dep: DependencyReport): boolean {
  return ['Conflict', 'Missing', 'NoMatchingVersion', 'Cycle'].includes(dep.state)
}

/** Appends `value` to `key`'s list unless it is there already. */
function appendOnce(map: Map<string, string[]>, key: string, value: string): void {
  const list = map.get(key)
  if (!list) map.set(key, [value])
  else if (!list.includes(value)) list.push(value)
}
