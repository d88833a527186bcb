/**
 * Gathers the planner's input from a ResourceList: PackageManifests and CRDs
 * among the items (the package being checked), and PackageCatalog,
 * InstalledPackage and ClusterAPIs from `--sources` (or the items).
 */
import {
  clusterAPIsKind,
  crdProvides,
  installedPackageKind,
  isCustomResourceDefinition,
  isDependencyKind,
  packageCatalogKind,
  packageManifestKind,
  readClusterAPIs,
  readInstalledPackage,
  readPackageCatalog,
  readPackageManifest,
} from '../api/dependencies.js'
import type { DependencyCheck, PackageManifest, Read } from '../api/dependencies.js'
import { newResult, packagePathAnnotation } from '../krm/index.js'
import type { KubeObject, Result } from '../krm/index.js'
import type { PlanInput, PlanTarget } from './plan.js'

/** The planner input plus errors found while reading objects. */
export interface GatheredInput {
  input: PlanInput
  results: Result[]
  /** The PackageManifests found among the items. */
  manifests: PackageManifest[]
}

/** Builds the planner input; every unreadable object becomes error results naming its fields. */
export function gatherInputs(
  items: readonly KubeObject[],
  sources: readonly KubeObject[],
  config: DependencyCheck,
): GatheredInput {
  const results: Result[] = []
  const read = <T>(object: KubeObject, reader: (o: KubeObject) => Read<T>): T | undefined => {
    const r = reader(object)
    if (r.ok) return r.value
    for (const e of r.errors)
      results.push(newResult('error', `${object.describe()}: ${e.message}`, { object, field: e.field }))
    return undefined
  }
  const input: PlanInput = { targets: [], catalogs: [], installed: [], clusterAPIs: [], policy: config.policy }
  const manifests: PackageManifest[] = []
  for (const object of [...sources, ...items]) {
    if (isDependencyKind(object, packageCatalogKind)) {
      const catalog = read(object, readPackageCatalog)
      if (catalog) input.catalogs.push({ name: catalog.name, packages: catalog.packages })
    } else if (isDependencyKind(object, installedPackageKind)) {
      const installed = read(object, readInstalledPackage)
      if (installed) input.installed.push(installed)
    } else if (isDependencyKind(object, clusterAPIsKind)) {
      const apis = read(object, readClusterAPIs)
      if (apis) input.clusterAPIs.push(...apis.gvks)
    }
  }
  for (const object of items) {
    if (!isDependencyKind(object, packageManifestKind)) continue
    const manifest = read(object, readPackageManifest)
    if (manifest) manifests.push(withPackageCRDs(manifest, items))
  }
  input.targets =
    config.targets.length > 0
      ? config.targets.map((t) => targetFromConfig(t, manifests))
      : manifests.map(targetFromManifest)
  return { input, results, manifests }
}

/** The CRDs of the manifest's own (sub)package count as GVKs it provides. */
function withPackageCRDs(manifest: PackageManifest, items: readonly KubeObject[]): PackageManifest {
  const pkgPath = manifest.object.getAnnotation(packagePathAnnotation)
  const crds = items.filter((o) => isCustomResourceDefinition(o) && o.getAnnotation(packagePathAnnotation) === pkgPath)
  return crds.length === 0 ? manifest : { ...manifest, provides: [...manifest.provides, ...crds.flatMap(crdProvides)] }
}

function targetFromManifest(m: PackageManifest): PlanTarget {
  const target: PlanTarget = {
    package: m.name,
    namespace: m.namespace,
    manifest: { provides: m.provides, dependencies: m.dependencies },
  }
  if (m.installationType) target.manifest!.installationType = m.installationType
  if (m.version) target.version = m.version
  return target
}

function targetFromConfig(t: DependencyCheck['targets'][number], manifests: readonly PackageManifest[]): PlanTarget {
  const manifest = manifests.find((m) => m.name === t.package && (!t.version || !m.version || m.version === t.version))
  const target: PlanTarget = manifest ? targetFromManifest(manifest) : { package: t.package, namespace: t.namespace }
  target.namespace = t.namespace || target.namespace
  if (t.version) target.version = t.version
  if (t.constraint !== undefined && !t.version && !manifest) target.constraint = t.constraint
  return target
}
