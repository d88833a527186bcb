/**
 * The dependency problem as finite domains and incompatibilities, in three
 * parts: the variables and their values (`domains.ts`), the incompatibilities
 * of their dependencies (`dependency-rules.ts`), and the incompatibilities
 * that forbid a solution's cycles (`cycles.ts`); the solver tries values in
 * the planner's order (`preference.ts`).
 */
import { CycleRules } from './cycles.js'
import { DependencyRules } from './dependency-rules.js'
import { Domains } from './domains.js'
import type { Incompatibility } from './incompatibility.js'
import { preferredValue } from './preference.js'
import type { Problem } from './solver.js'
import type { ModelContext, ModelNode, Variable } from './variables.js'

export type { ModelContext, ModelNode, TargetValue, Value, Variable } from './variables.js'

/** The model: variables and the solver's problem. */
export interface Model {
  variables: Variable[]
  problem: Problem
  /**
   * Incompatibilities that forbid the cycles of a solution among packages the
   * plan installs or changes (a cycle is a conflict; another choice of
   * versions may avoid it). Empty when the solution has none.
   */
  forbidCycles(values: readonly number[]): Incompatibility[]
}

/** Builds the variables (reachable from the nodes) and the incompatibilities. */
export function buildModel(nodes: readonly ModelNode[], context: ModelContext): Model {
  const domains = new Domains(nodes, context)
  domains.discover()
  const { variables, byId } = domains
  const rules = new DependencyRules(domains)
  for (let v = 0; v < variables.length; v++) rules.addDependencies(v)
  nodes.forEach((n) => {
    if (!n.target) rules.addChangeNeedsDependant(byId.get(n.id)!)
  })
  const problem: Problem = {
    domainSizes: variables.map((v) => v.values.length),
    incompatibilities: rules.incompatibilities,
    absent: variables.map((v) => v.values.findIndex((x) => x.kind === 'absent')),
    first: nodes.filter((n) => n.target).map((n) => byId.get(n.id)!),
    later: nodes.filter((n) => !n.target).map((n) => byId.get(n.id)!),
    choices: rules.choices,
    prefer: (v, allowed, solution) => preferredValue(variables[v]!, context, allowed, solution),
  }
  const cycles = new CycleRules(domains)
  return { variables, problem, forbidCycles: (values) => cycles.forbidCycles(values) }
}
