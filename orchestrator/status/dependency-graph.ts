/**
 * Each downstream repository's dependency graph as the output holds it (pure):
 * its packages that declare themselves (a root PackageManifest), what each
 * requires, which a render installed as a dependency, and what the fleet's
 * InstalledPackage objects say was installed outside git. The same shape as
 * the graph in render's report, so the fleet page draws both alike.
 */
import { readInstalledPackage, installedPackageKind, isDependencyKind } from '../../functions/api/dependencies.js'
import type { PackageManifest } from '../../functions/api/dependencies.js'
import type { KubeObject } from '../../functions/krm/index.js'
import { repositoryLabel } from '../dependencies/repository-plan.js'
import { declaredRequirements, outsideGitPackage } from '../dependencies/steps.js'
import type { FleetStatus } from './fleet-status.js'

/** A package of the output with its own PackageManifest. */
export interface DeclaredPackage {
  /** `<repo>/<package>` */
  path: string
  manifest: Pick<PackageManifest, 'name' | 'version' | 'namespace' | 'dependencies'>
  installedAsDependency: boolean
}

type GraphPackage = FleetStatus['repositories'][number]['packages'][number]

/**
 * The graph of every repository where a package of the output declares
 * itself, by repository name; `fleetObjects`: the fleet's objects, whose
 * InstalledPackages (labelled `kpt-variants.dev/repository: <repo>`, or
 * unlabelled for every repository) count where the repository holds no
 * package of that name: git is what the cluster is to run.
 */
export function outputGraph(
  declared: readonly DeclaredPackage[],
  fleetObjects: readonly KubeObject[],
): FleetStatus['repositories'] {
  const byRepo = new Map<string, DeclaredPackage[]>()
  for (const d of declared) {
    const repo = d.path.slice(0, d.path.indexOf('/'))
    ;(byRepo.get(repo) ?? byRepo.set(repo, []).get(repo)!).push(d)
  }
  const outside = installedOutsideGit(fleetObjects)
  return [...byRepo]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, held]) => {
      const packages = new Map<string, GraphPackage>()
      const inGit = new Set(held.map((d) => `${d.manifest.name}|${d.manifest.namespace}`))
      for (const i of [...(outside.get('') ?? []), ...(outside.get(name) ?? [])]) {
        if (!inGit.has(`${i.package}|${i.namespace}`)) packages.set(i.package, outsideGitPackage(i))
      }
      for (const d of held) {
        const { manifest } = d
        packages.set(manifest.name, {
          name: manifest.name,
          ...(manifest.version ? { version: manifest.version } : {}),
          installedAsDependency: d.installedAsDependency,
          requires: declaredRequirements(manifest),
        })
      }
      return { name, packages: [...packages.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) }
    })
}

/** The fleet's readable InstalledPackages by the repository their label names (`''`: every repository's). */
function installedOutsideGit(
  objects: readonly KubeObject[],
): Map<string, { package: string; version: string; namespace: string; installedAsDependency: boolean }[]> {
  const byRepo = new Map<
    string,
    { package: string; version: string; namespace: string; installedAsDependency: boolean }[]
  >()
  for (const object of objects) {
    if (!isDependencyKind(object, installedPackageKind)) continue
    // One that cannot be read fails the render of its repository's variants; status shows what it can.
    const read = readInstalledPackage(object)
    if (!read.ok) continue
    const repo = object.getLabel(repositoryLabel) ?? ''
    const { package: pkg, version, namespace, installedAsDependency } = read.value
    ;(byRepo.get(repo) ?? byRepo.set(repo, []).get(repo)!).push({
      package: pkg,
      version,
      namespace,
      installedAsDependency,
    })
  }
  return byRepo
}
