/**
 * A repository's dependency plan as steps (pure): the resolver's installs,
 * upgrades, downgrades and prunes, each with where the package is (or goes),
 * where its version comes from, who needs it and what it needs; and what the
 * repository holds afterwards. planRepository (repository-plan.ts) decides; this
 * module describes.
 */
import type { InstalledPackage, PackageManifest, PackageSource } from '../../functions/api/dependencies.js'
import { crdProvides, isCustomResourceDefinition } from '../../functions/api/dependencies.js'
import type { DependencyReport, Plan, PlanCatalog } from '../../functions/dependency-check/index.js'
import { packagePathAnnotation } from '../../functions/krm/index.js'
import type { KubeObject } from '../../functions/krm/index.js'
import { rootManifest } from '../package/dependency-objects.js'
import type { PackageRecord } from '../package/ownership.js'
import type { PlannedVariant } from '../plan/plan.js'
import type { RepositoryDependencies } from '../report/report.js'
import type { RepositoryPolicy } from './policy.js'

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

/** One step of a repository's plan; `configure`: a configured dependency kept at its version, rendered again with its configuration. */
export interface DependencyStep {
  action: 'install' | 'upgrade' | 'downgrade' | 'remove' | 'configure'
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
  /** In install mode, why no variant renders it. */
  unresolved?: string
}

/** A catalog version with its source, by `package@version`, over every catalog. */
export type Sources = Map<string, { source?: PackageSource; path?: string; deletionPolicy?: 'delete' | 'orphan' }>

/** The repository's own packages that declare a version, as installations named by their path. */
/** A package of the repository that declares a version, as an installation named by its path. */
export interface Present {
  pkg: string
  manifest: PackageManifest
  record: PackageRecord
  installed: Omit<InstalledPackage, 'object'>
}

export function presentPackages(packages: readonly PresentPackage[]): Present[] {
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
      provides: [
        ...manifest.provides,
        ...p.objects
          .filter((o) => isCustomResourceDefinition(o) && o.getAnnotation(packagePathAnnotation) === p.root)
          .flatMap(crdProvides),
      ],
      deleting: false,
    }
    out.push({ pkg: p.pkg, manifest, record: p.record, installed })
  }
  return out
}

/** The variants whose targets need `pkg`, directly or through other dependencies (their reports list both). */
export function needing(plan: Plan, pkg: string, owners: ReadonlyMap<string, string>): string[] {
  const paths = new Set<string>()
  for (const target of plan.packages) {
    const path = owners.get(`${target.namespace}/${target.package}`)
    if (path && target.dependencies.some((d) => providerOf(d) === pkg)) paths.add(path)
  }
  return [...paths]
}

