/**
 * What a PackageVariantSet reads besides itself (docs/upstream-behaviour.md, "Targets"):
 * objects in its namespace, the upstream PackageRevision, Repositories, and
 * the unrolled targets (`unrollDownstreamTargets`).
 */
import { isBuiltinKind, kindKey, noKindMatchMessage } from '../api/builtin-kinds.js'
import { crdProvides, isCustomResourceDefinition } from '../api/dependencies.js'
import type { PackageVariantSet, PackageVariantTemplate, RepositoryTarget, Target } from '../api/package-variant-set.js'
import { compileLabelSelector, formatLabelSelector } from '../krm/index.js'
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
  /** True when a selector may name the kind: it is served (see KnownKinds), declared or built in. */
  knows(apiVersion: string, kind: string): boolean
}

/**
 * The kinds an API server serves (`apiVersion|Kind`, see kindKey), from its
 * discovery: with them, a selector's kind is known only when served, as
 * Porch's controller lists targets from the API server. Without them (a
 * directory of YAML), a kind is known when an object of it or a
 * CustomResourceDefinition serving it is among the objects, in any
 * namespace, or it is built in.
 */
export type KnownKinds = ReadonlySet<string>

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
  served?: KnownKinds,
): Inventory {
  const seen = new Set<string>()
  const objects: KubeObject[] = []
  const repositories = new Map<string, KubeObject>()
  let declared: Set<string> | undefined
  const knows = (apiVersion: string, kind: string): boolean => {
    if (served) return served.has(kindKey(apiVersion, kind))
    if (isBuiltinKind(apiVersion, kind)) return true
    declared ??= declaredKinds([...items, ...sources])
    return declared.has(kindKey(apiVersion, kind))
  }
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
  return { objects, repositories, knows }
}

