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

/** avail(D) ∩ every constraint: incomplete-version, prerelease and digest policies first. */
export function candidates(
  entry: IndexedPackage,
  constraints: readonly Constraint[],
  policy: DependencyPolicy,
): IndexedVersion[] {
  return entry.versions.filter(
    (v) => admitted(v.version, constraints, policy) && constraints.every((c) => satisfies(v.version, c)),
  )
}

/** A version may be picked at all: complete (or coerced by policy), a prerelease the policy admits, a digest only where pinned. */
function admitted(version: Version, constraints: readonly Constraint[], policy: DependencyPolicy): boolean {
  if (version.coerced && policy.incompleteVersions !== 'Coerce') return false
  if (version.digest) return pinned(version, constraints)
  return candidateAdmitted(version, policy.prereleases, constraints)
}

/** A digest is installed only where a constraint names it (Crossplane installs a pinned digest as it is; no range picks one). */
export function pinned(version: Version, constraints: readonly Constraint[]): boolean {
  return constraints.some((c) => c.kind === 'digest' && c.digest === version.digest)
}

/** Carvel's funnel figures for a no-version message. */
export function funnel(entry: IndexedPackage, constraints: readonly Constraint[], policy: DependencyPolicy): number[] {
  const all = entry.versions.length
  const complete = entry.versions.filter((v) => !v.version.coerced || policy.incompleteVersions === 'Coerce')
  const allowed = complete.filter((v) => admitted(v.version, constraints, policy))
  const matching = allowed.filter((v) => constraints.every((c) => satisfies(v.version, c)))
  return [all, allowed.length, matching.length]
}

/**
 * The version to install: with no non-empty range, `latest(D)` per policy
 * (`latestVersion` if listed and admitted, else the highest stable);
 * otherwise the highest candidate (build metadata breaks ties).
 */
export function pick(
  entry: IndexedPackage,
  candidates: readonly IndexedVersion[],
  constraints: readonly Constraint[],
  policy: DependencyPolicy,
): IndexedVersion | undefined {
  if (candidates.length === 0) return undefined
  const highest = candidates[candidates.length - 1]!
  if (constraints.some((c) => c.kind !== 'any') || policy.latest === 'Highest') return highest
  if (policy.latest === 'LatestVersionField' && entry.latestVersion) {
    const latest = parseVersion(entry.latestVersion, { coerce: true })
    const hit =
      latest &&
      candidates.find((c) => compareVersions(c.version, latest) === 0 || c.version.raw === entry.latestVersion)
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
  return (
    policy.downgrades === 'Deny' &&
    installed?.semver !== undefined &&
    to.semver !== undefined &&
    compareVersions(to, installed) < 0
  )
}
