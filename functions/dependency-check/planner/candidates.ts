/**
 * Which catalog versions of a package may be installed under a set of
 * constraints and the policy, and which one of them the planner prefers.
 */
import type { DependencyPolicy } from '../../api/dependencies.js'
import { candidateAdmitted, satisfies } from '../constraints.js'
import type { Constraint } from '../constraints.js'
import type { IndexedPackage, IndexedVersion } from '../graph.js'
import { compareVersions, isPrerelease, parseVersion } from '../versions.js'
import type { Version } from '../versions.js'

/** avail(D) ∩ every constraint: incomplete-version and prerelease policies first. */
export function candidates(entry: IndexedPackage, constraints: readonly Constraint[], policy: DependencyPolicy): IndexedVersion[] {
  return entry.versions.filter(
    (v) => (!v.version.coerced || policy.incompleteVersions === 'Coerce') && candidateAdmitted(v.version, policy.prereleases, constraints) && constraints.every((c) => satisfies(v.version, c)),
  )
}

/** Carvel's funnel figures for a no-version message. */
export function funnel(entry: IndexedPackage, constraints: readonly Constraint[], policy: DependencyPolicy): number[] {
  const all = entry.versions.length
  const complete = entry.versions.filter((v) => !v.version.coerced || policy.incompleteVersions === 'Coerce')
  const admitted = complete.filter((v) => candidateAdmitted(v.version, policy.prereleases, constraints))
  const matching = admitted.filter((v) => constraints.every((c) => satisfies(v.version, c)))
  return [all, admitted.length, matching.length]
}

/**
 * The version to install: with no non-empty range, `latest(D)` per policy
 * (`latestVersion` if listed and admitted, else the highest stable);
 * otherwise the highest candidate (build metadata breaks ties).
 */
export function pick(entry: IndexedPackage, candidates: readonly IndexedVersion[], constraints: readonly Constraint[], policy: DependencyPolicy): IndexedVersion | undefined {
  if (candidates.length === 0) return undefined
  const highest = candidates[candidates.length - 1]!
  if (constraints.some((c) => c.kind !== 'any') || policy.latest === 'Highest') return highest
  if (policy.latest === 'LatestVersionField' && entry.latestVersion) {
    const latest = parseVersion(entry.latestVersion, { coerce: true })
    const hit = latest && candidates.find((c) => compareVersions(c.version, latest) === 0 || c.version.raw === entry.latestVersion)
    if (hit) return hit
  }
  const stable = candidates.filter((c) => !isPrerelease(c.version))
  return stable[stable.length - 1] ?? highest
}

/**
 * True when moving an installation from `installed` to `to` is a downgrade the
 * policy refuses (Carvel will not install a version lower than the one it
 * installed without its `downgradable` annotation). Digests and opaque versions
 * have no order.
 */
export function refusedDowngrade(policy: DependencyPolicy, installed: Version | undefined, to: Version): boolean {
  return policy.downgrades === 'Deny' && installed?.semver !== undefined && to.semver !== undefined && compareVersions(to, installed) < 0
}
