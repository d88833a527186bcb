/**
 * One dependency of one node against the graph as it stands: what the
 * report says of it, the conflict if it fails, and the change (`effect`) that
 * would meet it. Deciding has no side effects; the diagnosis rounds apply the
 * effects, the report reads the rest.
 */
import type { Dependency } from '../../api/dependencies.js'
import { gvkKey } from '../graph.js'
import { decideGVK } from './decide-api.js'
import { decidePackage } from './decide-package.js'
import { reportName } from './decision.js'
import type { Decision } from './decision.js'
import type { PlanGraph, PlanNode } from './plan-graph.js'

/** Decides dependency `index` of `node` (no side effects; `effect` says what to apply). */
export function decide(graph: PlanGraph, node: PlanNode, dep: Dependency, index: number): Decision {
  if (dep.type === 'Package') return decidePackage(graph, node, dep)
  if (dep.type === 'GVK') return decideGVK(graph, node, dep)
  return decideAnyOf(graph, node, dep, index)
}

/** anyOf: the first alternative already met, else the one chosen before, else the first that can be met. */
function decideAnyOf(
  graph: PlanGraph,
  node: PlanNode,
  dep: Extract<Dependency, { type: 'AnyOf' }>,
  index: number,
): Decision {
  const name = dep.anyOf
    .map((a) => (a.type === 'Package' ? (a.version ? `${a.name} (${a.version})` : a.name) : gvkKey(a.gvk)))
    .join(' | ')
  const base = reportName(name, 'AnyOf', dep.optional)
  const decisions = dep.anyOf.map((alt) =>
    alt.type === 'Package'
      ? decidePackage(graph, node, { ...alt, optional: false })
      : decideGVK(graph, node, { ...alt, optional: false }),
  )
  const previous = node.choices?.get(index)
  const fulfilled = decisions.findIndex((d) => !d.effect && !d.conflict && d.report.state !== 'Skipped')
  const resolvable = decisions.findIndex((d) => d.effect && !d.conflict)
  const chosen =
    fulfilled >= 0 ? fulfilled : previous !== undefined && decisions[previous]?.effect ? previous : resolvable
  if (chosen >= 0) {
    const d = decisions[chosen]!
    return {
      ...d,
      choice: chosen,
      report: {
        ...d.report,
        ...base,
        message: `alternative ${chosen + 1} (${dep.anyOf.length > 1 ? 'of ' + dep.anyOf.length : 'only'}): ${d.report.message}`,
      },
    }
  }
  if (dep.optional && graph.policy.optional === 'Skip')
    return {
      report: {
        ...base,
        state: 'Skipped',
        message: `optional dependency ${name}: no alternative is installed; skipped`,
      },
    }
  const reasons = decisions.map((d, i) => `${i + 1}. ${d.report.message}`).join('; ')
  const missing = decisions.every((d) => d.report.state === 'Missing')
  const message = `no alternative of ${name} can be met: ${reasons}`
  return {
    report: { ...base, state: missing ? 'Missing' : 'Conflict', resolvable: false, message },
    conflict: {
      id: `${node.id}#anyOf`,
      package: name,
      namespace: node.namespace,
      required: name,
      resolvable: false,
      reason: missing ? 'Missing' : 'NoVersionSatisfiesAll',
      message,
    },
  }
}
