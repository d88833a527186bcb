/**
 * Running a function in-process: text in, text out, with the exit-code rules
 * of the wire contract. `main.ts` adds the process I/O around it.
 */
import { FieldTypeError } from './kube-object.js'
import type { KubeObject } from './kube-object.js'
import { ResourceList, ResourceListError } from './resource-list.js'
import type { Result } from './results.js'
import { newResult } from './results.js'
import { YamlSyntaxError } from './yaml/index.js'

/** What a transform gets besides the ResourceList. */
export interface TransformOptions {
  /** Read-only objects from `--sources` (in-cluster objects, catalogs); never emitted. */
  sources: readonly KubeObject[]
}

/** A pure transform: edits the list it is given and records results on it. */
export type Transform = (rl: ResourceList, options: TransformOptions) => void

/** A KRM function: its transform plus what `--help` prints. */
export interface KrmFunction {
  /** The function's name, as in `bin/<name>`. */
  name: string
  /** One sentence: what the function does. */
  description: string
  /** The functionConfig forms and an example, for `--help`. */
  usage: string
  transform: Transform
}

/** Outcome of one run. */
export interface RunOutput {
  /** The ResourceList to print; never empty, always with `items:`. */
  output: string
  exitCode: 0 | 1
  /** Short lines for stderr (kpt shows four). */
  stderr: string[]
}

/**
 * Runs a function over a ResourceList text. On any error result the output
 * carries the input items unchanged, so nothing half-done can be written.
 */
export function runFunction(
  fn: KrmFunction,
  input: string,
  options: { sources?: readonly KubeObject[]; sourceResults?: readonly Result[] } = {},
): RunOutput {
  let rl: ResourceList
  try {
    rl = ResourceList.parse(input)
  } catch (err) {
    if (!(err instanceof ResourceListError)) throw err
    return failure(ResourceList.empty(), [newResult('error', err.message)], `${fn.name}: ${err.message}`)
  }
  const sourceResults = options.sourceResults ?? []
  if (sourceResults.some((r) => r.severity === 'error')) {
    return failure(rl, sourceResults, `${fn.name}: cannot read --sources`)
  }
  rl.results.push(...sourceResults)
  const thrown = applyTransform(fn, rl, { sources: options.sources ?? [] })
  if (thrown) return failure(ResourceList.parse(input), rl.results.items, thrown.message)
  if (!rl.results.hasErrors()) return { output: rl.toString(), exitCode: 0, stderr: [] }
  const errors = rl.results.items.filter((r) => r.severity === 'error')
  const unchanged = ResourceList.parse(input)
  carryStatus(rl.statusOnFailure, unchanged.items)
  const summary = `${fn.name}: ${errors.length} error(s); the package was not changed`
  return failure(unchanged, rl.results.items, summary)
}

/** Sets the `status` of each input item that `from` has (same identity and file) to `from`'s. */
function carryStatus(from: readonly KubeObject[], items: readonly KubeObject[]): void {
  for (const object of from) {
    const item = items.find(
      (o) =>
        o.apiVersion === object.apiVersion &&
        o.kind === object.kind &&
        o.namespace === object.namespace &&
        o.name === object.name &&
        o.path === object.path,
    )
    const status = object.get(['status'])
    if (item && status !== undefined) item.set(['status'], status)
  }
}

/**
 * Runs a function's transform on a list in memory (the orchestrator's
 * in-process path). A throw becomes one error result on the list, which is
 * also returned: a field of the wrong type names the object and field,
 * malformed YAML met while reading an item names the item.
 */
export function applyTransform(
  fn: Pick<KrmFunction, 'name' | 'transform'>,
  rl: ResourceList,
  options: TransformOptions,
): Result | undefined {
  try {
    fn.transform(rl, options)
    return undefined
  } catch (err) {
    const result =
      err instanceof FieldTypeError
        ? newResult('error', err.message, { object: err.object, field: err.field })
        : err instanceof YamlSyntaxError
          ? newResult('error', `malformed YAML in ${err.message}`)
          : newResult('error', `${fn.name}: internal error: ${(err as Error).message}`)
    rl.results.push(result)
    return result
  }
}

function failure(rl: ResourceList, results: readonly Result[], line: string): RunOutput {
  rl.results.push(...results)
  return { output: rl.toString(), exitCode: 1, stderr: [line] }
}
