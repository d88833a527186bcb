/**
 * The plan from the graph as resolution left it: every dependency of every
 * node evaluated once more (its report, its conflict or a pre-existing
 * warning), then the conflicts of the graph as a whole (cycles, installation
 * types), the install / upgrade / downgrade / prune steps, dependencies-first
 * order and the per-target reports.
 */
import type { Dependency } from '../../api/dependencies.js'
import { append } from '../append.js'
import { walkGraph } from '../graph.js'
import type { Cycle } from '../graph.js'
import type { ChangeStep, DependencyReport, InstallStep, Plan, PlanIssue, PruneStep, TargetReport } from '../plan.js'
import { decide } from './decide.js'
import { changesPlan } from './decision.js'
import type { Decision } from './decision.js'
import { reportCycles, reportInstallationTypes } from './graph-conflicts.js'
import { byString, isChanged, nodeLabel } from './plan-graph.js'
import type { PlanGraph, PlanNode } from './plan-graph.js'
import { ConflictList } from './evaluated.js'
import type { Evaluated } from './evaluated.js'

export interface ReportOptions {
  /**
   * What to report of a dependency whose decision would still change the plan
   * (resolution left it out, or settled nothing): the decision to report instead.
   */
  unsettled: (decision: Decision, node: PlanNode, dep: Dependency) => Decision
}

/** An unsettled dependency reported as a conflict that no plan resolves. */
export function unsettledConflict(decision: Decision, node: PlanNode, message: string): Decision {
  const settled: Decision = {
    ...decision,
    report: { ...decision.report, state: 'Conflict', resolvable: false, message },
    conflict: {
      id: decision.to ?? decision.report.name,
      package: decision.report.name,
      namespace: node.namespace,
      required: decision.report.required ?? '',
      resolvable: false,
      reason: 'NoVersionSatisfiesAll',
      message,
    },
  }
  delete settled.effect
  return settled
}

export function report(graph: PlanGraph, targetIds: readonly string[], options: ReportOptions): Plan {
  const conflicts = new ConflictList()
  const issues = [...graph.issues]
  const evaluation = evaluateDependencies(graph, options, conflicts, issues)
  const { nodes, positions, edges } = evaluation
  for (const tc of graph.targetConflicts) {
    const { id: _id, ...rest } = tc
    void _id
    conflicts.add(rest)
  }

  // Cycles (rule 9) and dependencies-first order.
  // Targets first, so a cycle is reported on the package being checked.
  const targets = targetIds.map((id) => positions.get(id)!)
  const edgesOf = (i: number) => edges[i] ?? noEdges
  const { cycles, order } = walkGraph(nodes.length, [...targets, ...nodes.keys()], edgesOf, (to) => to)
  const ids = (cycle: Cycle<number>): Cycle => ({
    on: nodes[cycle.on]!.id,
    from: nodes[cycle.from]!.id,
    path: cycle.path.map((i) => nodes[i]!.id),
  })
  const closing = (from: string, on: string) =>
    evaluation.evaluated[positions.get(from)!]?.find((e) => e.target === positions.get(on))
  reportCycles(graph, cycles.map(ids), closing, conflicts, issues)
  reportInstallationTypes(graph, conflicts, issues)

  const { install, upgrade, downgrade } = planSteps(targets, evaluation)
  const prune = pruneSteps(nodes, edgesOf)
  const packages = targets.map((t) => targetReport(t, evaluation))
  const sorted = conflicts.list.sort(
    (a, b) => byString(a.package, b.package) || byString(a.requiredBy, b.requiredBy) || byString(a.message, b.message),
  )
  const planOrder = order.filter((i) => isChanged(nodes[i]!)).map((i) => nodes[i]!.id)
  const result =
    sorted.length > 0 || issues.some((i) => i.severity === 'error')
      ? 'CONFLICT'
      : install.length + upgrade.length + downgrade.length > 0
        ? 'RESOLVABLE'
        : 'OK'
  return { result, packages, install, upgrade, downgrade, prune, order: planOrder, conflicts: sorted, issues }
}

