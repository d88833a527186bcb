/**
 * The update strategies of a downstream Kptfile's `upstream.updateStrategy`,
 * per package (the root package and each remote subpackage, as `kpt pkg
 * update` picks an updater per package from its own Kptfile):
 *
 * - `resource-merge` (the default): the 3-way merge of update.ts;
 * - `fast-forward`: refused when the package has local changes (kpt's
 *   `FastForwardUpdater`: any file of the package or its local subpackages
 *   that differs from the old upstream, the Kptfile's `upstream` and
 *   `upstreamLock` and the root's name aside), else as force-delete-replace;
 * - `force-delete-replace`: upstream's files replace the package's (kpt's
 *   `ReplaceUpdater`); the root Kptfile stays the downstream's, with the new
 *   `upstream` and `upstreamLock`;
 * - `copy-merge` (Porch's upgrade task, kpt's `CopyMergeUpdater`): the
 *   Kptfile merges 3-way, every upstream file overwrites the downstream's,
 *   files the old upstream had and the new one has not are deleted, files
 *   only the downstream has stay.
 */
import { isMap, parse, print } from '../../functions/krm/yaml/index.js'
import { decodeKptfile, kptfileValue } from '../clone/kptfile-struct.js'
import { addMergeComment } from '../clone/merge-comments.js'
import { isEmptyDocument, splitDocuments } from '../package/documents.js'
import { fileText, packageDirectories } from '../package/files.js'
import type { PackageFile, PackageFiles } from '../package/files.js'

export type UpdateStrategy = 'resource-merge' | 'fast-forward' | 'force-delete-replace' | 'copy-merge'

const strategies: readonly string[] = ['resource-merge', 'fast-forward', 'force-delete-replace', 'copy-merge']

/** A package updated by one strategy: the root (`dir` "") or a remote subpackage, without the remote subpackages below it. */
export interface StrategyUnit {
  dir: string
  strategy: UpdateStrategy
  /** Remote subpackages below it, each a unit of its own. */
  nested: string[]
}

/**
 * The packages of a downstream and their strategies: the root, and each
 * subpackage whose Kptfile has an `upstream` (a local subpackage belongs to
 * the package around it, as in kpt). A strategy kpt does not know is an error
 * in kpt's words.
 */
export function strategyUnits(
  local: PackageFiles,
): { ok: true; units: StrategyUnit[] } | { ok: false; message: string } {
  const units: StrategyUnit[] = []
  for (const dir of packageDirectories(local)) {
    const file = local.get(dir === '' ? 'Kptfile' : `${dir}/Kptfile`)!
    const decoded = decodeKptfile(fileText(file))
    const upstream = decoded.ok ? decoded.value.upstream : undefined
    if (dir !== '' && !upstream) continue
    const strategy = upstream?.updateStrategy || 'resource-merge'
    if (!strategies.includes(strategy))
      return { ok: false, message: `${dir || '.'}: unrecognized update strategy ${strategy}` }
    units.push({ dir, strategy: strategy as UpdateStrategy, nested: [] })
  }
  if (!units.some((u) => u.dir === '')) units.unshift({ dir: '', strategy: 'resource-merge', nested: [] })
  for (const unit of units) unit.nested = units.filter((u) => u !== unit && isBelow(u.dir, unit.dir)).map((u) => u.dir)
  return { ok: true, units }
}

/** The unit a path belongs to: the innermost one around it. */
export function unitOf(path: string, units: readonly StrategyUnit[]): StrategyUnit {
  let best = units.find((u) => u.dir === '')!
  for (const unit of units)
    if (unit.dir !== '' && path.startsWith(`${unit.dir}/`) && unit.dir.length > best.dir.length) best = unit
  return best
}

function isBelow(dir: string, parent: string): boolean {
  return dir !== parent && (parent === '' || dir.startsWith(`${parent}/`))
}

/**
 * kpt's refusal of a fast-forward over local changes, in its words (the
 * files as paths from the package root, where kpt gives a subpackage's files
 * from the subpackage).
 */
export function fastForwardRefusal(unit: StrategyUnit, changed: readonly string[]): string {
  const message = `local package files have been modified: [${changed.join(' ')}].\n  use a different update --strategy.`
  return unit.dir === '' ? message : `${unit.dir}: ${message}`
}

/**
 * The files of a unit (its package and local subpackages) that differ from
 * the old upstream, sorted; none when the old upstream is unknown (kpt then
 * has nothing to compare with). As in kpt: Kptfiles compare as Kptfiles
 * without `upstream` and `upstreamLock` (and the root's `metadata.name`, which
 * `kpt pkg get` sets); other files compare as YAML documents once both carry
 * the merge comments kpt adds before comparing, else byte for byte. Unlike
 * kpt, a package's `package-context.yaml` that is just what `kpt pkg get
 * --for-deployment` generated is no local change: kpt counts its own file,
 * so it could never fast-forward a deployment package.
 */
