/** package-context: Porch's package context injection as a KRM function. */
import type { KrmFunction } from '../krm/index.js'
import { packageContext } from './package-context.js'

export { packageContextConfigOf, parseConfig } from './config.js'
export type { PackageContextConfig } from './config.js'
export { applyPackageContext, findPackageContext, packageContext, setPackageContext } from './package-context.js'

/** The function as `bin/package-context` runs it. */
export const packageContextFunction: KrmFunction = {
  name: 'package-context',
  description:
    "sets and removes keys of the package's kptfile.kpt.dev ConfigMap (package-context.yaml), as a Porch PackageVariant does.",
  usage: `functionConfig:
  config.porch.kpt.dev/v1alpha1 PackageVariant   uses spec.packageContext.data and .removeKeys
  v1 ConfigMap                                   its data are the keys to set

Example:
  kpt fn eval my-pkg --exec package-context -- region=us-east1 tier=gold`,
  transform: packageContext,
}
