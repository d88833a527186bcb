/**
 * The planner's input and output types: plain data, no KubeObjects required
 * (dependencies may carry `declaredAt`, which the planner passes through).
 */
import type {
  CatalogPackage,
  Dependency,
  DependencyPolicy,
  GVK,
  InstallationType,
  InstalledPackage,
} from '../api/dependencies.js'

/** A package to validate as if installed or updated together with the other targets. */
export interface PlanTarget {
  package: string
  namespace: string
  /** The version being installed; absent = picked from the catalog (`constraint`, else latest). */
  version?: string
  constraint?: string
  /** The package's own declaration (validator use); else the catalog entry at `version`. */
  manifest?: { provides: GVK[]; dependencies: Dependency[]; installationType?: InstallationType }
}

/** A catalog as the planner reads it; catalogs are merged in `name` order. */
export interface PlanCatalog {
  name: string
  packages: CatalogPackage[]
}

/** Everything the planner reads. */
export interface PlanInput {
  targets: PlanTarget[]
  catalogs: PlanCatalog[]
  installed: Omit<InstalledPackage, 'object'>[]
  clusterAPIs: GVK[]
  policy: DependencyPolicy
}

/** What happens to one dependency. */
export type DependencyState =
  | 'Fulfilled'
  | 'Install'
  | 'Upgrade'
  | 'Downgrade'
  | 'Conflict'
  | 'Missing'
  | 'NoMatchingVersion'
  | 'Skipped'
  | 'Cycle'
  | 'Ambiguous'

/** Why a conflict is one; the upstream reasons plus Missing, NoMatchingVersion, Cycle and ImproperConstraint. */
export type ConflictReason =
  | 'InstalledTooNew'
  | 'InstalledTooOld'
  | 'NoVersionSatisfiesAll'
  | 'DowngradeNotAllowed'
  | 'UpgradeNotAllowed'
  | 'InstallationTypeViolation'
  | 'DigestMismatch'
  | 'Missing'
  | 'NoMatchingVersion'
  | 'Cycle'
  | 'ImproperConstraint'

/** What satisfies a GVK / anyOf / package dependency. */
export type SatisfiedBy = { package: string; version: string; namespace?: string } | { clusterAPI: true }

/** The verdict on one dependency edge. */
export interface DependencyReport {
  /** The dependant, `name@version` (namespaced: `ns/name@version`). */
  requiredBy: string
  /** The package name, the GVK (`apiVersion/kind`), or the alternatives joined by ` | `. */
  name: string
  type: 'Package' | 'GVK' | 'AnyOf'
  /** The normalised constraint (`""` = any); package dependencies only. */
  required?: string
  state: DependencyState
  /** The installed version before the plan, if the dependency was installed. */
  installed?: string
  resolvable?: boolean
  satisfiedBy?: SatisfiedBy
  optional?: boolean
  transitive: boolean
  message: string
  /** Pre-existing problem between two untouched installations: a warning, not attributed to the targets. */
  preExisting?: boolean
  declaredAt?: Dependency['declaredAt']
}

/** One target with its dependencies, direct then transitive. */
export interface TargetReport {
  package: string
  namespace: string
  version?: string
  dependencies: DependencyReport[]
}

export interface InstallStep {
  package: string
  version: string
  namespace: string
  requiredBy: string[]
  transitive: boolean
}

export interface ChangeStep {
  package: string
  namespace: string
  from: string
  to: string
  requiredBy: string[]
}

export interface PruneStep {
  package: string
  namespace: string
  /** The installation name. */
  name: string
}

/** A conflict with its cause and whether (and how) it can be resolved. */
export interface Conflict {
  package: string
  namespace: string
  actual?: string
  required: string
  requiredBy: string
  constraints: { from: string; range: string }[]
  direction?: 'Above' | 'Below' | 'Gap' | 'Digest'
  resolvable: boolean
  resolution?: { action: 'Upgrade' | 'Downgrade' | 'Install'; package?: string; version: string }
  reason: ConflictReason
  message: string
  declaredAt?: Dependency['declaredAt']
}

/** A problem with the input itself (bad version string, duplicate installation...). */
export interface PlanIssue {
  severity: 'error' | 'warning' | 'info'
  message: string
  /** The package it is about, if any. */
  package?: string
  declaredAt?: Dependency['declaredAt']
}

/** The planner's answer. */
export interface Plan {
  result: 'OK' | 'RESOLVABLE' | 'CONFLICT'
  packages: TargetReport[]
  install: InstallStep[]
  upgrade: ChangeStep[]
  downgrade: ChangeStep[]
  prune: PruneStep[]
  /** Node ids of everything the plan touches (targets included), dependencies first. */
  order: string[]
  conflicts: Conflict[]
  /** Pre-existing problems and input issues. */
  issues: PlanIssue[]
  /** When no set of versions satisfies every dependency: why, step by step (input facts, then what follows). */
  explanation?: string[]
}