export function localChanges(unit: StrategyUnit, local: PackageFiles, origin: PackageFiles): string[] {
  const inUnit = (path: string) =>
    (unit.dir === '' || path.startsWith(`${unit.dir}/`)) && !unit.nested.some((dir) => path.startsWith(`${dir}/`))
  const originPaths = [...origin.keys()].filter(inUnit)
  if (originPaths.length === 0) return []
  const rootKptfile = unit.dir === '' ? 'Kptfile' : `${unit.dir}/Kptfile`
  const changed: string[] = []
  for (const path of new Set([...[...local.keys()].filter(inUnit), ...originPaths])) {
    const l = local.get(path)
    const o = origin.get(path)
    const isKptfile = path === 'Kptfile' || path.endsWith('/Kptfile')
    let same: boolean
    if (l && o) same = isKptfile ? sameKptfile(l, o, path === rootKptfile) : sameContent(l, o)
    else if (l && path === rootKptfile) same = isDefaultKptfile(l)
    else if (l && isPackageContext(path, local)) same = isGeneratedPackageContext(l)
    else same = false
    if (!same) changed.push(path)
  }
  return changed.sort()
}

function sameKptfile(local: PackageFile, origin: PackageFile, isRoot: boolean): boolean {
  const [l, o] = [decodeKptfile(fileText(local)), decodeKptfile(fileText(origin))]
  if (!l.ok || !o.ok) return local.content.equals(origin.content)
  const comparable = (value: Record<string, unknown>) => {
    const { upstream: _u, upstreamLock: _l, ...rest } = value
    if (isRoot && typeof rest['metadata'] === 'object' && rest['metadata'] !== null)
      rest['metadata'] = { ...rest['metadata'], name: '' }
    return JSON.stringify(rest)
  }
  return comparable(kptfileValue(l.value)) === comparable(kptfileValue(o.value))
}

/** A root Kptfile that kpt made for an upstream without one: nothing but its kind and name (`upstream` aside). */
function isDefaultKptfile(file: PackageFile): boolean {
  const decoded = decodeKptfile(fileText(file))
  if (!decoded.ok) return false
  const { upstream: _u, upstreamLock: _l, ...rest } = kptfileValue(decoded.value)
  const metadata = rest['metadata'] as Record<string, unknown> | undefined
  return (
    Object.keys(rest).every((key) => ['apiVersion', 'kind', 'metadata'].includes(key)) &&
    Object.keys(metadata ?? {}).every((key) => key === 'name')
  )
}

/** A package's own package-context.yaml (the root's or a subpackage's). */
function isPackageContext(path: string, local: PackageFiles): boolean {
  if (path === 'package-context.yaml') return true
  return path.endsWith('/package-context.yaml') && local.has(`${path.slice(0, -'package-context.yaml'.length)}Kptfile`)
}

/** `kpt pkg get --for-deployment`'s package-context.yaml, untouched: the ConfigMap `kptfile.kpt.dev` with only `data.name`. */
function isGeneratedPackageContext(file: PackageFile): boolean {
  const docs = yamlDocuments(fileText(file))
  if (!docs || docs.length !== 1) return false
  const value = parse(docs[0]!, { source: 'package-context.yaml' }).toJS() as Record<string, unknown>
  const metadata = (value['metadata'] ?? {}) as Record<string, unknown>
  const annotations = (metadata['annotations'] ?? {}) as Record<string, unknown>
  const data = (value['data'] ?? {}) as Record<string, unknown>
  return (
    value['apiVersion'] === 'v1' &&
    value['kind'] === 'ConfigMap' &&
    metadata['name'] === 'kptfile.kpt.dev' &&
    Object.keys(value).every((key) => ['apiVersion', 'kind', 'metadata', 'data'].includes(key)) &&
    Object.keys(metadata).every((key) => ['name', 'annotations'].includes(key)) &&
    Object.keys(annotations).every((key) =>
      ['config.kubernetes.io/local-config', 'internal.kpt.dev/upstream-identifier'].includes(key),
    ) &&
    Object.keys(data).length === 1 &&
    typeof data['name'] === 'string'
  )
}

/** The same bytes, or the same YAML documents once each carries kpt's merge comment (kpt compares them through its YAML printer). */
function sameContent(local: PackageFile, origin: PackageFile): boolean {
  if (local.content.equals(origin.content)) return true
  const [l, o] = [normalised(fileText(local)), normalised(fileText(origin))]
  return l !== undefined && o !== undefined && l.length === o.length && l.every((doc, i) => doc === o[i])
}

function normalised(text: string): string[] | undefined {
  const docs = yamlDocuments(text)
  if (!docs) return undefined
  try {
    return docs.map((docText) => {
      const doc = parse(docText)
      if (!isMap(doc.contents)) throw new Error('not a resource')
      addMergeComment(doc)
      return print(doc)
    })
  } catch {
    return undefined
  }
}

function yamlDocuments(text: string): string[] | undefined {
  return splitDocuments(text)
    ?.map((d) => d.text)
    .filter((d) => !isEmptyDocument(d))
}
