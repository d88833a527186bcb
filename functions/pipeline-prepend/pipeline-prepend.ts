/**
 * pipeline-prepend: puts a PackageVariant's `spec.pipeline` functions in front
 * of the root Kptfile's pipeline, as Porch's `ensureKRMFunctions` does
 * (docs/upstream-behaviour.md, "Pipeline prepend"), with an exact-prefix match
 * for this PackageVariant's earlier entries (the difference is explained there).
 */
import { kptFunctionFields } from '../api/package-variant.js'
import { configAndKptfile } from '../api/package-variant-config.js'
import { KubeObject } from '../krm/index.js'
import type { Kptfile, PipelineList, ResourceList } from '../krm/index.js'
import { parseConfig } from './config.js'
import type { PipelinePrependConfig } from './config.js'

/** Prepends the configured functions to the root Kptfile's pipeline. */
export function pipelinePrepend(rl: ResourceList): void {
  const prepared = configAndKptfile(rl, parseConfig)
  if (!prepared) return
  prependPipeline(rl, prepared.config, prepared.kptfile)
}

/** The transform after its config and the root Kptfile are found. */
export function prependPipeline(rl: ResourceList, config: PipelinePrependConfig, kptfile: Kptfile): void {
  for (const field of config.dropped) {
    rl.results.warning(
      `\`${field}\` is not a field of a kpt function and is dropped, as Porch's API server does (a function has ${kptFunctionFields.join(', ')})`,
      { object: config.object, field },
    )
  }
  // Only the pipeline can change; comparing it alone spares printing the whole Kptfile twice.
  const pipeline = () => JSON.stringify(kptfile.object.get(['pipeline']) ?? null)
  const before = pipeline()
  const counts = prependFunctions(kptfile, config.pvName, config.functions)
  const changed = pipeline() !== before
  rl.results.info(summary(config.pvName, counts, changed), { object: kptfile.object, field: 'pipeline' })
}

/** The name Porch gives the function at `index` of a PackageVariant's list: `PackageVariant.<pv>.<fn>.<index>`. */
export function generateFunctionName(pvName: string, fnName: string, index: number): string {
  return `PackageVariant.${pvName}.${fnName}.${index}`
}

/**
 * True when `name` was generated for this PackageVariant: the exact prefix
 * `PackageVariant.<pvName>.`, then a function name without `.`, a `.` and
 * digits. Unlike Porch's split on `.`, dotted PackageVariant names match, and
 * `my` never claims the functions of `my.pv`.
 */
export function isPackageVariantFunction(name: string | undefined, pvName: string): boolean {
  const prefix = `PackageVariant.${pvName}.`
  return name !== undefined && name.startsWith(prefix) && /^[^.]*\.[0-9]+$/.test(name.slice(prefix.length))
}

/** How many entries of each list were written and dropped. */
export interface PrependCounts {
  /** Entries prepended, new or replacing an earlier entry of the same name. */
  added: Record<PipelineList, number>
  /** Of those, the ones that replaced this PackageVariant's earlier entry. */
  replaced: Record<PipelineList, number>
  /** Earlier entries of this PackageVariant no longer in its spec. */
  removed: Record<PipelineList, number>
}

/**
 * For mutators and validators alike: drops this PackageVariant's earlier
 * entries, keeps every other entry (order, comments), and puts the
 * PackageVariant's functions first under their generated names. An entry
 * whose generated name already exists keeps its node (and comments) and takes
 * the spec's fields.
 */
export function prependFunctions(
  kptfile: Kptfile,
  pvName: string,
  functions: Record<PipelineList, readonly Record<string, unknown>[]>,
): PrependCounts {
  const counts: PrependCounts = {
    added: { mutators: 0, validators: 0 },
    replaced: { mutators: 0, validators: 0 },
    removed: { mutators: 0, validators: 0 },
  }
  for (const list of ['mutators', 'validators'] as const) {
    const earlier = new Map<string, KubeObject>()
    const kept: KubeObject[] = []
    for (const entry of kptfile.functions(list)) {
      const name = entry.getString(['name'])
      if (isPackageVariantFunction(name, pvName)) {
        if (!earlier.has(name!)) earlier.set(name!, entry)
      } else {
        kept.push(entry)
      }
    }
    const replacedIndexes = new Set<number>()
    const generated = functions[list].map((fn, i) => {
      const value = generatedEntry(
        fn,
        generateFunctionName(pvName, typeof fn['name'] === 'string' ? fn['name'] : '', i),
      )
      const previous = earlier.get(value['name'] as string)
      if (!previous) return KubeObject.fromObject(value)
      earlier.delete(value['name'] as string)
      replacedIndexes.add(i)
      return overwrite(previous, value)
    })
    counts.added[list] = generated.length
    counts.replaced[list] = replacedIndexes.size
    counts.removed[list] = earlier.size
    kptfile.setFunctions(list, [...generated, ...kept])
  }
  return counts
}

/** The spec function with its generated name; `name`, `image`, then the rest by key; empty fields dropped (Go omitempty). */
function generatedEntry(fn: Record<string, unknown>, name: string): Record<string, unknown> {
  const entry: Record<string, unknown> = { name }
  const keys = Object.keys(fn)
    .filter((key) => key !== 'name' && !isEmpty(fn[key]))
    .sort((a, b) => (a === 'image' ? -1 : b === 'image' ? 1 : a < b ? -1 : a > b ? 1 : 0))
  for (const key of keys) entry[key] = fn[key]
  return entry
}

function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return true
  if (Array.isArray(value)) return value.length === 0
  return typeof value === 'object' && Object.keys(value).length === 0
}

/** Makes an existing entry hold exactly `value`, reusing its nodes. */
function overwrite(entry: KubeObject, value: Record<string, unknown>): KubeObject {
  for (const key of Object.keys(entry.toJS())) if (!(key in value)) entry.remove([key])
  for (const [key, v] of Object.entries(value)) entry.set([key], v)
  return entry
}

function summary(pvName: string, counts: PrependCounts, changed: boolean): string {
  if (!changed) return `pipeline of PackageVariant \`${pvName}\` already up to date`
  const parts = (['mutators', 'validators'] as const)
    .filter((list) => counts.added[list] > 0 || counts.removed[list] > 0)
    .map(
      (list) =>
        `${list}: ${counts.added[list]} prepended (${counts.added[list] - counts.replaced[list]} new, ${counts.replaced[list]} replaced), ${counts.removed[list]} earlier removed`,
    )
  return `pipeline of PackageVariant \`${pvName}\`: ${parts.join('; ') || 'reordered'}`
}
