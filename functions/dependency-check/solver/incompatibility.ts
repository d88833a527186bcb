/**
 * Incompatibilities, PubGrub's unit of knowledge: a set of terms that must not
 * all hold at once. A term says "variable v takes a value in this set"; since
 * every domain is finite (and includes "not installed" where that is
 * possible), a negative term is just the complement set, so every term here is
 * positive. A dependency `p@1 → d ^1` is the incompatibility
 * {p ∈ {1}, d ∈ (not ^1, or not installed)}; a GVK or `anyOf` dependency adds
 * one term per alternative; learned incompatibilities keep the two they were
 * derived from, which is what the explanation walks.
 */
import { ValueSet } from './value-set.js'

/** `variable ∈ set`. */
export interface Term {
  variable: number
  set: ValueSet
}

/** Why an incompatibility holds. */
export type Cause =
  /** An input fact, phrased for people only when an explanation needs it (e.g. `p@1.0.0 needs d (^1)`). */
  | { kind: 'external'; text: () => string }
  /** Resolved from two others during conflict resolution. */
  | { kind: 'derived'; left: Incompatibility; right: Incompatibility }

/** Terms that cannot all hold. No terms at all means there is no solution. */
export interface Incompatibility {
  terms: Term[]
  cause: Cause
}

/**
 * Builds an incompatibility: terms on one variable are intersected (both must
 * hold), terms covering the whole domain are dropped (they always hold).
 * Returns undefined when a term is empty (the incompatibility can never hold).
 */
export function incompatibility(terms: readonly Term[], cause: Cause): Incompatibility | undefined {
  if (terms.length === 2 && terms[0]!.variable !== terms[1]!.variable) {
    // The common case (one dependency edge), without the merge.
    const [a, b] = terms as [Term, Term]
    if (a.set.isEmpty() || b.set.isEmpty()) return undefined
    const aFull = a.set.isFull()
    const bFull = b.set.isFull()
    return { terms: aFull && bFull ? [] : aFull ? [b] : bFull ? [a] : [a, b], cause }
  }
  const byVariable = new Map<number, ValueSet>()
  for (const t of terms) {
    const seen = byVariable.get(t.variable)
    byVariable.set(t.variable, seen ? seen.and(t.set) : t.set)
  }
  const out: Term[] = []
  for (const [variable, set] of byVariable) {
    if (set.isEmpty()) return undefined
    if (!set.isFull()) out.push({ variable, set })
  }
  return { terms: out, cause }
}
