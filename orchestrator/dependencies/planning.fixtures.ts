/** Fixtures of the dependency planning tests: manifests, CRDs, the catalog, the planning context, packages. */
import type { PlanCatalog } from '../../functions/dependency-check/index.js'
import { KubeObject, packagePathAnnotation } from '../../functions/krm/index.js'
import { readFleetDependencies } from './repository-plan.js'
import type { PlanContext, PresentPackage } from './repository-plan.js'

/** A PackageManifest of the package at `root`. */
export function manifest(root: string, name: string, version: string, dependencies: unknown[] = []): KubeObject {
  return KubeObject.fromObject({
    apiVersion: 'kpt-variants.dev/v1alpha1',
    kind: 'PackageManifest',
    metadata: { name, annotations: { 'config.kubernetes.io/local-config': 'true', [packagePathAnnotation]: root } },
    spec: { version, dependencies },
  })
}

/** A CRD of the package at `root`, serving `group/v1 kind`. */
export function crd(root: string, group: string, kind: string): KubeObject {
  return KubeObject.fromObject({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${kind.toLowerCase()}s.${group}`, annotations: { [packagePathAnnotation]: root } },
    spec: {
      group,
      names: { kind, plural: `${kind.toLowerCase()}s` },
      scope: 'Namespaced',
      versions: [{ name: 'v1', served: true, storage: true }],
    },
  })
}

export const source = (pkg: string, revision: number) => ({ repo: 'catalog', package: pkg, revision })

/** The catalog the upstream repository makes: cert-manager 1.12 and 1.14, prometheus-operator serving ServiceMonitor. */
export const catalogs: PlanCatalog[] = [
  {
    name: 'repository catalog',
    packages: [
      {
        name: 'cert-manager',
        versions: [
          { version: 'v1.12.0', provides: [], dependencies: [], source: source('cert-manager', 1) },
          { version: 'v1.14.0', provides: [], dependencies: [], source: source('cert-manager', 2) },
        ],
      },
      {
        name: 'prometheus-operator',
        versions: [
          {
            version: 'v0.70.0',
            provides: [{ apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor' }],
            dependencies: [],
            source: source('prometheus-operator', 1),
          },
        ],
      },
    ],
  },
]

/** The planning context of a test: the fleet's objects and catalogs (`fleetObjects`, `catalogs`), the mode, how sources resolve. */
export const context = (
  more: Partial<Omit<PlanContext, 'fleet'>> & { fleetObjects?: KubeObject[]; catalogs?: PlanCatalog[] } = {},
): PlanContext => {
  const { fleetObjects = [], catalogs: extra = catalogs, ...rest } = more
  return {
    fleet: readFleetDependencies(fleetObjects, extra),
    mode: 'install',
    resolve: () => ({ ok: false, message: 'not resolved in this test' }),
    ...rest,
  }
}

/** A variant's package in repository `repo` that needs cert-manager `range`. */
export function monitor(repo: string, range = '>= v1.13.0', name = 'edge-monitor') {
  const root = `/out/${repo}/${name}`
  return {
    path: `${repo}/${name}`,
    objects: [manifest(root, name, 'v1.0.0', [{ name: 'cert-manager', version: range }])],
  }
}

export function present(
  repo: string,
  pkg: string,
  name: string,
  version: string,
  mark: boolean,
  dependencies: unknown[] = [],
): PresentPackage {
  const root = `/out/${repo}/${pkg}`
  return {
    pkg,
    root,
    objects: [manifest(root, name, version, dependencies)],
    record: mark ? { installedAsDependency: true, deletionPolicy: 'delete' } : {},
  }
}
