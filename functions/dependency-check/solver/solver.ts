/**
 * PubGrub's main loop over finite domains: unit propagation, conflict
 * resolution that learns a new incompatibility and backjumps, and decisions
 * in the order the problem prefers. Exact: it answers "no solution" only
 * after deriving the empty incompatibility, whose derivation is the proof.
 * Iterative throughout (no recursion), so deep graphs cannot overflow the stack.
 */
import type { Incompatibility, Term } from './incompatibility.js'
import { append } from '../append.js'
import { PartialSolution } from './partial-solution.js'
import { ValueSet } from './value-set.js'

/** An open disjunction: once `head` holds, some alternative's set should hold (tried in order). */
export interface Choice {
  head: Term
  alternatives: Term[]
  /** A wish (an optional dependency to install if possible) rather than a rule: skipped when no alternative can hold. */
  wish?: boolean
}

/** What the solver needs from the model. */
export interface Problem {
  domainSizes: number[]
  incompatibilities: Incompatibility[]
  /** Per variable, the index of "not installed", or -1 when it must be present. */
  absent: number[]
  /** Decided first, in this order (the targets). */
  first: number[]
  /** Decided after the open choices, in this order (installed packages, which prefer to stay as they are). */
  later: number[]
  choices: Choice[]
  /** The value to decide for a variable among `allowed` (never empty). */
  prefer(variable: number, allowed: ValueSet, solution: PartialSolution): number
}

/** The chosen value index of every variable, or the incompatibility that proves there is none. */
export type Solution = { ok: true; values: number[] } | { ok: false; root: Incompatibility }

/** Solves the problem; see the module doc. */
export function solve(problem: Problem): Solution {
  return new Solver(problem).run()
}

/**
 * The resolvent of `inc` and the `cause` that derived the satisfier of `term`:
 * every other term of both, and `term`'s variable in the union of the two sets
 * (dropped when that is the whole domain). Terms of `inc` are on distinct
 * variables already, so only the cause's few terms need merging.
 */
function resolve(inc: Incompatibility, term: Term, cause: Incompatibility): Incompatibility {
  const v = term.variable
  const terms = inc.terms.filter((t) => t.variable !== v)
  for (const c of cause.terms) {
    if (c.variable === v) {
      const union = term.set.or(c.set)
      if (!union.isFull()) terms.push({ variable: v, set: union })
      continue
    }
    const at = terms.findIndex((t) => t.variable === c.variable)
    if (at < 0) terms.push(c)
    else terms[at] = { variable: c.variable, set: terms[at]!.set.and(c.set) }
  }
  return { terms, cause: { kind: 'derived', left: inc, right: cause } }
}

/** No incompatibilities to check. */
const none: readonly Incompatibility[] = []

class Solver {
  private readonly solution: PartialSolution
  /** Per variable, the incompatibilities with a term on it (made on the first). */
  private readonly watching: (Incompatibility[] | undefined)[]
  /** Variables that may have to be present; popped in order. */
  private queue: number[] = []
  private head = 0
  private cursor = 0
  private laterCursor = 0

  constructor(private readonly problem: Problem) {
    this.solution = new PartialSolution(problem.domainSizes)
    this.watching = new Array<Incompatibility[] | undefined>(problem.domainSizes.length)
    for (const inc of problem.incompatibilities) this.watch(inc)
    this.queue.push(...problem.first)
  }

  run(): Solution {
    const root = this.propagate(
      this.problem.domainSizes.map((_, v) => v),
      this.problem.incompatibilities.filter((i) => i.terms.length <= 1),
    )
    if (root) return { ok: false, root }
    for (;;) {
      const decision = this.nextDecision()
      if (!decision) break
      this.solution.narrow(
        decision.variable,
        ValueSet.where(this.problem.domainSizes[decision.variable]!, (i) => i === decision.value),
      )
      const failed = this.propagate([decision.variable], [])
      if (failed) return { ok: false, root: failed }
    }
    return { ok: true, values: this.problem.domainSizes.map((_, v) => this.solution.allowedOf(v).indices()[0]!) }
  }

  private watch(inc: Incompatibility): void {
    for (const t of inc.terms) this.watching[t.variable] = append(this.watching[t.variable], inc)
  }

