/**
 * package-variant: the three PackageVariant mutations in Porch's order
 * (`calculateDraftResources`: context, pipeline, injection), in one run, by
 * composing the transforms of package-context, pipeline-prepend and
 * config-injection. The PackageVariant is read and validated once.
 */
import type { PackageVariant } from '../api/package-variant.js'
import { injectConfig, injectionConfigOf } from '../config-injection/index.js'
import type { InjectionOutcome } from '../config-injection/index.js'
import { findKptfile } from '../krm/index.js'
import type { ResourceList, TransformOptions } from '../krm/index.js'
import { packageContextConfigOf, setPackageContext } from '../package-context/index.js'
import { pipelineConfigOf, prependPipeline } from '../pipeline-prepend/index.js'
import { parseConfig } from './config.js'

/** Validates the PackageVariant, then applies each mutation; stops at the first step that records an error. */
export function packageVariant(rl: ResourceList, options: TransformOptions): void {
  const parsed = parseConfig(rl.functionConfig)
  if (!parsed.ok) {
    rl.results.push(...parsed.results)
    return
  }
  applyPackageVariant(rl, parsed.pv, options)
}

/**
 * The mutations of a PackageVariant that is already read and validated (the
 * orchestrator has it from its plan); returns what config injection did to
 * each injection point (none when an earlier step failed).
 */
export function applyPackageVariant(
  rl: ResourceList,
  pv: PackageVariant,
  options: TransformOptions,
): InjectionOutcome[] {
  setPackageContext(rl, packageContextConfigOf(pv))
  if (rl.results.hasErrors()) return []
  const pipeline = pipelineConfigOf(pv)
  if (!pipeline.ok) {
    rl.results.push(...pipeline.results)
    return []
  }
  const found = findKptfile(rl.items)
  if (!found.ok) {
    rl.results.error(found.message, { object: found.object, field: found.field })
    return []
  }
  prependPipeline(rl, pipeline.config, found.kptfile)
  if (rl.results.hasErrors()) return []
  return injectConfig(rl, injectionConfigOf(pv), found.kptfile, options)
}
