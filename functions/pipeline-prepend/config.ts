/** The pipeline-prepend functionConfig: a PackageVariant (`metadata.name`, `spec.pipeline`). */
import { readPackageVariantConfig } from '../api/package-variant-config.js'
import { kptFunctionFields, pipelineRule } from '../api/package-variant.js'
import type { PackageVariant } from '../api/package-variant.js'
import { newResult } from '../krm/index.js'
import type { KubeObject, PipelineList, Result } from '../krm/index.js'

/** What to prepend, for which PackageVariant. */
export interface PipelinePrependConfig {
  /** `metadata.name` of the PackageVariant: part of every generated function name. */
  pvName: string
  /** `spec.pipeline.mutators` / `validators` as plain objects; absent lists are empty. */
  functions: Record<PipelineList, Record<string, unknown>[]>
  /** The functionConfig object, for results. */
  object: KubeObject
  /** Fields kpt's `Function` lacks, dropped from the functions as Porch's API server prunes them. */
  dropped: string[]
}

/** Reads the functionConfig into a config, or error results naming the field. */
export function parseConfig(
  fc: KubeObject | undefined,
): { ok: true; config: PipelinePrependConfig } | { ok: false; results: Result[] } {
  const read = readPackageVariantConfig(fc, [pipelineRule])
  if (!read.ok) return read
  return pipelineConfigOf(read.pv)
}

/** The config of a PackageVariant that passed validation: its pipeline, with fields kpt lacks dropped. */
export function pipelineConfigOf(
  pv: PackageVariant,
): { ok: true; config: PipelinePrependConfig } | { ok: false; results: Result[] } {
  const functions = { mutators: pv.spec.pipeline?.mutators ?? [], validators: pv.spec.pipeline?.validators ?? [] }
  const results: Result[] = []
  for (const list of ['mutators', 'validators'] as const) {
    functions[list].forEach((fn, i) => {
      const name = fn['name']
      if (name === undefined || name === null || typeof name === 'string') return
      const field = `spec.pipeline.${list}[${i}].name`
      results.push(newResult('error', `\`${field}\` must be a string`, { object: pv.object, field }))
    })
  }
  if (results.length > 0) return { ok: false, results }
  const dropped: string[] = []
  for (const list of ['mutators', 'validators'] as const) {
    functions[list] = functions[list].map((fn, i) => {
      const known: Record<string, unknown> = {}
      for (const [key, value] of Object.entries(fn)) {
        if ((kptFunctionFields as readonly string[]).includes(key)) known[key] = value
        else dropped.push(`spec.pipeline.${list}[${i}].${key}`)
      }
      return known
    })
  }
  return { ok: true, config: { pvName: pv.name, functions, object: pv.object, dropped } }
}
