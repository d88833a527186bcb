/**
 * What a PackageVariantSet reads besides itself (docs/upstream-behaviour.md, "Targets"):
 * objects in its namespace, the upstream PackageRevision, Repositories, and
 * the unrolled targets (`unrollDownstreamTargets`).
 */
import type { PackageVariantSet, PackageVariantTemplate } from '../api/package-variant-set.js'
import { compileLabelSelector } from '../krm/index.js'
import type { KubeObject, LabelSelector } from '../krm/index.js'

export const repositoryApiVersion = 'config.porch.kpt.dev/v1alpha1'
export const repositoryKind = 'Repository'
export const packageRevisionApiVersion = 'porch.kpt.dev/v1alpha1'
export const packageRevisionKind = 'PackageRevision'

/** One downstream to render: Porch's `pvContext`. */
export interface PvContext {
  /** Index in `spec.targets`. */
  targetIndex: number
  template: PackageVariantTemplate | undefined
  repoDefault: string
  packageDefault: string
  /** The selected object (objectSelector, repositorySelector); undefined for `repositories`. */
  object: KubeObject | undefined
}

/** The objects a run can see: items first, then `--sources`, in the set's namespace. */
export interface Inventory {
  objects: readonly KubeObject[]
  /** Repository objects by name; the first one of a name wins (Porch takes the first in its list). */
  repositories: ReadonlyMap<string, KubeObject>
}

/**
 * Collects the objects in the set's namespace. An object without a namespace
 * counts as in every namespace: in a directory of YAML, that is how
 * cluster-scoped objects and objects applied with `-n` look. An object present
 * both in items and in sources is taken from items.
 */
export function buildInventory(
  namespace: string,
  items: readonly KubeObject[],
  sources: readonly KubeObject[],
): Inventory {
  const seen = new Set<string>()
  const objects: KubeObject[] = []
  const repositories = new Map<string, KubeObject>()
  for (const object of [...items, ...sources]) {
    const ns = object.namespace
    if (ns !== '' && ns !== namespace) continue
    const key = `${object.apiVersion}|${object.kind}|${ns}|${object.name}`
    if (seen.has(key)) continue
    seen.add(key)
    objects.push(object)
    if (object.isGVK(repositoryApiVersion, repositoryKind) && !repositories.has(object.name))
      repositories.set(object.name, object)
  }
  return { objects, repositories }
}

/**
 * Porch's `getUpstreamPR`: the first PackageRevision with the upstream's
 * repository and package whose revision or workspace name matches (the loose
 * `||` match of the original, quirks included).
 */
export function findUpstreamRevision(
  pvs: PackageVariantSet,
  inventory: Inventory,
): { ok: true; object: KubeObject } | { ok: false; message: string } {
  const upstream = pvs.spec.upstream ?? {}
  const repo = upstream.repo ?? ''
  const pkg = upstream.package ?? ''
  const revision = upstream.revision ?? 0
  const workspace = upstream.workspaceName ?? ''
  for (const object of inventory.objects) {
    if (!object.isGVK(packageRevisionApiVersion, packageRevisionKind)) continue
    const spec = object.get(['spec'])
    if (typeof spec !== 'object' || spec === null) continue
    const s = spec as Record<string, unknown>
    if (s['repository'] !== repo || s['packageName'] !== pkg) continue
    const prRevision = typeof s['revision'] === 'number' ? s['revision'] : 0
    const prWorkspace = typeof s['workspaceName'] === 'string' ? s['workspaceName'] : ''
    if (prRevision === revision || prWorkspace === workspace) return { ok: true, object }
  }
  return { ok: false, message: `could not find upstream package revision '${pkg}/${revision}' in repo '${repo}'` }
}

/**
 * Unrolls `spec.targets` in order: `repositories` entries (one per package
 * name, default the upstream package), then the objects each selector picks,
 * in API-server list order (namespace, then name). A selector error is the
 * apimachinery text; an unknown kind simply selects nothing.
 */
export function unrollTargets(
  pvs: PackageVariantSet,
  inventory: Inventory,
): { ok: true; contexts: PvContext[] } | { ok: false; message: string } {
  const contexts: PvContext[] = []
  const upstreamPackage = pvs.spec.upstream?.package ?? ''
  const targets = pvs.spec.targets ?? []
  for (let i = 0; i < targets.length; i++) {
    const target = targets[i]!
    if (target.repositories && target.repositories.length > 0) {
      for (const rt of target.repositories) {
        const names = rt.packageNames && rt.packageNames.length > 0 ? rt.packageNames : [upstreamPackage]
        for (const pn of names) {
          contexts.push({
            targetIndex: i,
            template: target.template,
            repoDefault: rt.name,
            packageDefault: pn,
            object: undefined,
          })
        }
      }
      continue
    }
    let apiVersion: string
    let kind: string
    let selector: LabelSelector
    if (target.repositorySelector) {
      apiVersion = repositoryApiVersion
      kind = repositoryKind
      selector = target.repositorySelector
    } else if (target.objectSelector) {
      ;({ apiVersion, kind } = target.objectSelector)
      selector = {
        matchLabels: target.objectSelector.matchLabels,
        matchExpressions: target.objectSelector.matchExpressions,
      }
    } else {
      continue
    }
    const compiled = compileLabelSelector(selector)
    if (!compiled.ok) return { ok: false, message: compiled.error }
    const selected = inventory.objects
      .filter((o) => o.isGVK(apiVersion, kind) && compiled.matches(o.labels()))
      .sort(byNamespaceAndName)
    for (const object of selected) {
      contexts.push({
        targetIndex: i,
        template: target.template,
        repoDefault: object.name,
        packageDefault: upstreamPackage,
        object,
      })
    }
  }
  return { ok: true, contexts }
}

function byNamespaceAndName(a: KubeObject, b: KubeObject): number {
  const ka = `${a.namespace}/${a.name}`
  const kb = `${b.namespace}/${b.name}`
  return ka < kb ? -1 : ka > kb ? 1 : 0
}
