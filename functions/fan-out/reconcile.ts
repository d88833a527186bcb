/**
 * Set-based reconciliation over the ResourceList (docs/upstream-behaviour.md, "Set reconciliation and status";
 * `ensurePackageVariants`): existing PackageVariants of the set are matched to
 * the desired ones by identifier, then deleted, updated (spec only) or created.
 */
import type { PackageVariantSet } from '../api/package-variant-set.js'
import {
  isPackageVariant,
  packageVariantApiVersion,
  packageVariantFinalizer,
  packageVariantKind,
} from '../api/package-variant.js'
import { KubeObject, packageVariantSetLabel, renderFieldText, rootPackagePath } from '../krm/index.js'
import { packageVariantIdentifier } from './naming.js'
import type { RenderedSpec } from './template.js'

/** One PackageVariant the set should have. */
export interface DesiredVariant {
  id: string
  name: string
  spec: RenderedSpec
  /** Index in `spec.targets` of the target that produced it (the last one on a collision). */
  targetIndex: number
  /** That target, for messages: `repository "r" package "p"` or `Kind "name"`. */
  target: string
  /**
   * The object the variant was made for: the one an `objectSelector` or
   * `repositorySelector` selected, or for a `repositories` target the
   * Repository of its downstream repository (when there is one).
   */
  targetObject?: KubeObject
}

/** What reconciliation did, by PackageVariant name. */
export interface ReconcileSummary {
  created: KubeObject[]
  updated: KubeObject[]
  unchanged: KubeObject[]
  deleted: KubeObject[]
  /** The spec each created, updated or unchanged PackageVariant now has (as rendered), so callers need not parse it back. */
  specs: Map<KubeObject, RenderedSpec>
  /** The target object of each created, updated or unchanged PackageVariant that has one (see DesiredVariant.targetObject). */
  targets: Map<KubeObject, KubeObject>
}

/** The label value that ties PackageVariants to this set: its uid, else its name. */
export function setLabelValue(pvs: PackageVariantSet): string {
  return pvs.uid || pvs.name
}

/**
 * The set's existing PackageVariants by identifier (from their
 * `spec.downstream`, not their names). On a duplicate identifier the last
 * one wins, as with Porch's map; the other is left alone.
 */
export function existingVariants(
  pvs: PackageVariantSet,
  items: readonly KubeObject[],
  desired?: ReadonlyMap<string, DesiredVariant>,
): Map<string, KubeObject> {
  const label = setLabelValue(pvs)
  const out = new Map<string, KubeObject>()
  // Unchanged PackageVariants (the usual case on a re-run) are recognised by the
  // text of their spec, so they need not be parsed: equal text means equal spec,
  // and so equal downstream and identifier.
  // Rendered on the first existing PackageVariant only: a first run has none.
  let idBySpecText: Map<string, string> | undefined
  const specTexts = () => {
    if (!idBySpecText) {
      idBySpecText = new Map()
      for (const [id, want] of desired ?? []) {
        const text = renderFieldText('spec', want.spec)
        if (text !== undefined) idBySpecText.set(text, id)
      }
    }
    return idBySpecText
  }
  for (const item of items) {
    if (!isPackageVariant(item) || item.getLabel(packageVariantSetLabel) !== label) continue
    if (item.namespace !== pvs.namespace && item.namespace !== '') continue
    const specText = item.unparsedFieldText('spec')
    const knownId = specText === undefined ? undefined : specTexts().get(specText)
    if (knownId !== undefined) {
      out.set(knownId, item)
      continue
    }
    const downstream = item.get(['spec', 'downstream'])
    const d = typeof downstream === 'object' && downstream !== null ? (downstream as Record<string, unknown>) : {}
    const repo = typeof d['repo'] === 'string' ? d['repo'] : ''
    const pkg = typeof d['package'] === 'string' ? d['package'] : ''
    out.set(packageVariantIdentifier(pvs.name, repo, pkg), item)
  }
  return out
}

/**
 * Applies the desired set to `items` in place: deletes existing ids that are
 * not desired, replaces the spec of the others (metadata kept; unchanged
 * bytes stay unchanged), and appends new PackageVariants in desired order,
 * each in its own file `<dir>/<name>.yaml`. `existing` is `existingVariants`.
 *
 * Existing PackageVariants may live anywhere, subpackages included (under
 * `kpt fn render` they keep their own `package-path` and so their file). New
 * ones get no `package-path`, which kpt reads as the package whose pipeline
 * runs (the root package), so `dir` must be relative to that package.
 */