  /**
   * Unit propagation from the changed variables (and the given incompatibilities,
   * checked first). Returns the root incompatibility when there is no solution.
   */
  private propagate(changed: number[], extra: Incompatibility[]): Incompatibility | undefined {
    const pending = [...changed].reverse()
    let check: readonly Incompatibility[] = extra
    for (;;) {
      for (const inc of check) {
        const relation = this.solution.relation(inc)
        if (relation.kind === 'open') continue
        if (relation.kind === 'satisfied') {
          const learned = this.resolveConflict(inc)
          if (!learned.ok) return learned.root
          pending.length = 0
          const unit = this.solution.relation(learned.incompatibility)
          if (unit.kind !== 'almost')
            throw new Error('internal: a learned incompatibility is not unit after backjumping')
          this.derive(unit.term, learned.incompatibility)
          pending.push(unit.term.variable)
          break
        }
        this.derive(relation.term, inc)
        pending.push(relation.term.variable)
      }
      const next = pending.pop()
      if (next === undefined) return undefined
      check = this.watching[next] ?? none
    }
  }

  private derive(term: Term, cause: Incompatibility): void {
    const v = term.variable
    const set = this.solution.allowedOf(v).and(term.set.not())
    this.solution.narrow(v, set, cause)
    if (this.problem.absent[v]! >= 0 && !set.has(this.problem.absent[v]!)) this.queue.push(v)
  }

  /** PubGrub's conflict resolution: resolve until the learned incompatibility can be made unit by backjumping. */
  private resolveConflict(
    start: Incompatibility,
  ): { ok: true; incompatibility: Incompatibility } | { ok: false; root: Incompatibility } {
    let inc = start
    // Terms carried from one step to the next keep their satisfier: look each up once.
    const satisfiers = new Map<Term, number>()
    const satisfierOf = (t: Term) => {
      let index = satisfiers.get(t)
      if (index === undefined) satisfiers.set(t, (index = this.solution.satisfier(t)))
      return index
    }
    for (;;) {
      if (inc.terms.length === 0) return { ok: false, root: inc }
      let latest = -1
      let latestTerm: Term | undefined
      let previousLevel = 0
      for (const t of inc.terms) {
        const index = satisfierOf(t)
        if (index > latest) {
          if (latestTerm) previousLevel = Math.max(previousLevel, this.solution.trail[latest]!.level)
          latest = index
          latestTerm = t
        } else previousLevel = Math.max(previousLevel, this.solution.trail[index]!.level)
      }
      const step = this.solution.trail[latest]!
      if (!step.cause || previousLevel < step.level) {
        this.undo(this.solution.backtrack(Math.min(previousLevel, step.level - 1)))
        if (inc !== start) this.watch(inc)
        return { ok: true, incompatibility: inc }
      }
      inc = resolve(inc, latestTerm!, step.cause)
    }
  }

  private undo(variables: number[]): void {
    for (let i = variables.length - 1; i >= 0; i--) {
      const v = variables[i]!
      if (this.problem.absent[v]! >= 0) this.queue.push(v)
    }
    this.cursor = 0
    this.laterCursor = 0
  }

  /** Required variables first, then open choices, then every other variable at its default. */
  private nextDecision(): { variable: number; value: number } | undefined {
    const s = this.solution
    while (this.head < this.queue.length) {
      const v = this.queue[this.head++]!
      if (s.isAssigned(v)) continue
      const absent = this.problem.absent[v]!
      const allowed = s.allowedOf(v)
      if (absent >= 0 && allowed.has(absent)) continue
      return { variable: v, value: this.problem.prefer(v, allowed, s) }
    }
    for (const choice of this.problem.choices) {
      if (!s.allowedOf(choice.head.variable).subsetOf(choice.head.set)) continue
      if (choice.alternatives.some((a) => s.allowedOf(a.variable).subsetOf(a.set))) continue
      const open = choice.alternatives.find(
        (a) => !s.isAssigned(a.variable) && !s.allowedOf(a.variable).disjoint(a.set),
      )
      if (!open) continue
      return {
        variable: open.variable,
        value: this.problem.prefer(open.variable, s.allowedOf(open.variable).and(open.set), s),
      }
    }
    const later = this.problem.later
    for (; this.laterCursor < later.length; this.laterCursor++) {
      const v = later[this.laterCursor]!
      if (!s.isAssigned(v)) return { variable: v, value: this.problem.prefer(v, s.allowedOf(v), s) }
    }
    const n = this.problem.domainSizes.length
    for (; this.cursor < n; this.cursor++) {
      const v = this.cursor
      if (s.isAssigned(v)) continue
      const absent = this.problem.absent[v]!
      const allowed = s.allowedOf(v)
      return { variable: v, value: absent >= 0 && allowed.has(absent) ? absent : this.problem.prefer(v, allowed, s) }
    }
    return undefined
  }
}
