/**
 * The functions of a package's Kptfile pipelines, and which of them are ours
 * (and so can run in-process instead of as a process or a container).
 */
import type { KrmFunction } from '../../functions/krm/index.js'
import { decodeKptfile } from '../clone/kptfile-struct.js'
import type { KptFunction } from '../clone/kptfile-struct.js'
import { fileText, packageDirectories } from '../package/files.js'
import type { PackageFiles } from '../package/files.js'

/** The kpt-variants functions, by the name their `bin/` program and image carry. */
export const ownFunctionNames = [
  'package-context',
  'pipeline-prepend',
  'config-injection',
  'package-variant',
  'fan-out',
  'dependency-check',
] as const
export type OwnFunctionName = (typeof ownFunctionNames)[number]

/** One function of one package's pipeline. */
export interface PipelineStep {
  /** The package directory (`""` for the root). */
  dir: string
  list: 'mutators' | 'validators'
  fn: KptFunction
}

/** Every pipeline step of the package and its subpackages; an unreadable Kptfile is a problem. */
export function pipelineSteps(
  files: PackageFiles,
): { ok: true; steps: PipelineStep[] } | { ok: false; message: string } {
  const steps: PipelineStep[] = []
  for (const dir of packageDirectories(files)) {
    const path = dir === '' ? 'Kptfile' : `${dir}/Kptfile`
    const text = fileText(files.get(path)!)
    if (!text.includes('pipeline')) continue // most Kptfiles have none: skip decoding them
    const decoded = decodeKptfile(text)
    if (!decoded.ok) return { ok: false, message: `${path}: ${decoded.message.replace(/^Kptfile: /, '')}` }
    for (const list of ['mutators', 'validators'] as const) {
      for (const fn of decoded.value.pipeline?.[list] ?? []) steps.push({ dir, list, fn })
    }
  }
  return { ok: true, steps }
}

/**
 * The name of our function a step runs, if it is one of ours and can run
 * in-process as kpt would run it: `exec: <name>` (a bare name or a path
 * ending in `bin/<name>`, no arguments) or an image `…/kpt-variants/<name>[:tag]`,
 * with no selectors or exclusions.
 */
export function ownFunctionOf(fn: KptFunction): OwnFunctionName | undefined {
  if ((fn.selectors?.length ?? 0) > 0 || (fn.exclude?.length ?? 0) > 0) return undefined
  let name: string | undefined
  if (fn.exec !== undefined && fn.image === undefined) {
    const exec = fn.exec.trim()
    if (/\s/.test(exec)) return undefined
    name = exec.slice(exec.lastIndexOf('/') + 1)
    if (exec.includes('/') && !exec.endsWith(`bin/${name}`)) return undefined
  } else if (fn.image !== undefined && fn.exec === undefined) {
    const match = /(?:^|\/)kpt-variants\/([a-z-]+)(?::[^/]*)?$/.exec(fn.image)
    name = match?.[1]
  }
  return ownFunctionNames.find((n) => n === name)
}

/** Loads one of our functions (lazily: fan-out brings in CEL). */
export async function loadOwnFunction(name: OwnFunctionName): Promise<KrmFunction> {
  switch (name) {
    case 'package-context':
      return (await import('../../functions/package-context/index.js')).packageContextFunction
    case 'pipeline-prepend':
      return (await import('../../functions/pipeline-prepend/index.js')).pipelinePrependFunction
    case 'config-injection':
      return (await import('../../functions/config-injection/index.js')).configInjectionFunction
    case 'package-variant':
      return (await import('../../functions/package-variant/index.js')).packageVariantFunction
    case 'fan-out':
      return (await import('../../functions/fan-out/index.js')).fanOutFunction
    case 'dependency-check':
      return (await import('../../functions/dependency-check/index.js')).dependencyCheckFunction
  }
}
