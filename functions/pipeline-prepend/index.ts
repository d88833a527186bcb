/** pipeline-prepend: Porch's KRM function pipeline additions as a KRM function. */
import type { KrmFunction } from '../krm/index.js'
import { pipelinePrepend } from './pipeline-prepend.js'

export { parseConfig, pipelineConfigOf } from './config.js'
export type { PipelinePrependConfig } from './config.js'
export {
  generateFunctionName,
  isPackageVariantFunction,
  pipelinePrepend,
  prependFunctions,
  prependPipeline,
} from './pipeline-prepend.js'
export type { PrependCounts } from './pipeline-prepend.js'

/** The function as `bin/pipeline-prepend` runs it. */
export const pipelinePrependFunction: KrmFunction = {
  name: 'pipeline-prepend',
  description:
    "prepends a PackageVariant's spec.pipeline mutators and validators to the root Kptfile, named PackageVariant.<pv>.<fn>.<index>, as Porch does.",
  usage: `functionConfig:
  config.porch.kpt.dev/v1alpha1 PackageVariant   uses metadata.name and spec.pipeline

Example:
  kpt fn eval my-pkg --exec pipeline-prepend --fn-config pv.yaml`,
  transform: pipelinePrepend,
}
