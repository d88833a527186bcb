/** Shared fixtures of the planner tests (resolve*.test.ts): catalog, installation and target builders, and `plan`. */
import { defaultDependencyPolicy } from '../api/dependencies.js'
import type { CatalogPackage, Dependency, DependencyPolicy } from '../api/dependencies.js'
import type { PlanInput, PlanTarget } from './plan.js'
import { planDependencies } from './resolve.js'

/** `dep('b', '^1')`; `gvk('x/v1', 'K')`. */
export const dep = (name: string, version = '', optional = false): Dependency => ({
  type: 'Package',
  name,
  version,
  optional,
})
export const gvk = (apiVersion: string, kind: string, optional = false): Dependency => ({
  type: 'GVK',
  gvk: { apiVersion, kind },
  optional,
})
export const anyOf = (...alts: Dependency[]): Dependency => ({ type: 'AnyOf', anyOf: alts as never, optional: false })

/** `pkg('b', {'1.0.0': [dep(...)], '2.0.0': []})` */
export function pkg(
  name: string,
  versions: Record<string, Dependency[]>,
  extra: Partial<CatalogPackage> = {},
  provides: Record<string, string[]> = {},
): CatalogPackage {
  return {
    name,
    ...extra,
    versions: Object.entries(versions).map(([version, dependencies]) => ({
      version,
      dependencies,
      provides: (provides[version] ?? []).map((k) => ({ apiVersion: k.split('|')[0]!, kind: k.split('|')[1]! })),
    })),
  }
}
export const installed = (
  name: string,
  version: string,
  extra: { asDependency?: boolean; namespace?: string; deps?: Dependency[] } = {},
) => ({
  name,
  package: name,
  version,
  namespace: extra.namespace ?? '',
  installedAsDependency: extra.asDependency ?? false,
  deleting: false,
  ...(extra.deps ? { dependencies: extra.deps } : {}),
})
export const target = (name: string, version?: string, deps?: Dependency[]): PlanTarget => ({
  package: name,
  namespace: '',
  ...(version ? { version } : {}),
  ...(deps ? { manifest: { dependencies: deps, provides: [] } } : {}),
})

export function plan(
  input: Partial<Omit<PlanInput, 'policy'>> & { packages?: CatalogPackage[]; policy?: Partial<DependencyPolicy> },
) {
  return planDependencies({
    targets: input.targets ?? [],
    catalogs: input.catalogs ?? [{ name: 'main', packages: input.packages ?? [] }],
    installed: input.installed ?? [],
    clusterAPIs: input.clusterAPIs ?? [],
    policy: { ...defaultDependencyPolicy, ...input.policy },
  })
}
