/** package-variant: all of Porch's PackageVariant mutations as one KRM function. */
import type { KrmFunction } from '../krm/index.js'
import { packageVariant } from './package-variant.js'

export { parseConfig } from './config.js'
export { applyPackageVariant, packageVariant } from './package-variant.js'

/** The function as `bin/package-variant` runs it. */
export const packageVariantFunction: KrmFunction = {
  name: 'package-variant',
  description:
    'applies a Porch PackageVariant to a package: package context, then pipeline prepend, then config injection, after validating the PackageVariant as Porch does.',
  usage: `functionConfig:
  config.porch.kpt.dev/v1alpha1 PackageVariant   (the object you would give Porch)

In-cluster objects for injection come from --sources or $KPT_VARIANTS_SOURCES.

Examples:
  kpt fn eval my-pkg --exec package-variant --fn-config pv.yaml
  Kptfile:  pipeline: {mutators: [{exec: package-variant, configPath: pv.yaml}]}`,
  transform: packageVariant,
}
