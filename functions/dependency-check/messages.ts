/**
 * Message texts users of Glasskube, Crossplane and Carvel recognise
 * (docs/upstream-behaviour.md, "Messages").
 */
import type { Constraint } from './constraints.js'

/** Glasskube's conflict text, `D (required: R, actual: V)`, plus an explanation. */
export function conflictMessage(pkg: string, required: string, actual: string, explanation?: string): string {
  const text = `${pkg} (required: ${required || '*'}, actual: ${actual})`
  return explanation ? `${text}: ${explanation}` : text
}

/** Glasskube's repository message for a package no catalog lists. */
export function missingMessage(pkg: string): string {
  return `"${pkg}" is not available in any repository`
}

/** A Go-slice style list of constraints, as Crossplane prints them: `[>=1.0.0 <2]`. */
export function describeConstraints(constraints: readonly Constraint[]): string {
  return `[${constraints.map((c) => c.display || '*').join(' ')}]`
}

/**
 * Crossplane's "no valid version" text with Carvel's funnel figures:
 * `all=N -> after-prereleases-filter=N -> after-constraints-filter=N`.
 */
export function noVersionMessage(pkg: string, constraints: readonly Constraint[], funnel: readonly number[]): string {
  const [all, afterPrereleases, afterConstraints] = funnel
  return (
    `dependency (${pkg}) does not have a valid version that satisfies all constraints. ` +
    `Constraints: ${describeConstraints(constraints)} ` +
    `(details: all=${all} -> after-prereleases-filter=${afterPrereleases} -> after-constraints-filter=${afterConstraints})`
  )
}

/**
 * Crossplane's `NDependenciesAndSomeMore(3, …)`: sorted; `"a"`, `"a" (c)`;
 * three as `a, b, and c`; more as `a, b, c, and N more`.
 */
export function missingDependencies(entries: readonly { name: string; constraint: string }[]): string {
  const items = entries.map((e) => (e.constraint ? `"${e.name}" (${e.constraint})` : `"${e.name}"`)).sort()
  let list: string
  if (items.length <= 2) list = items.join(', ')
  else if (items.length === 3) list = `${items[0]}, ${items[1]}, and ${items[2]}`
  else list = `${items.slice(0, 3).join(', ')}, and ${items.length - 3} more`
  return `missing dependencies: ${list}`
}
