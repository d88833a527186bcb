/**
 * One owner per API in a repository (pure): two packages whose
 * CustomResourceDefinitions define the same API (group and kind) would fight
 * over it in the cluster (Crossplane refuses the second package revision,
 * `cannot establish control of object: ... is already controlled by`; OLM
 * fails the second CSV, `InterOperatorGroupOwnerConflict`). The package that
 * came later fails with both names: packages the repository already holds
 * come first, then the variants rendered there before, then new ones, each
 * in path order. A package may define another's API on purpose (a CRD
 * bundle, a fork) by listing it in its PackageManifest's `spec.sharedAPIs`;
 * either of the two listing it is enough (docs/package-dependencies.md,
 * "One owner per API").
 */
import { isCustomResourceDefinition, packageManifestKind, isDependencyKind } from '../../functions/api/dependencies.js'
import type { GroupKind } from '../../functions/api/dependencies.js'
import { packagePathAnnotation } from '../../functions/krm/index.js'
import type { KubeObject } from '../../functions/krm/index.js'
import { rootManifest } from '../package/dependency-objects.js'
import { failure } from '../report/failure.js'
import type { Failure } from '../report/failure.js'

/** A package of a repository as the check sees it. */
export interface OwningPackage {
  /** `<repo>/<package>`. */
  path: string
  /** Its PackageManifests and CRDs (dependencyObjects). */
  objects: readonly KubeObject[]
  /** Its root's package-path annotation. */
  root: string
  /** `present`: held by the repository, not rendered by this run; `existing`: a variant rendered there before; `new`: one this run creates. */
  age: 'present' | 'existing' | 'new'
}

interface Defined {
  path: string
  name: string
  crd: string
  shared: readonly GroupKind[]
}

const ages = { present: 0, existing: 1, new: 2 }

/** The packages that fail (by path), each with why: only packages this run renders can fail. */
export function apiOwnershipFailures(repo: string, packages: readonly OwningPackage[]): Map<string, Failure[]> {
  const failures = new Map<string, Failure[]>()
  const withCRDs = packages.filter((p) => p.objects.some(isCustomResourceDefinition))
  if (withCRDs.length < 2) return failures
  const ordered = [...withCRDs].sort(
    (a, b) => ages[a.age] - ages[b.age] || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0),
  )
  const owners = new Map<string, Defined>()
  for (const p of ordered) {
    const manifest = p.objects.some((o) => isDependencyKind(o, packageManifestKind))
      ? rootManifest(p.objects, p.root)
      : undefined
    const shared = manifest?.sharedAPIs ?? []
    const name = manifest?.name ?? p.path.slice(p.path.indexOf('/') + 1)
    const mine = new Map<string, string>()
    for (const crd of p.objects) {
      if (!isCustomResourceDefinition(crd) || !crd.getAnnotation(packagePathAnnotation)?.startsWith(p.root)) continue
      const group = crd.get(['spec', 'group'])
      const kind = crd.get(['spec', 'names', 'kind'])
      if (typeof group === 'string' && typeof kind === 'string' && !mine.has(`${group}/${kind}`))
        mine.set(`${group}/${kind}`, crd.name)
    }
    const reasons: string[] = []
    for (const [key, crd] of mine) {
      const owner = owners.get(key)
      if (!owner) continue
      const [group, kind] = [key.slice(0, key.lastIndexOf('/')), key.slice(key.lastIndexOf('/') + 1)]
      const lists = (list: readonly GroupKind[]) => list.some((g) => g.group === group && g.kind === kind)
      if (lists(shared) || lists(owner.shared) || p.age === 'present') continue
      reasons.push(
        `CustomResourceDefinition ${crd} defines ${key}, which ${owner.path} (package ${owner.name}, CustomResourceDefinition ${owner.crd}) defines too: ` +
          `two packages of repository ${repo} may not own one API; if ${name} or ${owner.name} serves it on purpose, list {group: ${group}, kind: ${kind}} in spec.sharedAPIs of its PackageManifest`,
      )
    }
    // A package that fails owns nothing: the packages after it are judged against those that render.
    if (reasons.length > 0)
      failures.set(
        p.path,
        reasons.map((r) => failure('ApiOwnershipConflict', r)),
      )
    else for (const [key, crd] of mine) if (!owners.has(key)) owners.set(key, { path: p.path, name, crd, shared })
  }
  return failures
}
