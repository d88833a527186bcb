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
  crdProvides,
  defaultDependencyPolicy,
  dependenciesGroup,
  installedPackageKind,
  isCustomResourceDefinition,
  packageCatalogKind,
  readInstalledPackage,
} from '../../functions/api/dependencies.js'
import type { GVK, InstalledPackage, PackageManifest, PackageSource } from '../../functions/api/dependencies.js'
import { gatherInputs, planDependencies } from '../../functions/dependency-check/index.js'
import type { DependencyReport, Plan, PlanCatalog, PlanInput } from '../../functions/dependency-check/index.js'
import { KubeObject, packagePathAnnotation } from '../../functions/krm/index.js'
import { rootManifest } from '../package/dependency-objects.js'
import { appendTo } from '../util/collections.js'
import type { PackageRecord } from '../package/ownership.js'
import type { RepositoryDependencies } from '../report/report.js'
import type { PackageVariant } from '../../functions/api/package-variant.js'
import type { Repository } from '../../functions/api/repository.js'
import { findRepository, revisionKey } from '../fleet/fleet.js'
import type { Fleet } from '../fleet/fleet.js'
import { resolveUpstream } from './plan.js'
import type { PlannedVariant, RevisionIndex } from './plan.js'

/** Label that binds an InstalledPackage to one downstream repository (an unlabelled one applies to every repository). */
export const repositoryLabel = 'kpt-variants.dev/repository'

/** A package of the repository that this run does not render as a variant, as the output holds it. */
export interface PresentPackage {
  /** Its path in the repository. */
  pkg: string
  /** Its PackageManifests and CRDs (dependencyObjects), annotated below `root`. */
  objects: readonly KubeObject[]
  /** The package-path annotation of its root. */
  root: string
  record: PackageRecord
}

