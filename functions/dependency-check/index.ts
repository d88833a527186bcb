/** dependency-check: semver and GVK dependencies, conflicts and install plans. */
import type { KrmFunction } from '../krm/index.js'
import { dependencyCheck } from './dependency-check.js'

export { parseConfig } from './config.js'
export { candidateAdmitted, parseConstraint, satisfies, translateConstraint } from './constraints.js'
export type { Constraint } from './constraints.js'
export { dependencyCheck } from './dependency-check.js'
export { gatherInputs } from './inputs.js'
export type * from './plan.js'
export { planDependencies } from './resolve.js'
export { newResultObject, planResults, resultStatus } from './report.js'
export { compareVersions, isPrerelease, parseVersion } from './versions.js'
export type { Version } from './versions.js'

/** The function as `bin/dependency-check` runs it. */
export const dependencyCheckFunction: KrmFunction = {
  name: 'dependency-check',
  description:
    "checks the package's dependencies (PackageManifest) against a catalog and the installed packages, and plans installs, upgrades and prunes.",
  usage: `functionConfig (optional):
  kpt-variants.dev/v1alpha1 DependencyCheck   spec.targets (default: the PackageManifests
                                              among the items) and spec.policy

Sources (--sources / KPT_VARIANTS_SOURCES): PackageCatalog, InstalledPackage, ClusterAPIs.

Example (Kptfile):
  pipeline:
    validators:
    - exec: dependency-check`,
  transform: dependencyCheck,
}