/** The kinds of the objects (any namespace) and those their CustomResourceDefinitions serve. */
function declaredKinds(objects: readonly KubeObject[]): Set<string> {
  const kinds = new Set<string>()
  for (const object of objects) {
    kinds.add(kindKey(object.apiVersion, object.kind))
    if (isCustomResourceDefinition(object))
      for (const gvk of crdProvides(object)) kinds.add(kindKey(gvk.apiVersion, gvk.kind))
  }
  return kinds
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

/** Why targets could not be unrolled: the field, and Porch's condition reason. */
export interface UnrollFailure {
  ok: false
  reason: 'NoMatchingTargets' | 'UnexpectedError'
  message: string
  field: string
}

/** A target that matched nothing though its kind is known: worth a warning, since deleting follows. */
export interface EmptyMatch {
  message: string
  field: string
}

/**
 * Unrolls `spec.targets` in order: `repositories` entries (one per package
 * name, default the upstream package), then the objects each selector picks,
 * in API-server list order (namespace, then name). A selector error is the
 * apimachinery text. Targets that cannot be found fail the set with Porch's
 * `NoMatchingTargets`, never select nothing: a kind the inventory does not
 * know (Porch: the API server does not serve it), a `repositorySelector`
 * with no Repository at all, a `repositories` entry naming none. A known kind
 * that selects nothing is an empty match, reported as such.
 */
export function unrollTargets(
  pvs: PackageVariantSet,
  inventory: Inventory,
): { ok: true; contexts: PvContext[]; empty: EmptyMatch[] } | UnrollFailure {
  const contexts: PvContext[] = []
  const empty: EmptyMatch[] = []
  const upstreamPackage = pvs.spec.upstream?.package ?? ''
  const targets = pvs.spec.targets ?? []
  for (let i = 0; i < targets.length; i++) {
    const target = targets[i]!
    if (target.repositories && target.repositories.length > 0) {
      const missing = missingRepositories(pvs, inventory, target.repositories, i)
      if (missing) return missing
      addRepositoryContexts(contexts, target, target.repositories, i, upstreamPackage)
      continue
    }
    const selector = targetSelector(target, i, inventory)
    if (!selector) continue
    if (!selector.ok) return selector
    const compiled = compileLabelSelector(selector.selector)
    if (!compiled.ok) return { ok: false, reason: 'UnexpectedError', message: compiled.error, field: selector.field }
    const selected = inventory.objects
      .filter((o) => o.isGVK(selector.apiVersion, selector.kind) && compiled.matches(o.labels()))
      .sort(byNamespaceAndName)
    if (selected.length === 0) empty.push(emptyMatch(selector))
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
  return { ok: true, contexts, empty }
}

/** The `repositories` entries of target `i` that name no Repository, as the set's failure; undefined if none. */
function missingRepositories(
  pvs: PackageVariantSet,
  inventory: Inventory,
  repositories: RepositoryTarget[],
  i: number,
): UnrollFailure | undefined {
  const missing = repositories.flatMap((rt, j) => (inventory.repositories.has(rt.name) ? [] : [{ rt, j }]))
  if (missing.length === 0) return undefined
  const names = missing.map(({ rt }) => JSON.stringify(rt.name)).join(', ')
  return {
    ok: false,
    reason: 'NoMatchingTargets',
    message: `${missing.length === 1 ? 'Repository' : 'Repositories'} ${names} of spec.targets[${i}].repositories not found: no Repository of that name in namespace ${JSON.stringify(pvs.namespace || 'default')}`,
    field: `spec.targets[${i}].repositories[${missing[0]!.j}].name`,
  }
}

/** One context per repository and package name (default the upstream package), in the order listed. */
function addRepositoryContexts(
  contexts: PvContext[],
  target: Target,
  repositories: RepositoryTarget[],
  i: number,
  upstreamPackage: string,
): void {
  for (const rt of repositories) {
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
}

/** What a selector target picks from: the kind, the label selector, and the field it is at. */
interface TargetSelector {
  ok: true
  apiVersion: string
  kind: string
  selector: LabelSelector
  field: string
}

/**
 * Target `i`'s `repositorySelector` or `objectSelector`; a failure when there
 * is nothing of its kind to select from; undefined for a target with neither.
 */
function targetSelector(target: Target, i: number, inventory: Inventory): TargetSelector | UnrollFailure | undefined {
  if (target.repositorySelector) {
    const field = `spec.targets[${i}].repositorySelector`
    if (inventory.repositories.size === 0)
      return {
        ok: false,
        reason: 'NoMatchingTargets',
        message: `${field}: there is no Repository (${repositoryApiVersion}) at all to select from`,
        field,
      }
    return {
      ok: true,
      apiVersion: repositoryApiVersion,
      kind: repositoryKind,
      selector: target.repositorySelector,
      field,
    }
  }
  if (target.objectSelector) {
    const { apiVersion, kind } = target.objectSelector
    const selector = {
      matchLabels: target.objectSelector.matchLabels,
      matchExpressions: target.objectSelector.matchExpressions,
    }
    const field = `spec.targets[${i}].objectSelector`
    if (!inventory.knows(apiVersion, kind))
      return {
        ok: false,
        reason: 'NoMatchingTargets',
        message: `${field}: ${noKindMatchMessage(apiVersion, kind)}`,
        field: `${field}.kind`,
      }
    return { ok: true, apiVersion, kind, selector, field }
  }
  return undefined
}

/** A known kind that the selector picks nothing of: a warning, since deleting follows. */
function emptyMatch({ apiVersion, kind, selector, field }: TargetSelector): EmptyMatch {
  return {
    message: `${field}: no ${kind} (${apiVersion}) matches ${selector.matchLabels || selector.matchExpressions ? `the selector ${JSON.stringify(formatLabelSelector(selector))}` : 'the empty selector'}`,
    field,
  }
}

function byNamespaceAndName(a: KubeObject, b: KubeObject): number {
  const ka = `${a.namespace}/${a.name}`
  const kb = `${b.namespace}/${b.name}`
  return ka < kb ? -1 : ka > kb ? 1 : 0
}