/** The packages `pkg`'s own dependencies resolve to, by name, in the plan. */
export function requirementsOf(plan: Plan, pkg: string): string[] {
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
export function providerOf(dep: DependencyReport): string | undefined {
  if (dep.satisfiedBy && 'package' in dep.satisfiedBy) return dep.satisfiedBy.package
  return dep.type === 'Package' ? dep.name : undefined
}

/**
 * Every catalog version's source, and its package's path and deletion policy:
 * catalogs in name order, the first naming each winning (so a catalog may say
 * only where a package goes, or to orphan it, and another where it comes from).
 */
export function sourcesOf(catalogs: readonly PlanCatalog[]): Sources {
  const sources = new Map<string, PackageSource>()
  const packages = new Map<string, { path?: string; deletionPolicy?: 'delete' | 'orphan' }>()
  for (const catalog of [...catalogs].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    for (const pkg of catalog.packages) {
      const known = packages.get(pkg.name) ?? {}
      packages.set(pkg.name, {
        ...(pkg.path ? { path: pkg.path } : {}),
        ...(pkg.deletionPolicy ? { deletionPolicy: pkg.deletionPolicy } : {}),
        ...known,
      })
      for (const v of pkg.versions)
        if (v.source && !sources.has(`${pkg.name}@${v.version}`)) sources.set(`${pkg.name}@${v.version}`, v.source)
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

/** What the steps of a plan are described from: the plan, what the repository holds, and where versions come from. */
interface StepSources {
  plan: Plan
  present: readonly Present[]
  installed: readonly Omit<InstalledPackage, 'object'>[]
  sources: Sources
  /** Each package's place in the plan's dependency order. */
  order: ReadonlyMap<string, number>
  requiredBy: ReadonlyMap<string, string[]>
}

/** An install, upgrade or downgrade the resolver decided. */
interface Change {
  action: 'install' | 'upgrade' | 'downgrade'
  pkg: string
  namespace: string
  version: string
  from?: string
}

/** The plan's changes as steps, in the plan's dependency order, removals last. */
export function stepsOf(
  plan: Plan,
  present: readonly Present[],
  installed: readonly Omit<InstalledPackage, 'object'>[],
  sources: Sources,
): DependencyStep[] {
  const order = new Map(plan.order.map((id, i) => [id, i]))
  const from: StepSources = { plan, present, installed, sources, order, requiredBy: requirersOf(plan) }
  const steps: (DependencyStep & { rank: number })[] = []
  for (const s of plan.install)
    steps.push(changeStep(from, { action: 'install', pkg: s.package, namespace: s.namespace, version: s.version }))
  for (const s of plan.upgrade)
    steps.push(
      changeStep(from, { action: 'upgrade', pkg: s.package, namespace: s.namespace, version: s.to, from: s.from }),
    )
  for (const s of plan.downgrade)
    steps.push(
      changeStep(from, { action: 'downgrade', pkg: s.package, namespace: s.namespace, version: s.to, from: s.from }),
    )
  const removals = plan.prune.map((s) => removalStep(from, s))
  steps.sort((a, b) => a.rank - b.rank || (a.package < b.package ? -1 : a.package > b.package ? 1 : 0))
  return [...steps.map(({ rank: _rank, ...step }) => step), ...removals.sort((a, b) => (a.pkg < b.pkg ? -1 : 1))]
}

/** A change as a step: where the package is in git (or outside it) or goes, and its rank in the dependency order. */
function changeStep(from: StepSources, change: Change): DependencyStep & { rank: number } {
  const { action, pkg, namespace, version } = change
  const found = from.sources.get(`${pkg}@${version}`)
  const here =
    action === 'install'
      ? undefined
      : from.present.find((p) => p.installed.package === pkg && p.installed.namespace === namespace)
  // Installed, but not by a package in git: an InstalledPackage alone says it is there.
  const elsewhere =
    action === 'install' || here
      ? undefined
      : from.installed.find(
          (i) => i.package === pkg && i.namespace === namespace && !from.present.some((p) => p.installed === i),
        )
  const step: DependencyStep & { rank: number } = {
    action,
    package: pkg,
    namespace,
    version,
    pkg: here?.pkg ?? found?.path ?? pkg,
    asDependency: here
      ? here.record.installedAsDependency === true
      : elsewhere
        ? elsewhere.installedAsDependency
        : true,
    deletionPolicy: here?.record.deletionPolicy ?? found?.deletionPolicy ?? 'delete',
    requiredBy: from.requiredBy.get(pkg) ?? [],
    neededBy: [],
    requires: [],
    rank: from.order.get(namespace ? `${namespace}/${pkg}` : pkg) ?? Number.MAX_SAFE_INTEGER,
  }
  if (change.from !== undefined) step.from = change.from
  if (found?.source) step.source = found.source
  if (elsewhere) step.outsideGit = true
  return step
}

/** A prune as a step: the package in git, or (not there) one installed outside it. */
function removalStep(from: StepSources, s: Plan['prune'][number]): DependencyStep {
  const here = from.present.find((p) => p.installed.name === s.name && p.installed.package === s.package)
  const version = here?.installed.version ?? from.installed.find((i) => i.name === s.name)?.version
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
  return step
}

/** Who needs each package, with the range they need: `edge-monitor >=1.13.0`. */
export function requirersOf(plan: Plan): Map<string, string[]> {
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

type GraphPackage = RepositoryDependencies['packages'][number]

/** What a manifest requires, as render's report says it: packages with their range, APIs by `apiVersion/kind`. */
export function declaredRequirements(manifest: Pick<PackageManifest, 'dependencies'>): GraphPackage['requires'] {
  return manifest.dependencies.flatMap((d) =>
    d.type === 'Package'
      ? [{ name: d.name, range: d.version || '*' }]
      : d.type === 'GVK'
        ? [{ name: `${d.gvk.apiVersion}/${d.gvk.kind}`, range: '' }]
        : [],
  )
}

/** A package an InstalledPackage object says was installed outside git, as a graph's entry. */
export function outsideGitPackage(
  installed: Pick<InstalledPackage, 'package' | 'version' | 'installedAsDependency'>,
): GraphPackage {
  return {
    name: installed.package,
    version: installed.version,
    installedAsDependency: installed.installedAsDependency,
    requires: [],
    outsideGit: true,
  }
}

/** The repository's packages once the plan is carried out: variants' and present ones, with what they require. */
export function graphOf(
  manifests: readonly PackageManifest[],
  present: readonly Present[],
  installed: readonly Omit<InstalledPackage, 'object'>[],
  steps: readonly DependencyStep[],
): RepositoryDependencies['packages'] {
  const packages = new Map<string, GraphPackage>()
  for (const i of installed) packages.set(i.package, outsideGitPackage(i))
  for (const p of present)
    packages.set(p.installed.package, {
      name: p.installed.package,
      version: p.installed.version,
      installedAsDependency: p.installed.installedAsDependency,
      requires: declaredRequirements(p.manifest),
    })
  for (const m of manifests)
    packages.set(m.name, {
      name: m.name,
      ...(m.version ? { version: m.version } : {}),
      installedAsDependency: false,
      requires: declaredRequirements(m),
    })
  for (const step of steps) {
    if (step.action === 'remove') packages.delete(step.package)
    else
      packages.set(step.package, {
        ...(packages.get(step.package) ?? {
          name: step.package,
          installedAsDependency: step.asDependency,
          requires: [],
        }),
        version: step.version!,
      })
  }
  return [...packages.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

/**
 * The packages installed as dependencies that the plan keeps where they are
 * and the policy configures: each rendered again at its version (from its
 * catalog source), so that a change of its configuration reaches it. Only
 * those whose version's source is known: the others stay as they are.
 */
export function configureSteps(
  plan: Plan,
  steps: readonly DependencyStep[],
  present: readonly Present[],
  policy: Pick<RepositoryPolicy, 'configure'>,
  sources: Sources,
): DependencyStep[] {
  if (policy.configure.size === 0) return []
  const touched = new Set(steps.map((s) => `${s.package}|${s.namespace}`))
  const requiredBy = requirersOf(plan)
  const out: DependencyStep[] = []
  for (const p of present) {
    const { package: pkg, namespace, version } = p.installed
    if (!p.record.installedAsDependency || !policy.configure.has(pkg) || touched.has(`${pkg}|${namespace}`)) continue
    const found = sources.get(`${pkg}@${version}`)
    if (!found?.source) continue
    out.push({
      action: 'configure',
      package: pkg,
      namespace,
      version,
      from: version,
      pkg: p.pkg,
      source: found.source,
      asDependency: true,
      deletionPolicy: p.record.deletionPolicy ?? found.deletionPolicy ?? 'delete',
      requiredBy: requiredBy.get(pkg) ?? [],
      neededBy: [],
      requires: [],
    })
  }
  return out
}
