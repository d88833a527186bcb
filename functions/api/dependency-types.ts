/**
 * The data model of the dependency kinds (see dependencies.ts, which reads
 * them): plain types and defaults, with no readers, so the fast catalog
 * reader (catalog-value.ts) and the typed readers can both import them.
 */
import type { KubeObject } from '../krm/index.js'

/** How many installations of a package may exist (Carvel proposal). */
export type InstallationType = 'OnePerCluster' | 'OnePerNamespace' | 'NoRestrictions'
export const installationTypes: readonly InstallationType[] = ['OnePerCluster', 'OnePerNamespace', 'NoRestrictions']

/** An API a package serves or needs. */
export interface GVK {
  apiVersion: string
  kind: string
}

/** Where a dependency was declared, for results. */
export interface DeclaredAt {
  object: KubeObject
  /** Dotted path of the dependency entry, e.g. `spec.dependencies[2]`. */
  field: string
}

/** A dependency on a package by name, with a constraint (`""` = any version). */
export interface PackageDependency {
  type: 'Package'
  name: string
  version: string
  optional: boolean
  declaredAt?: DeclaredAt
}

/** A dependency on an API (group/version/kind). */
export interface GVKDependency {
  type: 'GVK'
  gvk: GVK
  optional: boolean
  declaredAt?: DeclaredAt
}

/** Ordered alternatives: the first fulfilled, else the first resolvable. */
export interface AnyOfDependency {
  type: 'AnyOf'
  anyOf: (PackageDependency | GVKDependency)[]
  optional: boolean
  declaredAt?: DeclaredAt
}

export type Dependency = PackageDependency | GVKDependency | AnyOfDependency

/**
 * Where a catalog version's package is cloned from when `kpt-variants render`
 * installs it: a package revision of a Repository of the fleet, named as a
 * PackageVariant's upstream names one (`revision`, else `workspaceName`, else
 * the head of the repository's branch).
 */
export interface PackageSource {
  /** The Repository's name (in the catalog's namespace, else any). */
  repo: string
  /** The package's directory in that repository. */
  package: string
  /** Published revision N: the tag `<package>/v<N>`. */
  revision?: number
  /** A draft, or an older Porch's named tag `<package>/<name>`, or a branch. */
  workspaceName?: string
}

/** One version of a catalog package. */
export interface CatalogVersion {
  /** The original string; printed as is in outputs (keeps `v` and `+N`). */
  version: string
  provides: GVK[]
  dependencies: Dependency[]
  installationType?: InstallationType
  /** Where it can be installed from; without one it can be checked but not installed. */
  source?: PackageSource
  /** The Kubernetes versions it runs on (a constraint); `kpt-variants render` installs it only on a cluster whose version satisfies it. */
  kubernetesVersion?: string
}

/** One package of a catalog. */
export interface CatalogPackage {
  name: string
  latestVersion?: string
  installationType?: InstallationType
  versions: CatalogVersion[]
  /** Where `render` installs it in a downstream repository (default: its name). */
  path?: string
  /** What `render` does with it once nothing needs it: delete it (the default), or orphan it (keep it, no longer marked as a dependency). */
  deletionPolicy?: 'delete' | 'orphan'
}

/** `PackageCatalog`: what can be installed. */
export interface PackageCatalog {
  object: KubeObject
  name: string
  packages: CatalogPackage[]
}

/** An API by group and kind, as a CustomResourceDefinition defines it. */
export interface GroupKind {
  group: string
  kind: string
}

/** `PackageManifest`: a kpt package declaring itself (local config). */
export interface PackageManifest {
  object: KubeObject
  name: string
  version?: string
  namespace: string
  provides: GVK[]
  dependencies: Dependency[]
  installationType?: InstallationType
  /** The Kubernetes versions the package runs on (a constraint), checked by `kpt-variants render` against the target cluster's. */
  kubernetesVersion?: string
  /** APIs its CRDs define on purpose although another package of the same repository defines them too (`kpt-variants render`). */
  sharedAPIs: GroupKind[]
}

/** `InstalledPackage`: one installation in the cluster. */
export interface InstalledPackage {
  object: KubeObject
  /** The installation name (`metadata.name`). */
  name: string
  package: string
  version: string
  namespace: string
  installedAsDependency: boolean
  /** The installed version's dependencies; absent = look them up in the catalog. */
  dependencies?: Dependency[]
  /** The APIs the installed version serves; absent = look them up in the catalog. */
  provides?: GVK[]
  deleting: boolean
}

/** `ClusterAPIs`: GVKs present without a managing package. */
export interface ClusterAPIs {
  object: KubeObject
  gvks: GVK[]
}

/** A package to install or update; `constraint` picks a version when `version` is absent. */
export interface DependencyTarget {
  package: string
  version?: string
  constraint?: string
  namespace: string
}

export type PrereleasePolicy = 'Exclude' | 'Include' | { identifiers: string[] }

/** The resolution policy; each field's default is the first value listed. */
export interface DependencyPolicy {
  upgrades: 'Allow' | 'Deny'
  upgradeTarget: 'Highest' | 'Lowest'
  downgrades: 'Deny' | 'Allow'
  prereleases: PrereleasePolicy
  latest: 'LatestVersionField' | 'HighestStable' | 'Highest'
  optional: 'Skip' | 'InstallIfResolvable'
  incompleteVersions: 'Ignore' | 'Coerce'
  /** `Dependencies`: move packages installed as dependencies to the highest version every range admits (Glasskube's auto-update), not only when a range needs it. */
  autoUpgrade: 'Never' | 'Dependencies'
}

/** The defaults functions/dependency-check/README.md documents. */
export const defaultDependencyPolicy: Readonly<DependencyPolicy> = Object.freeze({
  upgrades: 'Allow',
  upgradeTarget: 'Highest',
  downgrades: 'Deny',
  prereleases: 'Exclude',
  latest: 'LatestVersionField',
  optional: 'Skip',
  incompleteVersions: 'Ignore',
  autoUpgrade: 'Never',
})

/** `DependencyCheck`: the functionConfig. */
export interface DependencyCheck {
  object?: KubeObject
  name: string
  targets: DependencyTarget[]
  policy: DependencyPolicy
}
