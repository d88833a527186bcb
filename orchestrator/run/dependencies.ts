/**
 * The dependency check of a run, per downstream repository: every package
 * bound for a repository is checked together with the others (their
 * PackageManifests are the targets), against the fleet's catalogs and the
 * repository's installed packages. An `InstalledPackage` belongs to the
 * repository its label `kpt-variants.dev/repository` names; an unlabelled one
 * to every repository. A resolvable conflict is a warning; anything else that
 * is unmet fails the variant whose package needs it.
 */
import { installedPackageKind, isCustomResourceDefinition, isDependencyKind, packageManifestKind } from '../../functions/api/dependencies.js'
import { defaultDependencyPolicy } from '../../functions/api/dependencies.js'
import { gatherInputs, planDependencies } from '../../functions/dependency-check/index.js'
import type { DependencyReport, Plan } from '../../functions/dependency-check/index.js'
import type { KubeObject } from '../../functions/krm/index.js'
import type { Fleet } from '../fleet/fleet.js'
import type { StagedPackage } from '../output/output.js'
import type { VariantReport } from '../report/report.js'

/** Label that binds an InstalledPackage to one downstream repository. */
export const repositoryLabel = 'kpt-variants.dev/repository'

/** One rendered package, with the dependency objects it carries. */
export interface BoundPackage {
  /** Who to report to (the variant's identity). */
  id: string
  /** The downstream repository. */
  repo: string
  /** The package's PackageManifests and CRDs, with `package-path` annotations. */
  objects: KubeObject[]
}

/** What the check found for one package. */
export interface DependencyVerdict {
  errors: string[]
  warnings: string[]
}

/** True for the objects the check reads from a package. */
export function isDependencyObject(object: KubeObject): boolean {
  return isDependencyKind(object, packageManifestKind) || isCustomResourceDefinition(object)
}

/** Checks every repository's packages together; returns verdicts by package id (packages without a manifest get none). */
export function checkDependencies(packages: readonly BoundPackage[], fleet: readonly KubeObject[]): Map<string, DependencyVerdict> {
  const verdicts = new Map<string, DependencyVerdict>()
  const byRepo = new Map<string, BoundPackage[]>()
  for (const pkg of packages) {
    if (!pkg.objects.some((o) => isDependencyKind(o, packageManifestKind))) continue
    let list = byRepo.get(pkg.repo)
    if (!list) byRepo.set(pkg.repo, (list = []))
    list.push(pkg)
  }
  const config = { name: 'dependency-check', targets: [], policy: { ...defaultDependencyPolicy } }
  for (const [repo, bound] of [...byRepo].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const sources = fleet.filter((o) => !isDependencyKind(o, installedPackageKind) || [undefined, repo].includes(o.getLabel(repositoryLabel)))
    const verdictOf = (id: string) => {
      let v = verdicts.get(id)
      if (!v) verdicts.set(id, (v = { errors: [], warnings: [] }))
      return v
    }
    // A package whose own manifest cannot be read fails alone; the others are checked together.
    const valid: BoundPackage[] = []
    for (const pkg of bound) {
      const own = gatherInputs(pkg.objects, [], config)
      const errors = own.results.filter((r) => r.severity === 'error')
      if (errors.length > 0) verdictOf(pkg.id).errors.push(...errors.map((r) => r.message))
      else valid.push(pkg)
    }
    const gathered = gatherInputs(
      valid.flatMap((p) => p.objects),
      sources,
      config,
    )
    for (const r of gathered.results) {
      if (r.severity === 'error') for (const pkg of valid) verdictOf(pkg.id).errors.push(`repository ${repo}: ${r.message}`)
    }
    if (gathered.results.some((r) => r.severity === 'error') || gathered.input.targets.length === 0) continue
    const plan = planDependencies(gathered.input)
    attribute(
      plan,
      repo,
      valid,
      gathered.manifests.map((m) => m.object),
      verdictOf,
    )
  }
  return verdicts
}

/** Gives each package the reports of its own targets; conflicts of no target go to every package of the repository. */
function attribute(plan: Plan, repo: string, packages: readonly BoundPackage[], manifests: readonly KubeObject[], verdictOf: (id: string) => DependencyVerdict): void {
  const owner = new Map<string, string>()
  for (const pkg of packages) for (const o of pkg.objects) if (manifests.includes(o)) owner.set(`${o.namespace}/${o.name}`, pkg.id)
  const reported = new Set<string>()
  for (const target of plan.packages) {
    const id = owner.get(`${target.namespace}/${target.package}`)
    if (!id) continue
    for (const dep of target.dependencies) {
      const text = describe(dep, repo)
      if (text === undefined) continue
      reported.add(`${dep.requiredBy}\0${dep.message}`)
      if (dep.state === 'Conflict' && dep.resolvable) verdictOf(id).warnings.push(text)
      else verdictOf(id).errors.push(text)
    }
  }
  for (const conflict of plan.conflicts) {
    if (reported.has(`${conflict.requiredBy}\0${conflict.message}`)) continue
    const text = `dependency conflict in repository ${repo}: ${conflict.message} (required by ${conflict.requiredBy})`
    const blamed = packages.filter((p) => p.objects.some((o) => manifests.includes(o) && o.name === conflict.package))
    for (const pkg of blamed.length > 0 ? blamed : packages) {
      if (conflict.resolvable) verdictOf(pkg.id).warnings.push(text)
      else verdictOf(pkg.id).errors.push(text)
    }
  }
}

/** The text of an unmet or conflicting dependency, or undefined when it is met. */
function describe(dep: DependencyReport, repo: string): string | undefined {
  if (!['Conflict', 'Missing', 'NoMatchingVersion', 'Cycle'].includes(dep.state)) return undefined
  return `dependency ${dep.requiredBy} -> ${dep.name} in repository ${repo}: ${dep.message}`
}

/** A rendered variant as the dependency check sees it. */
export interface RenderedVariant {
  /** `<repo>/<package>` */
  path: string
  report: VariantReport
  /** The package's PackageManifests and CRDs (see BoundPackage). */
  dependencies: KubeObject[]
  staged?: StagedPackage
}

/** Runs the dependency check over the rendered packages; returns the staged ones that passed (dry runs stage nothing). */
export function checkRenderedDependencies<T extends RenderedVariant>(pending: readonly T[], fleet: Fleet): T[] {
  const bound: BoundPackage[] = pending
    .filter((p) => p.report.status !== 'failed' && p.dependencies.length > 0)
    .map((p) => ({ id: p.path, repo: p.path.slice(0, p.path.indexOf('/')), objects: p.dependencies }))
  const verdicts = checkDependencies(bound, fleet.objects)
  for (const p of pending) {
    const verdict = verdicts.get(p.path)
    if (verdict) {
      p.report.warnings.push(...verdict.warnings)
      if (verdict.errors.length > 0) {
        p.report.status = 'failed'
        p.report.reasons.push(...verdict.errors)
        delete p.report.diff
      }
    }
  }
  return pending.filter((p) => p.staged && p.report.status !== 'failed')
}
