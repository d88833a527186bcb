/**
 * What deciding one dependency yields: the report of it, the conflict if it
 * fails, and the change (`effect`) that would meet it.
 */
import type { IndexedVersion } from '../graph.js'
import type { Conflict, DependencyReport, SatisfiedBy } from '../plan.js'
import type { Action, PlanNode } from './plan-graph.js'

/** What applying a decision would change. */
export type Effect =
  | { kind: 'install'; package: string; namespace: string; version: IndexedVersion }
  | { kind: 'change'; node: PlanNode; version: IndexedVersion | undefined; action: Action }

export interface Decision {
  report: Omit<DependencyReport, 'requiredBy' | 'transitive' | 'declaredAt'>
  conflict?: Omit<Conflict, 'requiredBy' | 'declaredAt' | 'namespace' | 'constraints'> & {
    namespace: string
    id: string
  }
  effect?: Effect
  /** The node id the dependency resolves to (graph edge), if any. */
  to?: string
  /** anyOf: the alternative used. */
  choice?: number
}

/** The fields every report of one dependency starts from. */
export type ReportBase = Omit<DependencyReport, 'requiredBy' | 'transitive' | 'state' | 'message'>

/**
 * A report's first fields. `optional` only when true: an absent key, not an
 * undefined one that the report would have to delete (which turns each of
 * 50,000 objects into a slow dictionary).
 */
export function reportName<T extends DependencyReport['type']>(
  name: string,
  type: T,
  optional: boolean,
): { name: string; type: T; optional?: true } {
  return optional ? { name, type, optional: true } : { name, type }
}

/** Whether the decision still wants the plan changed (an install or a new version). */
export function changesPlan(decision: Decision): boolean {
  return !!decision.effect && !(decision.effect.kind === 'change' && decision.effect.action === 'keep')
}

/** The report state of a dependency met by `target`, from what the plan does to it. */
export function stateOf(target: PlanNode): 'Install' | 'Upgrade' | 'Downgrade' | 'Fulfilled' {
  return target.action === 'install'
    ? 'Install'
    : target.action === 'upgrade'
      ? 'Upgrade'
      : target.action === 'downgrade'
        ? 'Downgrade'
        : 'Fulfilled'
}

export function satisfiedBy(n: PlanNode): SatisfiedBy {
  return { package: n.package, version: n.version?.raw ?? '', ...(n.namespace ? { namespace: n.namespace } : {}) }
}
