/** fan-out: Porch's PackageVariantSet expansion as a KRM function. */
import type { KrmFunction } from '../krm/index.js'
import { fanOut } from './fan-out.js'

export { CelEngine, defaultCelBudget } from './cel.js'
export type { CelBindings, CelBudget } from './cel.js'
export { parseConfig } from './config.js'
export { fanOut, runFanOut } from './fan-out.js'
export type { FanOutOptions } from './fan-out.js'
export { packageVariantIdentifier, packageVariantName } from './naming.js'
export type { ReconcileSummary } from './reconcile.js'
export { projectObject, renderSpec } from './template.js'
export type { RenderedSpec } from './template.js'
export type { PvContext } from './targets.js'

/** The function as `bin/fan-out` runs it. */
export const fanOutFunction: KrmFunction = {
  name: 'fan-out',
  description:
    'expands a PackageVariantSet into PackageVariants (created, updated or removed as a set), as Porch does.',
  usage: `functionConfig:
  config.porch.kpt.dev/v1alpha2 PackageVariantSet

Items (plus --sources) hold the upstream PackageRevision (porch.kpt.dev/v1alpha1),
the Repository objects (config.porch.kpt.dev/v1alpha1), the target objects and the
set's existing PackageVariants. New PackageVariants are written next to the
PackageVariantSet's file as <name>.yaml (the directory root when it is not an item).

Example:
  kpt fn eval fleet/ --exec fan-out --fn-config fleet/pvs.yaml`,
  transform: fanOut,
}