export function reconcileVariants(
  pvs: PackageVariantSet,
  items: KubeObject[],
  existing: ReadonlyMap<string, KubeObject>,
  desired: ReadonlyMap<string, DesiredVariant>,
  dir: string,
): ReconcileSummary {
  const summary: ReconcileSummary = {
    created: [],
    updated: [],
    unchanged: [],
    deleted: [],
    specs: new Map(),
    targets: new Map(),
  }
  deleteUndesired(items, existing, desired, summary)
  const root = rootPackagePath(items) ?? ''
  const usedIndexes = usedFileIndexes(items, root)
  for (const [id, want] of desired) {
    const current = existing.get(id)
    if (current) {
      updateVariant(current, want, summary)
      continue
    }
    const path = `${dir}${want.name}.yaml`
    const key = fileKey(root, path)
    const index = (usedIndexes.get(key) ?? -1) + 1
    usedIndexes.set(key, index)
    const object = newPackageVariant(pvs, want, { path, index })
    items.push(object)
    summary.created.push(object)
    summary.specs.set(object, want.spec)
    if (want.targetObject) summary.targets.set(object, want.targetObject)
  }
  return summary
}

/** Removes from `items` the existing PackageVariants no longer desired; the summary lists them as deleted. */
function deleteUndesired(
  items: KubeObject[],
  existing: ReadonlyMap<string, KubeObject>,
  desired: ReadonlyMap<string, DesiredVariant>,
  summary: ReconcileSummary,
): void {
  const remove = new Set<KubeObject>()
  for (const [id, object] of existing) {
    if (desired.has(id)) continue
    remove.add(object)
    summary.deleted.push(object)
  }
  if (remove.size > 0) {
    const kept = items.filter((item) => !remove.has(item))
    items.length = 0
    items.push(...kept)
  }
}

/**
 * A file's key: paths are relative to each item's own package under `kpt fn
 * render`, so a file is identified by its package and path (`a.yaml` of a
 * subpackage is another file than the root's `a.yaml`).
 */
function fileKey(packagePath: string, path: string): string {
  return `${packagePath}\n${path}`
}

/**
 * The highest `index` used in each file (by fileKey). An item without
 * `package-path` belongs to the package whose pipeline runs (`root`), as kpt
 * assigns it.
 */
function usedFileIndexes(items: readonly KubeObject[], root: string): Map<string, number> {
  const usedIndexes = new Map<string, number>()
  for (const item of items) {
    const path = item.path
    if (path === undefined) continue
    const key = fileKey(item.packagePath ?? root, path)
    usedIndexes.set(key, Math.max(usedIndexes.get(key) ?? -1, item.index))
  }
  return usedIndexes
}

/** An existing PackageVariant gets the desired spec (metadata kept), unless it has it already. */
function updateVariant(current: KubeObject, want: DesiredVariant, summary: ReconcileSummary): void {
  if (want.targetObject) summary.targets.set(current, want.targetObject)
  if (current.fieldTextEquals('spec', want.spec) || deepEqual(current.get(['spec']), want.spec)) {
    summary.unchanged.push(current)
    summary.specs.set(current, want.spec)
  } else {
    current.set(['spec'], want.spec)
    summary.updated.push(current)
    summary.specs.set(current, want.spec)
  }
}

/** A new PackageVariant as Porch creates it (docs/upstream-behaviour.md, "The generated PackageVariants"), plus kpt's path annotations. */
export function newPackageVariant(
  pvs: PackageVariantSet,
  want: DesiredVariant,
  placement?: { path: string; index: number },
): KubeObject {
  const metadata: Record<string, unknown> = { name: want.name }
  if (pvs.namespace) metadata['namespace'] = pvs.namespace
  metadata['labels'] = { [packageVariantSetLabel]: setLabelValue(pvs) }
  const owner: Record<string, unknown> = { apiVersion: pvs.apiVersion, kind: pvs.kind, name: pvs.name }
  if (pvs.uid) owner['uid'] = pvs.uid
  owner['controller'] = true
  metadata['ownerReferences'] = [owner]
  metadata['finalizers'] = [packageVariantFinalizer]
  return KubeObject.fromObject(
    { apiVersion: packageVariantApiVersion, kind: packageVariantKind, metadata, spec: want.spec },
    placement,
  )
}

/** Structural equality of plain values; map key order does not matter. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a)) {
    const bb = b as unknown[]
    return a.length === bb.length && a.every((v, i) => deepEqual(v, bb[i]))
  }
  const ra = a as Record<string, unknown>
  const rb = b as Record<string, unknown>
  const ka = Object.keys(ra)
  if (ka.length !== Object.keys(rb).length) return false
  return ka.every((k) => Object.prototype.hasOwnProperty.call(rb, k) && deepEqual(ra[k], rb[k]))
}
