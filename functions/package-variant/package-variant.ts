/**
 * package-variant: the three PackageVariant mutations in Porch's order
 * (`calculateDraftResources`: context, pipeline, injection), in one run, by
 * composing the transforms of package-context, pipeline-prepend and
 * config-injection.
 */
import { configInjection } from '../config-injection/index.js'
import type { ResourceList, Transform, TransformOptions } from '../krm/index.js'
import { packageContext } from '../package-context/index.js'
import { pipelinePrepend } from '../pipeline-prepend/index.js'
import { parseConfig } from './config.js'

/** The mutations, in the order Porch applies them. */
export const packageVariantSteps: readonly Transform[] = [packageContext, pipelinePrepend, configInjection]

/** Validates the PackageVariant, then applies each mutation; stops at the first step that records an error. */
export function packageVariant(rl: ResourceList, options: TransformOptions): void {
  const parsed = parseConfig(rl.functionConfig)
  if (!parsed.ok) {
    rl.results.push(...parsed.results)
    return
  }
  for (const step of packageVariantSteps) {
    step(rl, options)
    if (rl.results.hasErrors()) return
  }
}