const noEdges: readonly number[] = []

/**
 * Every dependency evaluated, by node: the nodes in id order and, by their
 * position there (arrays, not maps keyed by id: the report walks every node
 * several times), what their dependencies say, which nodes they lead to and
 * who requires them.
 */
interface Evaluation {
  nodes: readonly PlanNode[]
  positions: Map<string, number>
  evaluated: (Evaluated[] | undefined)[]
  /** The other present nodes a node's dependencies resolve to, in dependency order (the graph's edges). */
  edges: (number[] | undefined)[]
  /** The labels of the nodes that require a node (a label may repeat). */
  requiredBy: (string[] | undefined)[]
}

/**
 * Every dependency of every node, in id order: its report, and its conflict
 * where the plan is to blame (a pre-existing problem between untouched
 * installations is a warning). Also the graph's edges and who requires each node.
 */
function evaluateDependencies(
  graph: PlanGraph,
  options: ReportOptions,
  conflicts: ConflictList,
  issues: PlanIssue[],
): Evaluation {
  const nodes = graph.sortedNodes()
  const positions = new Map<string, number>()
  nodes.forEach((n, i) => positions.set(n.id, i))
  const evaluated: Evaluation['evaluated'] = new Array<Evaluation['evaluated'][number]>(nodes.length)
  const edges: Evaluation['edges'] = new Array<Evaluation['edges'][number]>(nodes.length)
  const requiredBy: Evaluation['requiredBy'] = new Array<Evaluation['requiredBy'][number]>(nodes.length)
  nodes.forEach((node, at) => {
    const label = nodeLabel(node.package, node.namespace, node.version?.raw)
    const transitive = node.action !== 'target'
    node.deps.forEach((dep, i) => {
      let decision = decide(graph, node, dep, i)
      if (changesPlan(decision)) decision = options.unsettled(decision, node, dep)
      const report: DependencyReport = { requiredBy: label, ...decision.report, transitive }
      if (dep.declaredAt) report.declaredAt = dep.declaredAt
      const to = decision.to
      const target = to === undefined ? undefined : positions.get(to)
      evaluated[at] = append(evaluated[at], { target, dep, report })
      if (target !== undefined) {
        requiredBy[target] = append(requiredBy[target], label)
        if (target !== at) edges[at] = append(edges[at], target)
      }
      if (report.preExisting) {
        issues.push({
          severity: 'warning',
          package: node.package,
          message: `${label}: ${report.message}`,
          ...(dep.declaredAt ? { declaredAt: dep.declaredAt } : {}),
        })
        return
      }
      if (decision.conflict && (isChanged(node) || target === undefined || isChanged(nodes[target]!))) {
        const { id: _id, ...rest } = decision.conflict
        void _id
        const constraints = constraintList(graph, to, decision.conflict.package)
        conflicts.add({
          ...rest,
          requiredBy: label,
          constraints,
          ...(dep.declaredAt ? { declaredAt: dep.declaredAt } : {}),
        })
      } else if (decision.conflict) {
        issues.push({
          severity: 'warning',
          package: node.package,
          message: `${label}: ${report.message} (pre-existing)`,
        })
      }
    })
  })
  return { nodes, positions, evaluated, edges, requiredBy }
}

/** Every range on the dependency's node (or, with no node, on its package), as the conflict lists them. */
function constraintList(graph: PlanGraph, to: string | undefined, pkg: string): { from: string; range: string }[] {
  const node = to ? graph.nodes.get(to) : undefined
  const list = node ? graph.rangesOn(node) : (graph.ranges.get(pkg) ?? [])
  return list
    .map((r) => ({
      from: nodeLabel(r.from.package, r.from.namespace, r.from.version?.raw),
      range: r.constraint.display,
    }))
    .sort((a, b) => byString(a.from, b.from) || byString(a.range, b.range))
}