/** A package this run renders into the repository for a variant. */
export interface TargetPackage {
  /** `<repo>/<package>`, the variant's path. */
  path: string
  objects: readonly KubeObject[]
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
export function readFleetDependencies(objects: readonly KubeObject[], catalogs: readonly PlanCatalog[]): FleetDependencies {
  const config = { name: 'dependency-check', targets: [], policy: { ...defaultDependencyPolicy } }
  const read = gatherInputs(
    [],
    objects.filter((o) => o.isGroupKind(dependenciesGroup, packageCatalogKind) || o.isGroupKind(dependenciesGroup, clusterAPIsKind)),
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
}

/** One step of a repository's plan. */
export interface DependencyStep {
  action: 'install' | 'upgrade' | 'downgrade' | 'remove'
  /** The package's name (its PackageManifest's). */
  package: string
  namespace: string
  /** The version installed or moved to. */
  version?: string
  /** The version before (upgrade, downgrade, remove). */
  from?: string
  /** The package's path in the repository: where it is, or where it goes. */
  pkg: string
  /** Where the version is cloned from (install, upgrade, downgrade). */
  source?: PackageSource
  /** Installed outside git (an InstalledPackage): an upgrade installs the version into the repository; a removal is only reported. */
  outsideGit?: boolean
  /** Installed as another package's dependency (the mark it has or gets). */
  asDependency: boolean
  deletionPolicy: 'delete' | 'orphan'
  /** Who needs it, with their ranges: `edge-monitor >=1.13.0`. */
  requiredBy: string[]
  /** The variants (paths) whose packages need it, directly or not. */
  neededBy: string[]
  /** The packages it needs in turn (by name), which must be published before it. */
  requires: string[]
  /** What renders it (install, upgrade, downgrade in install mode): its source resolved to an upstream revision. */
  variant?: PlannedVariant
}

/** A repository's dependency plan. */
export interface RepositoryPlan {
  repo: string
  /** The steps, dependencies first (removals last). */
  steps: DependencyStep[]
  /** Variants (by path) that cannot be rendered, and why. */
  failures: Map<string, string[]>
  /** Warnings for variants (by path): conflicts the plan resolves, ambiguous APIs. */
  warnings: Map<string, string[]>
  /** What each variant's package (by path) declares: its name, version, and the packages it needs (by name), which must be published before it. */
  manifests: Map<string, { name: string; version?: string; requires: string[] }>
  /** What the repository holds once the plan is carried out (and what was installed outside git), for the fleet page's graph. */
  packages: RepositoryDependencies['packages']
}

/** A catalog version with its source, by `package@version`, over every catalog. */
type Sources = Map<string, { source?: PackageSource; path?: string; deletionPolicy?: 'delete' | 'orphan' }>

/** Plans one repository; see the module doc. */
export function planRepository(state: RepositoryState, context: PlanContext): RepositoryPlan {
  const failures = new Map<string, string[]>()
  const warnings = new Map<string, string[]>()
  const fail = (path: string, reason: string) => appendOnce(failures, path, reason)
  const policy = { ...defaultDependencyPolicy }
  const config = { name: 'dependency-check', targets: [], policy }
  // A package whose own manifest cannot be read fails alone; the others are planned together.
  let targets: TargetPackage[] = []
  for (const target of state.targets) {
    const own = gatherInputs([...target.objects], [], config)
    const errors = own.results.filter((r) => r.severity === 'error')
    if (errors.length > 0) for (const e of errors) fail(target.path, e.message)
    else targets.push(target)
  }
  const present = presentPackages(state.present)
  for (;;) {
    const gathered = gatherInputs(
      targets.flatMap((t) => t.objects),
      [],
      config,
    )
    const inputErrors = [...gathered.results.filter((r) => r.severity === 'error').map((r) => r.message), ...context.fleet.errors]
    if (inputErrors.length > 0) {
      for (const t of targets) for (const e of inputErrors) fail(t.path, `repository ${state.repo}: ${e}`)
      return { repo: state.repo, steps: [], failures, warnings, manifests: new Map(), packages: [] }
    }
    const input = gathered.input
    // What the repository holds replaces an InstalledPackage of the same package: git is what the cluster is to run.
    const inGit = new Set(present.map((p) => `${p.installed.package}|${p.installed.namespace}`))
    const outside = [...(context.fleet.installed.get('') ?? []), ...(context.fleet.installed.get(state.repo) ?? [])]
    input.installed = [...outside.filter((i) => !inGit.has(`${i.package}|${i.namespace}`)), ...present.map((p) => p.installed)]
    input.catalogs = [...context.fleet.catalogs]
    input.clusterAPIs = [...context.fleet.clusterAPIs]
    const owners = ownersOf(gathered.manifests, targets)
    if (input.targets.length === 0 && !input.installed.some((i) => i.installedAsDependency))
      return { repo: state.repo, steps: [], failures, warnings, manifests: new Map(), packages: graphOf(gathered.manifests, present, input.installed, []) }
    const plan = planDependencies(input)
    const blocked = new Map<string, string[]>()
    const pathWarnings = new Map<string, string[]>()
    attribute(plan, state.repo, owners, targets, blocked, pathWarnings)
    // Several variants blamed for one conflict: those that are satisfied alone were only caught in it.
    if (blocked.size > 1) {
      const alone = [...blocked.keys()].filter((path) => satisfiedAlone(input, gathered.manifests, owners, path))
      if (alone.length < blocked.size) for (const path of alone) blocked.delete(path)
    }
    const catalogSources = sourcesOf(input.catalogs)
    const steps = blocked.size > 0 ? [] : stepsOf(plan, present, input.installed, catalogSources)
    // In install mode, a step that cannot be carried out blocks the targets that need it.
    for (const step of steps) {
      step.neededBy = needing(plan, step.package, owners)
      step.requires = requirementsOf(plan, step.package)
    }
    if (blocked.size === 0 && context.mode === 'install') {
      for (const step of steps) {
        if (step.action === 'remove') continue
        const resolved = step.source
          ? context.resolve?.(step)
          : {
              ok: false as const,
              message: `no catalog names where it comes from (a PackageCatalog version's \`source\`, or a published revision of a package in an upstream Repository): it can be checked but not installed`,
            }
        if (resolved?.ok) step.variant = resolved.variant
        else if (resolved) for (const path of step.neededBy) appendOnce(blocked, path, `${step.package} ${step.version} cannot be installed in repository ${state.repo}: ${resolved.message}`)
      }
    }
    if (blocked.size === 0) {
      for (const [path, list] of pathWarnings) for (const w of list) appendOnce(warnings, path, w)
      const manifests = new Map<string, { name: string; version?: string; requires: string[] }>()
      for (const m of gathered.manifests) {
        const path = owners.get(`${m.namespace}/${m.name}`)
        if (path) manifests.set(path, { name: m.name, ...(m.version ? { version: m.version } : {}), requires: requirementsOf(plan, m.name) })
      }
      return { repo: state.repo, steps, failures, warnings, manifests, packages: graphOf(gathered.manifests, present, input.installed, steps) }
    }
    for (const [path, reasons] of blocked) for (const r of reasons) fail(path, r)
    const remaining = targets.filter((t) => !blocked.has(t.path))
    // Nothing blamed a target (a conflict among installed packages alone): every target fails with it.
    if (remaining.length === targets.length) {
      for (const t of targets) for (const r of [...blocked.values()].flat()) fail(t.path, r)
      return { repo: state.repo, steps: [], failures, warnings, manifests: new Map(), packages: graphOf(gathered.manifests, present, input.installed, []) }
    }
    targets = remaining
  }
}

/** Whether the variant at `path` is satisfied when it is the repository's only target. */
function satisfiedAlone(input: PlanInput, manifests: readonly PackageManifest[], owners: ReadonlyMap<string, string>, path: string): boolean {
  const own = new Set(manifests.filter((m) => owners.get(`${m.namespace}/${m.name}`) === path).map((m) => `${m.namespace}/${m.name}`))
  const plan = planDependencies({ ...input, targets: input.targets.filter((t) => own.has(`${t.namespace}/${t.package}`)) })
  return plan.result !== 'CONFLICT'
}

/** The repository's own packages that declare a version, as installations named by their path. */
function presentPackages(packages: readonly PresentPackage[]): { pkg: string; manifest: PackageManifest; record: PackageRecord; installed: Omit<InstalledPackage, 'object'> }[] {
  const out = []
  for (const p of packages) {
    const manifest = rootManifest(p.objects, p.root)
    // Without a version, nothing can be checked against it.
    if (!manifest?.version) continue
    const installed: Omit<InstalledPackage, 'object'> = {
      name: p.pkg,
      package: manifest.name,
      version: manifest.version,
      namespace: manifest.namespace,
      installedAsDependency: p.record.installedAsDependency === true,
      dependencies: manifest.dependencies,
      // What it serves: its manifest's APIs and its CRDs'.
      provides: [...manifest.provides, ...p.objects.filter((o) => isCustomResourceDefinition(o) && o.getAnnotation(packagePathAnnotation) === p.root).flatMap(crdProvides)],
      deleting: false,
    }
    out.push({ pkg: p.pkg, manifest, record: p.record, installed })
  }
  return out
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

/** Gives each variant the reports of its own targets that fail; conflicts no target owns go to every variant. */
function attribute(plan: Plan, repo: string, owners: ReadonlyMap<string, string>, targets: readonly TargetPackage[], blocked: Map<string, string[]>, warnings: Map<string, string[]>): void {
  const reported = new Set<string>()
  const explanation = plan.explanation?.length ? `: ${plan.explanation.join('; ')}` : ''
  for (const target of plan.packages) {
    const path = owners.get(`${target.namespace}/${target.package}`)
    if (!path) continue
    for (const dep of target.dependencies) {
      if (!failing(dep)) continue
      reported.add(`${dep.requiredBy}\0${dep.message}`)
      const text = `dependency ${dep.requiredBy} -> ${dep.name} in repository ${repo}: ${dep.message}`
      if (dep.state === 'Conflict' && dep.resolvable) appendOnce(warnings, path, text)
      else appendOnce(blocked, path, `${text}${explanation}`)
    }
  }
  for (const conflict of plan.conflicts) {
    if (reported.has(`${conflict.requiredBy}\0${conflict.message}`)) continue
    const text = `dependency conflict in repository ${repo}: ${conflict.message} (required by ${conflict.requiredBy})`
    const owner = owners.get(`${conflict.namespace}/${conflict.package}`)
    for (const t of owner ? targets.filter((t) => t.path === owner) : targets) {
      if (conflict.resolvable) appendOnce(warnings, t.path, text)
      else appendOnce(blocked, t.path, `${text}${explanation}`)
    }
  }
}

function failing(dep: DependencyReport): boolean {
  return ['Conflict', 'Missing', 'NoMatchingVersion', 'Cycle'].includes(dep.state)
}

/** The variants whose targets need `pkg`, directly or through other dependencies (their reports list both). */
function needing(plan: Plan, pkg: string, owners: ReadonlyMap<string, string>): string[] {
  const paths = new Set<string>()
  for (const target of plan.packages) {
    const path = owners.get(`${target.namespace}/${target.package}`)
    if (path && target.dependencies.some((d) => providerOf(d) === pkg)) paths.add(path)
  }
  return [...paths]
}

/** The packages `pkg`'s own dependencies resolve to, by name, in the plan. */
function requirementsOf(plan: Plan, pkg: string): string[] {
  const out = new Set<string>()
  for (const target of plan.packages) {
    for (const dep of target.dependencies) {
      if (dep.requiredBy.replace(/@[^@]*$/, '').replace(/^.*\//, '') !== pkg) continue
      const provider = providerOf(dep)
      if (provider) out.add(provider)
    }
  }
  return [...out].sort()
}

/** The package a dependency is (a package dependency) or resolves to (an API or a choice of alternatives). */
function providerOf(dep: DependencyReport): string | undefined {
  if (dep.satisfiedBy && 'package' in dep.satisfiedBy) return dep.satisfiedBy.package
  return dep.type === 'Package' ? dep.name : undefined
}

/**
 * Every catalog version's source, and its package's path and deletion policy:
 * catalogs in name order, the first naming each winning (so a catalog may say
 * only where a package goes, or to orphan it, and another where it comes from).
 */
function sourcesOf(catalogs: readonly PlanCatalog[]): Sources {
  const sources = new Map<string, PackageSource>()
  const packages = new Map<string, { path?: string; deletionPolicy?: 'delete' | 'orphan' }>()
  for (const catalog of [...catalogs].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    for (const pkg of catalog.packages) {
      const known = packages.get(pkg.name) ?? {}
      packages.set(pkg.name, { ...(pkg.path ? { path: pkg.path } : {}), ...(pkg.deletionPolicy ? { deletionPolicy: pkg.deletionPolicy } : {}), ...known })
      for (const v of pkg.versions) if (v.source && !sources.has(`${pkg.name}@${v.version}`)) sources.set(`${pkg.name}@${v.version}`, v.source)
    }
  }
  const out: Sources = new Map()
  for (const catalog of catalogs) {
    for (const pkg of catalog.packages) {
      for (const v of pkg.versions) {
        const source = sources.get(`${pkg.name}@${v.version}`)
        out.set(`${pkg.name}@${v.version}`, { ...packages.get(pkg.name), ...(source ? { source } : {}) })
      }
    }
  }
  return out
}

/** The plan's changes as steps, in the plan's dependency order, removals last. */
function stepsOf(plan: Plan, present: ReturnType<typeof presentPackages>, installed: readonly Omit<InstalledPackage, 'object'>[], sources: Sources): DependencyStep[] {
  const order = new Map(plan.order.map((id, i) => [id, i]))
  const rank = (pkg: string, namespace: string) => order.get(namespace ? `${namespace}/${pkg}` : pkg) ?? Number.MAX_SAFE_INTEGER
  const requiredBy = requirersOf(plan)
  const inGit = (pkg: string, namespace: string) => present.find((p) => p.installed.package === pkg && p.installed.namespace === namespace)
  const outside = (pkg: string, namespace: string) => installed.find((i) => i.package === pkg && i.namespace === namespace && !present.some((p) => p.installed === i))
  const steps: (DependencyStep & { rank: number })[] = []
  const change = (action: 'install' | 'upgrade' | 'downgrade', pkg: string, namespace: string, version: string, from?: string) => {
    const found = sources.get(`${pkg}@${version}`)
    const here = action === 'install' ? undefined : inGit(pkg, namespace)
    const elsewhere = action === 'install' || here ? undefined : outside(pkg, namespace)
    const step: DependencyStep & { rank: number } = {
      action,
      package: pkg,
      namespace,
      version,
      pkg: here?.pkg ?? found?.path ?? pkg,
      asDependency: here ? here.record.installedAsDependency === true : elsewhere ? elsewhere.installedAsDependency : true,
      deletionPolicy: here?.record.deletionPolicy ?? found?.deletionPolicy ?? 'delete',
      requiredBy: requiredBy.get(pkg) ?? [],
      neededBy: [],
      requires: [],
      rank: rank(pkg, namespace),
    }
    if (from !== undefined) step.from = from
    if (found?.source) step.source = found.source
    if (elsewhere) step.outsideGit = true
    steps.push(step)
  }
  for (const s of plan.install) change('install', s.package, s.namespace, s.version)
  for (const s of plan.upgrade) change('upgrade', s.package, s.namespace, s.to, s.from)
  for (const s of plan.downgrade) change('downgrade', s.package, s.namespace, s.to, s.from)
  const removals: DependencyStep[] = []
  for (const s of plan.prune) {
    const here = present.find((p) => p.installed.name === s.name && p.installed.package === s.package)
    const version = here?.installed.version ?? installed.find((i) => i.name === s.name)?.version
    const step: DependencyStep = {
      action: 'remove',
      package: s.package,
      namespace: s.namespace,
      pkg: here?.pkg ?? s.name,
      asDependency: true,
      deletionPolicy: here?.record.deletionPolicy ?? 'delete',
      requiredBy: [],
      neededBy: [],
      requires: [],
    }
    if (version !== undefined) step.from = version
    if (!here) step.outsideGit = true
    removals.push(step)
  }
  steps.sort((a, b) => a.rank - b.rank || (a.package < b.package ? -1 : a.package > b.package ? 1 : 0))
  return [...steps.map(({ rank: _rank, ...step }) => step), ...removals.sort((a, b) => (a.pkg < b.pkg ? -1 : 1))]
}

/** Who needs each package, with the range they need: `edge-monitor >=1.13.0`. */
function requirersOf(plan: Plan): Map<string, string[]> {
  const out = new Map<string, string[]>()
  for (const target of plan.packages) {
    for (const dep of target.dependencies) {
      const name = providerOf(dep)
      if (!name) continue
      const who = dep.requiredBy.replace(/@[^@]*$/, '')
      const text = dep.type === 'Package' ? `${who} ${dep.required || '(any version)'}` : `${who} (${dep.name})`
      const list = out.get(name) ?? []
      if (!list.includes(text)) list.push(text)
      out.set(name, list)
    }
  }
  return out
}

/** The repository's packages once the plan is carried out: variants' and present ones, with what they require. */
function graphOf(
  manifests: readonly PackageManifest[],
  present: ReturnType<typeof presentPackages>,
  installed: readonly Omit<InstalledPackage, 'object'>[],
  steps: readonly DependencyStep[],
): RepositoryPlan['packages'] {
  const requires = (m: PackageManifest) =>
    m.dependencies.flatMap((d) => (d.type === 'Package' ? [{ name: d.name, range: d.version || '*' }] : d.type === 'GVK' ? [{ name: `${d.gvk.apiVersion}/${d.gvk.kind}`, range: '' }] : []))
  const packages = new Map<string, RepositoryPlan['packages'][number]>()
  for (const i of installed) packages.set(i.package, { name: i.package, version: i.version, installedAsDependency: i.installedAsDependency, requires: [], outsideGit: true })
  for (const p of present)
    packages.set(p.installed.package, { name: p.installed.package, version: p.installed.version, installedAsDependency: p.installed.installedAsDependency, requires: requires(p.manifest) })
  for (const m of manifests) packages.set(m.name, { name: m.name, ...(m.version ? { version: m.version } : {}), installedAsDependency: false, requires: requires(m) })
  for (const step of steps) {
    if (step.action === 'remove') packages.delete(step.package)
    else packages.set(step.package, { ...(packages.get(step.package) ?? { name: step.package, installedAsDependency: step.asDependency, requires: [] }), version: step.version! })
  }
  return [...packages.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

/** Appends `value` to `key`'s list unless it is there already. */
function appendOnce(map: Map<string, string[]>, key: string, value: string): void {
  const list = map.get(key)
  if (!list) map.set(key, [value])
  else if (!list.includes(value)) list.push(value)
}

/**
 * The variant that renders a dependency step into repository `downstream`:
 * the step's source (a package revision of a Repository of the fleet,
 * resolved as a PackageVariant's upstream is) cloned, or its package updated,
 * at the step's path. Its PackageVariant is made up: it names only the
 * upstream and the downstream, and no mutation applies.
 */
export function dependencyVariant(
  step: DependencyStep,
  downstream: Repository,
  fleet: Pick<Fleet, 'repositories'>,
  revisions: RevisionIndex,
): { ok: true; variant: PlannedVariant } | { ok: false; message: string } {
  const source = step.source!
  const upstreamRepo = findRepository(fleet, downstream.namespace, source.repo)
  if (!upstreamRepo) return { ok: false, message: `its source names repository ${JSON.stringify(source.repo)}, and the fleet has no Repository of that name` }
  const upstream = {
    repo: source.repo,
    package: source.package,
    ...(source.revision !== undefined ? { revision: source.revision } : {}),
    ...(source.workspaceName !== undefined ? { workspaceName: source.workspaceName } : {}),
  }
  const name = `dependency-${downstream.name}-${step.pkg.replaceAll('/', '-')}`
  const object = KubeObject.fromObject({
    apiVersion: 'config.porch.kpt.dev/v1alpha1',
    kind: 'PackageVariant',
    metadata: { name, namespace: downstream.namespace },
    spec: { upstream, downstream: { repo: downstream.name, package: step.pkg } },
  })
  const pv: PackageVariant = { object, name, namespace: downstream.namespace, spec: { upstream, downstream: { repo: downstream.name, package: step.pkg } } }
  const resolved = resolveUpstream(pv, revisions.get(revisionKey(upstreamRepo, source.package)) ?? [])
  if (!resolved.ok)
    return {
      ok: false,
      message: `its source ${source.repo}/${source.package} ${source.revision !== undefined ? `revision ${source.revision}` : (source.workspaceName ?? 'head')} cannot be found: ${resolved.message}`,
    }
  return {
    ok: true,
    variant: {
      pv,
      key: `${downstream.namespace}/${name}`,
      upstreamRepo,
      upstream: resolved.revision,
      downstreamRepo: downstream,
      downstream: { repo: downstream.name, package: step.pkg },
      warnings: [],
      dependency: { asDependency: step.asDependency, deletionPolicy: step.deletionPolicy },
    },
  }
}
