/**
 * Explanations of unsolvable inputs, from the derivation of the empty
 * incompatibility (PubGrub's error reporting, in a linear form): every
 * derived fact is one numbered line saying which two facts it follows from,
 * input facts are quoted as they were stated, and the last line concludes.
 */
import type { Incompatibility, Term } from './incompatibility.js'
import type { ValueSet } from './value-set.js'

/** A variable as the explanation names it. */
export interface NamedVariable {
  /** `name` or `ns/name`. */
  label: string
  /** Per value: its version label (`1.0.0`, `1.0.0 (installed)`), or undefined for "not installed". */
  valueLabels: (string | undefined)[]
}

const maxListed = 4
/** Longer derivations keep their last lines: those closest to the conclusion. */
const maxLines = 40

/** `p@1.0.0`, `every p`, `p 1.0.0, 1.1.0 or 2.0.0`, `p not installed`, `p 1.0.0 or not installed`. */
export function describeTerm(variable: NamedVariable, set: ValueSet): string {
  const present = variable.valueLabels
    .map((l, i) => (l !== undefined && set.has(i) ? l : undefined))
    .filter((l): l is string => l !== undefined)
  const absent = variable.valueLabels.some((l, i) => l === undefined && set.has(i))
  const allPresent = present.length === variable.valueLabels.filter((l) => l !== undefined).length
  if (present.length === 0) return `${variable.label} not installed`
  let text: string
  if (allPresent && present.length > 1) text = `every ${variable.label}`
  else if (present.length === 1) text = `${variable.label}@${present[0]}`
  else text = `${variable.label} ${listed(present)}`
  return absent ? `${text} (or ${variable.label} not installed)` : text
}

function listed(labels: readonly string[]): string {
  if (labels.length <= maxListed)
    return labels.length === 1 ? labels[0]! : `${labels.slice(0, -1).join(', ')} or ${labels[labels.length - 1]}`
  return `${labels.slice(0, maxListed).join(', ')} or ${labels.length - maxListed} more`
}

/** What an incompatibility says, in words. */
export function describeIncompatibility(inc: Incompatibility, variables: readonly NamedVariable[]): string {
  if (inc.cause.kind === 'external') return inc.cause.text()
  const term = (t: Term) => describeTerm(variables[t.variable]!, t.set)
  const negated = (t: Term) => describeTerm(variables[t.variable]!, t.set.not())
  if (inc.terms.length === 0) return 'no set of versions satisfies every dependency'
  if (inc.terms.length === 1) {
    const only = inc.terms[0]!
    const variable = variables[only.variable]!
    const absent = variable.valueLabels.map((l, i) => (l === undefined ? i : -1)).filter((i) => i >= 0)
    if (
      absent.length > 0 &&
      absent.every((i) => !only.set.has(i)) &&
      only.set.count() === variable.valueLabels.length - absent.length
    )
      return `${variable.label} cannot be installed`
    if (absent.length > 0 && only.set.count() === absent.length && absent.every((i) => only.set.has(i)))
      return `${variable.label} must be installed`
    return `${term(only)} is ruled out, so ${negated(only)}`
  }
  if (inc.terms.length === 2) {
    // Phrase it from a side that is installed: "every a needs c 1.0.0", "a and b cannot both be installed".
    const [a, b] = inc.terms as [Term, Term]
    const installed = (t: Term) => variables[t.variable]!.valueLabels.every((l, i) => l !== undefined || !t.set.has(i))
    const everyVersion = (t: Term) =>
      installed(t) && variables[t.variable]!.valueLabels.every((l, i) => l === undefined || t.set.has(i))
    if (everyVersion(a) && everyVersion(b))
      return `${variables[a.variable]!.label} and ${variables[b.variable]!.label} cannot both be installed`
    if (!installed(a) && installed(b)) return `${term(b)} needs ${negated(a)}`
    return `${term(a)} needs ${negated(b)}`
  }
  const listedTerms = inc.terms.slice(0, maxListed).map(term)
  const more = inc.terms.length > maxListed ? ` and ${inc.terms.length - maxListed} more` : ''
  return `${listedTerms.join(', ')}${more} cannot all hold`
}

/** The numbered lines that lead from the input facts to the root incompatibility. */
export function explain(root: Incompatibility, variables: readonly NamedVariable[]): string[] {
  // Post-order over the derivation DAG without recursion: each derived fact gets one step.
  const numbers = new Map<Incompatibility, number>()
  const steps: Incompatibility[] = []
  const stack: { inc: Incompatibility; expanded: boolean }[] = [{ inc: root, expanded: false }]
  while (stack.length > 0) {
    const top = stack.pop()!
    const cause = top.inc.cause
    if (cause.kind === 'external' || numbers.has(top.inc)) continue
    if (!top.expanded) {
      stack.push(
        { inc: top.inc, expanded: true },
        { inc: cause.right, expanded: false },
        { inc: cause.left, expanded: false },
      )
      continue
    }
    steps.push(top.inc)
    numbers.set(top.inc, steps.length)
  }
  if (steps.length === 0) return [describeIncompatibility(root, variables)]
  // Only the steps shown are put into words (a long derivation has thousands).
  const shown = steps.slice(-maxLines)
  const ref = (inc: Incompatibility) => (inc.cause.kind === 'derived' ? ` (${numbers.get(inc)})` : '')
  const lines = shown.map((inc) => {
    const cause = inc.cause as Extract<Incompatibility['cause'], { kind: 'derived' }>
    const because = `${describeIncompatibility(cause.left, variables)}${ref(cause.left)} and ${describeIncompatibility(cause.right, variables)}${ref(cause.right)}`
    return inc === root
      ? `${because}; therefore ${describeIncompatibility(inc, variables)}`
      : `(${numbers.get(inc)}) ${because}; so ${describeIncompatibility(inc, variables)}`
  })
  return steps.length > maxLines ? [`(${steps.length - maxLines} earlier steps left out)`, ...lines] : lines
}