/** The install, upgrade and downgrade steps, each with who requires it, by package and namespace. */
function planSteps(
  targets: readonly number[],
  { nodes, requiredBy }: Evaluation,
): { install: InstallStep[]; upgrade: ChangeStep[]; downgrade: ChangeStep[] } {
  const labels = (i: number) => {
    const list = requiredBy[i]
    if (!list) return []
    return list.length === 1 ? [list[0]!] : [...new Set(list)].sort(byString)
  }
  const targetLabels = new Set(
    targets.map((t) => {
      const n = nodes[t]!
      return nodeLabel(n.package, n.namespace, n.version?.raw)
    }),
  )
  const install: InstallStep[] = []
  const upgrade: ChangeStep[] = []
  const downgrade: ChangeStep[] = []
  nodes.forEach((n, i) => {
    if (n.action === 'install') {
      const by = labels(i)
      install.push({
        package: n.package,
        version: n.version!.raw,
        namespace: n.namespace,
        requiredBy: by,
        transitive: !by.some((l) => targetLabels.has(l)),
      })
    } else if (n.action === 'upgrade' || n.action === 'downgrade') {
      const step = {
        package: n.package,
        namespace: n.namespace,
        from: n.installed!.version.raw,
        to: n.version!.raw,
        requiredBy: labels(i),
      }
      ;(n.action === 'upgrade' ? upgrade : downgrade).push(step)
    }
  })
  const byPlace = (a: { package: string; namespace: string }, b: { package: string; namespace: string }) =>
    byString(a.package, b.package) || byString(a.namespace, b.namespace)
  return { install: install.sort(byPlace), upgrade: upgrade.sort(byPlace), downgrade: downgrade.sort(byPlace) }
}

/** Rule 10: repeatedly drop untouched dependency installations that nothing requires. */
function pruneSteps(nodes: readonly PlanNode[], edges: (i: number) => readonly number[]): PruneStep[] {
  const inbound = new Int32Array(nodes.length)
  for (let i = 0; i < nodes.length; i++) for (const to of edges(i)) inbound[to]!++
  const queued = new Uint8Array(nodes.length)
  const prunable = (i: number) =>
    queued[i] === 0 && inbound[i] === 0 && nodes[i]!.action === 'keep' && !!nodes[i]!.installed?.asDependency
  const queue: number[] = []
  for (let i = 0; i < nodes.length; i++) if (prunable(i)) queue.push(i)
  for (const i of queue) queued[i] = 1
  const pruned: PruneStep[] = []
  for (let head = 0; head < queue.length; head++) {
    const next = nodes[queue[head]!]!
    pruned.push({ package: next.package, namespace: next.namespace, name: next.installed!.name })
    for (const to of edges(queue[head]!)) {
      inbound[to]!--
      if (prunable(to)) {
        queued[to] = 1
        queue.push(to)
      }
    }
  }
  return pruned.sort((a, b) => byString(a.package, b.package) || byString(a.namespace, b.namespace))
}

/** One target: its own dependencies, then those of the changed packages it pulls in (transitive). */
function targetReport(target: number, { nodes, evaluated }: Evaluation): TargetReport {
  const node = nodes[target]!
  const dependencies: DependencyReport[] = []
  const seen = new Uint8Array(nodes.length)
  seen[target] = 1
  const queue = [target]
  for (let head = 0; head < queue.length; head++) {
    for (const e of evaluated[queue[head]!] ?? []) {
      dependencies.push(e.report)
      const to = e.target
      if (to !== undefined && seen[to] === 0 && nodes[to]!.action !== 'keep' && nodes[to]!.action !== 'target') {
        seen[to] = 1
        queue.push(to)
      }
    }
  }
  return {
    package: node.package,
    namespace: node.namespace,
    ...(node.version ? { version: node.version.raw } : {}),
    dependencies,
  }
}
