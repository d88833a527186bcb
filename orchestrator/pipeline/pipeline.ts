/**
 * The downstream Kptfile pipeline, as Porch renders a draft after the
 * PackageVariant's mutations: nothing to do without functions; in-process
 * when every function is ours; else the real `kpt fn render`.
 */
import type { KubeObject } from '../../functions/krm/index.js'
import type { PackageFiles } from '../package/files.js'
import type { ResourceCodec } from '../package/resources.js'
import { ownFunctionOf, pipelineSteps } from './functions.js'
import { renderInProcess } from './in-process.js'
import type { Rendered } from './in-process.js'
import { renderWithKpt } from './kpt-render.js'
import type { KptRender } from './kpt-render.js'

/** A render, and where its pipeline ran: nowhere (no functions, or skipped), in-process (all ours), or in kpt. */
export type PipelineRendered = Rendered & { ran?: 'in-process' | 'kpt' }

/** What running pipelines needs for a whole run. */
export interface PipelineRunner {
  codec: ResourceCodec
  sources: readonly KubeObject[]
  kpt: KptRender
}

/** Renders a package at `root` (its absolute output path, the `package-path` functions see), named `name`. */
export async function runPipeline(
  files: PackageFiles,
  name: string,
  root: string,
  runner: PipelineRunner,
): Promise<PipelineRendered> {
  const found = pipelineSteps(files)
  if (!found.ok) return { ok: false, results: [{ severity: 'error', message: found.message }] }
  if (found.steps.length === 0) return { ok: true, files, results: [] }
  if (found.steps.every((step) => ownFunctionOf(step.fn) !== undefined)) {
    return {
      ...(await renderInProcess(files, found.steps, { codec: runner.codec, sources: runner.sources, root })),
      ran: 'in-process',
    }
  }
  const images = found.steps
    .filter((step) => step.fn.image && ownFunctionOf(step.fn) === undefined)
    .map((step) => step.fn.image!)
  if (runner.kpt.skipImages && images.length > 0) {
    // The pipeline stays in the Kptfile: kpt fn render (or Porch) runs it where a container engine is.
    return {
      ok: true,
      files,
      results: [
        {
          severity: 'warning',
          message: `pipeline not run (--image-functions skip): it has image functions ${images.join(', ')}`,
        },
      ],
    }
  }
  return { ...(await renderWithKpt(files, name, runner.kpt)), ran: 'kpt' }
}
