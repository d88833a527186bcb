/**
 * Platform constraints (pure): a PackageManifest's `spec.kubernetesVersion`
 * against the Kubernetes version of the cluster a package is rendered for.
 * The version is read where the repository's DependencyPolicy says
 * (`spec.clusterVersion`: a label, or a field of the target object), by
 * default the label `kpt-variants.dev/kubernetes-version` of the object the
 * set selected for the variant, else of its downstream Repository. A cluster
 * that does not satisfy the range fails the variant with both versions; one
 * whose version is unknown is a warning (docs/package-dependencies.md,
 * "Platform constraints").
 */
import type { ClusterVersionSource } from '../../functions/api/dependency-policy.js'
import type { Repository } from '../../functions/api/repository.js'
import type { KubeObject } from '../../functions/krm/index.js'
import { parseConstraint, parseVersion, satisfies } from '../../functions/dependency-check/index.js'
import type { PlanCatalog } from '../../functions/dependency-check/index.js'

/** The cluster a variant renders for, as far as its Kubernetes version goes. */
export interface ClusterVersion {
  /** `1.29.3`; undefined when the fleet does not say. */
  version?: string
  /** Where it was read (or looked for): `WorkloadCluster edge-05, label kpt-variants.dev/kubernetes-version`. */
  source: string
}

/** The cluster version `source` names, on the variant's target object, else on its downstream Repository. */
export function clusterVersionOf(
  source: ClusterVersionSource,
  target: KubeObject | undefined,
  repository: Pick<Repository, 'object'> | undefined,
): ClusterVersion {
  const objects = [target, repository?.object].filter((o): o is KubeObject => o !== undefined)
  const where = 'label' in source ? `label ${source.label}` : `field ${source.path}`
  for (const object of objects) {
    const value = 'label' in source ? object.getLabel(source.label) : valueAt(object, source.field)
    if (value) return { version: value, source: `${object.kind} ${object.name} (${where})` }
  }
  return { source: `${objects.map((o) => `${o.kind} ${o.name}`).join(' or ') || 'the cluster'} (${where})` }
}

function valueAt(object: KubeObject, path: readonly string[]): string | undefined {
  const value = object.get([...path])
  return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined
}

/**
 * Whether a package that needs Kubernetes `required` runs on `cluster`: an
 * error when it does not, a warning when the cluster's version is unknown
 * (or unreadable), nothing when it does.
 */
export function platformCheck(
  pkg: string,
  required: string,
  cluster: ClusterVersion,
): { error: string } | { warning: string } | undefined {
  const parsed = parseConstraint(required)
  if (!parsed.ok) return { error: `${pkg}: spec.kubernetesVersion ${parsed.error}` }
  if (!cluster.version)
    return {
      warning: `${pkg} needs Kubernetes ${required}; the cluster's version is unknown (nothing at ${cluster.source}), so it is not checked`,
    }
  const version = parseVersion(cluster.version.replace(/^v/, ''), { coerce: true })
  if (!version?.semver)
    return {
      warning: `${pkg} needs Kubernetes ${required}; ${cluster.source} says ${JSON.stringify(cluster.version)}, which is not a version, so it is not checked`,
    }
  if (satisfies(version, parsed.constraint)) return undefined
  return {
    error: `${pkg} needs Kubernetes ${required}, and ${cluster.source} runs ${cluster.version}`,
  }
}

/**
 * The catalogs without the versions that do not run on `cluster` (their
 * `kubernetesVersion` range excludes its version), so that a dependency is
 * installed or moved only to a version the cluster runs, as Carvel filters
 * its candidates. The catalogs as they are when the version is unknown or no
 * version declares a range.
 */
export function runnableCatalogs(
  catalogs: readonly PlanCatalog[],
  cluster: ClusterVersion | undefined,
): readonly PlanCatalog[] {
  const version = cluster?.version ? parseVersion(cluster.version.replace(/^v/, ''), { coerce: true }) : undefined
  if (!version?.semver) return catalogs
  if (!catalogs.some((c) => c.packages.some((p) => p.versions.some((v) => v.kubernetesVersion)))) return catalogs
  const runs = (range: string | undefined) => {
    if (!range) return true
    const parsed = parseConstraint(range)
    return parsed.ok && satisfies(version, parsed.constraint)
  }
  return catalogs.map((c) => ({
    ...c,
    packages: c.packages.map((p) => ({ ...p, versions: p.versions.filter((v) => runs(v.kubernetesVersion)) })),
  }))
}
