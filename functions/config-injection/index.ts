/** config-injection: Porch's configuration injection as a KRM function. */
import type { KrmFunction } from '../krm/index.js'
import { configInjection } from './config-injection.js'

export { injectionConfigOf, parseConfig } from './config.js'
export type { ConfigInjectionConfig } from './config.js'
export {
  condition,
  configInjection,
  findInjectionPoints,
  injectConfig,
  injectedField,
  injectPoint,
  listInCluster,
} from './config-injection.js'
export type { InjectionOutcome, InjectionPoint, InjectionPointError } from './config-injection.js'

/** The function as `bin/config-injection` runs it. */
export const configInjectionFunction: KrmFunction = {
  name: 'config-injection',
  description:
    'copies in-cluster objects (--sources) into the injection points of a package (kpt.dev/config-injection) and records config.injection.<Kind>.<name> conditions in the Kptfile, as a Porch PackageVariant does.',
  usage: `functionConfig:
  config.porch.kpt.dev/v1alpha1 PackageVariant   uses metadata.namespace and spec.injectors

In-cluster objects come from --sources or $KPT_VARIANTS_SOURCES (e.g. kubectl get -o yaml output).

Example:
  KPT_VARIANTS_SOURCES=cluster kpt fn eval my-pkg --exec config-injection --fn-config pv.yaml`,
  transform: configInjection,
}
