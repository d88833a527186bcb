/**
 * `kpt fn render` in-process, for pipelines made only of our functions:
 * subpackages first (depth-first, sorted), each package's mutators in order
 * over its own and its subpackages' resources, validators on a copy whose
 * output is discarded, the first error stopping everything (nothing is
 * written). Items carry the annotations kpt gives them under render.
 */
import { applyTransform, KubeObject, packagePathAnnotation, ResourceList } from '../../functions/krm/index.js'
import type { Result } from '../../functions/krm/index.js'
import type { KptFunction } from '../clone/kptfile-struct.js'
import type { PackageFiles } from '../package/files.js'
import type { ResourceCodec } from '../package/resources.js'
import { loadOwnFunction, ownFunctionOf } from './functions.js'
import type { PipelineStep } from './functions.js'

/** What an in-process render needs. */
export interface InProcessRender {
  codec: ResourceCodec
  /** Read-only objects our functions see as `--sources` (the fleet). */
  sources: readonly KubeObject[]
  /** The absolute path the package is rendered at (its `package-path`). */
  root: string
}

/** The outcome of a render: the files, or the results that made it fail. */
export type Rendered = { ok: true; files: PackageFiles; results: Result[] } | { ok: false; results: Result[] }

/** Renders a package whose every pipeline step is one of our functions (see `ownFunctionOf`). */
export async function renderInProcess(
  files: PackageFiles,
  steps: readonly PipelineStep[],
  ctx: InProcessRender,
): Promise<Rendered> {
  const resources = ctx.codec.read(files, { style: 'render', root: ctx.root })
  if (resources.notKrm.length > 0) {
    return {
      ok: false,
      results: [
        {
          severity: 'error',
          message: `input resource list must contain only KRM resources: ${resources.notKrm[0]!.message}`,
        },
      ],
    }
  }
  let items = resources.items
  const results: Result[] = []
  const packagePath = (dir: string) => (dir === '' ? ctx.root : `${ctx.root}/${dir}`)
  // Deepest packages first; siblings in path order (kpt's depth-first hydration).
  const dirs = [...new Set(steps.map((s) => s.dir))].sort((a, b) => depth(b) - depth(a) || (a < b ? -1 : a > b ? 1 : 0))
  for (const dir of dirs) {
    const pkg = packagePath(dir)
    const inPackage = (item: KubeObject) => {
      const p = item.packagePath ?? pkg
      return p === pkg || p.startsWith(`${pkg}/`)
    }
    let input = items.filter(inPackage)
    const rest = items.filter((item) => !inPackage(item))
    for (const list of ['mutators', 'validators'] as const) {
      for (const step of steps.filter((s) => s.dir === dir && s.list === list)) {
        const name = ownFunctionOf(step.fn)!
        const fn = await loadOwnFunction(name)
        const fc = functionConfig(step.fn, input, pkg)
        const listItems = list === 'validators' ? input.map(copyOf) : input
        const rl = ResourceList.of([...listItems], fc)
        applyTransform(fn, rl, { sources: ctx.sources })
        results.push(...rl.results.items)
        if (rl.results.hasErrors()) return { ok: false, results }
        if (list === 'mutators') {
          for (const item of rl.items)
            if (item.packagePath === undefined) item.setAnnotation(packagePathAnnotation, pkg)
          input = rl.items
        }
      }
    }
    items = [...rest, ...input]
  }
  const written = ctx.codec.write(resources, items, files)
  for (const message of written.warnings) results.push({ severity: 'warning', message })
  return { ok: true, files: written.files, results }
}

function depth(dir: string): number {
  return dir === '' ? 0 : dir.split('/').length
}

/** kpt's functionConfig: the item at `configPath` in the package, a `function-input` ConfigMap, or none. */
function functionConfig(fn: KptFunction, items: readonly KubeObject[], pkg: string): KubeObject | undefined {
  if (fn.configPath) return items.find((item) => item.path === fn.configPath && (item.packagePath ?? pkg) === pkg)
  if (fn.configMap)
    return KubeObject.fromObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'function-input' },
      data: fn.configMap,
    })
  return undefined
}

/** A validator works on a copy: its output, edits in place included, is thrown away. */
function copyOf(item: KubeObject): KubeObject {
  return KubeObject.fromItemSource(item.toItemText(), 0)
}
