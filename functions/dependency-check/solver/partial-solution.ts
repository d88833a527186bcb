/**
 * The partial solution: each variable's allowed values, narrowed step by step
 * (decisions and derivations), with the trail PubGrub's conflict resolution
 * reads: for a term, the first step at which the variable's allowed set lay
 * inside the term (its satisfier), that step's decision level and its cause.
 */
import type { Incompatibility, Term } from './incompatibility.js'
import { append } from '../append.js'
import { ValueSet } from './value-set.js'

/** One narrowing step. */
export interface Step {
  variable: number
  /** The variable's allowed values after this step. */
  set: ValueSet
  level: number
  /** The incompatibility it was derived from; undefined for a decision. */
  cause: Incompatibility | undefined
}

/** How an incompatibility stands against the partial solution. */
export type Relation = { kind: 'satisfied' } | { kind: 'almost'; term: Term } | { kind: 'open' }

/** The two relations without a term, shared: propagation asks for one per watched incompatibility. */
const open: Relation = Object.freeze({ kind: 'open' })
const satisfied: Relation = Object.freeze({ kind: 'satisfied' })

/** Allowed sets, the trail, and per-variable history (trail indices). */
export class PartialSolution {
  readonly trail: Step[] = []
  private readonly allowed: ValueSet[]
  private readonly sizes: number[]
  /** Per variable, its steps' trail indices (made on the first step). */
  private readonly history: (number[] | undefined)[]
  level = 0

  constructor(private readonly domainSizes: readonly number[]) {
    this.allowed = domainSizes.map((n) => ValueSet.full(n))
    this.sizes = [...domainSizes]
    this.history = new Array<number[] | undefined>(domainSizes.length)
  }

  allowedOf(variable: number): ValueSet {
    return this.allowed[variable]!
  }

  /** True when the variable has exactly one value left. */
  isAssigned(variable: number): boolean {
    return this.sizes[variable] === 1
  }

  /** Narrows a variable (a decision when `cause` is undefined, which opens a new level). */
  narrow(variable: number, set: ValueSet, cause?: Incompatibility): void {
    if (!cause) this.level++
    this.history[variable] = append(this.history[variable], this.trail.length)
    this.trail.push({ variable, set, level: this.level, cause })
    this.allowed[variable] = set
    this.sizes[variable] = set.count()
  }

  /** Undoes every step above `level`; returns the variables touched, most recent first. */
  backtrack(level: number): number[] {
    const undone: number[] = []
    while (this.trail.length > 0 && this.trail[this.trail.length - 1]!.level > level) {
      const step = this.trail.pop()!
      const list = this.history[step.variable]!
      list.pop()
      const previous =
        list.length > 0 ? this.trail[list[list.length - 1]!]!.set : ValueSet.full(this.domainSizes[step.variable]!)
      this.allowed[step.variable] = previous
      this.sizes[step.variable] = previous.count()
      undone.push(step.variable)
    }
    this.level = level
    return undone
  }

  relation(incompatibility: Incompatibility): Relation {
    let unsatisfied: Term | undefined
    for (const term of incompatibility.terms) {
      const allowed = this.allowed[term.variable]!
      if (allowed.subsetOf(term.set)) continue
      if (allowed.disjoint(term.set) || unsatisfied) return open
      unsatisfied = term
    }
    return unsatisfied ? { kind: 'almost', term: unsatisfied } : satisfied
  }

  /** The trail index of the first step after which the term held. */
  satisfier(term: Term): number {
    for (const index of this.history[term.variable] ?? []) {
      if (this.trail[index]!.set.subsetOf(term.set)) return index
    }
    throw new Error(`internal: term on variable ${term.variable} is not satisfied`)
  }
}
