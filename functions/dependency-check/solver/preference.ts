/** The solver's next value to try for a variable: the planner's preferences. */
import { compareVersions, isPrerelease, parseVersion } from '../versions.js'
import type { PartialSolution } from './partial-solution.js'
import type { ValueSet } from './value-set.js'
import type { ModelContext, Variable } from './variables.js'

/**
 * The value to try: installed packages keep their version, then upgrade
 * (Highest or Lowest), then downgrade; targets in their order; new
 * installations take `latest(D)` when no non-empty range applies, else the
 * highest admitted version.
 */
export function preferredValue(
  variable: Variable,
  context: ModelContext,
  allowed: ValueSet,
  solution: PartialSolution,
): number {
  if (variable.order) return variable.order.find((i) => allowed.has(i)) ?? allowed.indices()[0]!
  const candidates = allowed.indices().filter((i) => variable.values[i]!.kind !== 'absent')
  if (candidates.length === 0) return allowed.indices()[0]!
  const highest = candidates[candidates.length - 1]!
  const { policy } = context
  const ranged = !!variable.incoming?.some(
    (e) => e.constraint.kind !== 'any' && solution.allowedOf(e.from).subsetOf(e.set),
  )
  if (ranged || policy.latest === 'Highest') return highest
  const entry = context.catalog.packages.get(variable.package)
  if (policy.latest === 'LatestVersionField' && entry?.latestVersion) {
    const latest = parseVersion(entry.latestVersion, { coerce: true })
    const hit =
      latest &&
      candidates.find(
        (i) =>
          compareVersions(variable.values[i]!.version!, latest) === 0 ||
          variable.values[i]!.version!.raw === entry.latestVersion,
      )
    if (hit !== undefined && hit !== null) return hit
  }
  const stable = candidates.filter((i) => !isPrerelease(variable.values[i]!.version!))
  return stable[stable.length - 1] ?? highest
}
