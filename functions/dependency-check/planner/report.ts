/**
 * The plan from the graph as resolution left it: every dependency of every
 * node evaluated once more (its report, its conflict or a pre-existing
 * warning), then the conflicts of the graph as a whole (cycles, installation
 * types), the install / upgrade / downgrade / prune steps, dependencies-first
 * order and the per-target reports.
 */
import type { Dependency } from '../../api/dependencies.js'
import { walkGraph } from '../graph.js'
import type { ChangeStep, Conflict, DependencyReport, InstallStep, Plan, PlanIssue, PruneStep, TargetReport } from '../plan.js'
import { decide } from './decide.js'
import { changesPlan } from './decision.js'
import type { Decision } from './decision.js'
import { reportCycles, reportInstallationTypes } from './graph-conflicts.js'
import { byString, isChanged, nodeLabel } from './plan-graph.js'
import type { PlanGraph, PlanNode } from './plan-graph.js'

export interface ReportOptions {
  /**
   * What to report of a dependency whose decision would still change the plan
   * (resolution left it out, or settled nothing): the decision to report instead.
   */
  unsettled: (decision: Decision, node: PlanNode, dep: Dependency) => Decision
}

/** One dependency of one node as the report evaluated it. */
export interface Evaluated {
  decision: Decision
  dep: Dependency
  report: DependencyReport
}

/** The plan's conflicts, each once (by package, namespace, dependant, reason and message). */
export class ConflictList {
  readonly list: Conflict[] = []
  private readonly keys = new Set<string>()

  add(conflict: Conflict): void {
    const key = `${conflict.package}\0${conflict.namespace}\0${conflict.requiredBy}\0${conflict.reason}\0${conflict.message}`
    if (this.keys.has(key)) return
    this.keys.add(key)
    this.list.push(conflict)
  }
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
  const { evaluated, edges, requiredBy } = evaluateDependencies(graph, options, conflicts, issues)
  for (const tc of graph.targetConflicts) {
    const { id: _id, ...rest } = tc
    void _id
    conflicts.add(rest)
  }

  // Cycles (rule 9) and dependencies-first order.
  // Targets first, so a cycle is reported on the package being checked.
  const targets = new Set(targetIds)
  const ids = [...targetIds]
  for (const n of graph.sortedNodes()) if (!targets.has(n.id)) ids.push(n.id)
  const edgesOf = (id: string) => edges.get(id) ?? []
  const { cycles, order } = walkGraph(ids, edgesOf)
  reportCycles(graph, cycles, evaluated, conflicts, issues)
  reportInstallationTypes(graph, conflicts, issues)

  const { install, upgrade, downgrade } = planSteps(graph, targetIds, requiredBy)
  const prune = pruneSteps(graph, edgesOf)
  const packages = targetReports(graph, targetIds, evaluated)
  const sorted = conflicts.list.sort((a, b) => byString(a.package, b.package) || byString(a.requiredBy, b.requiredBy) || byString(a.message, b.message))
  const planOrder = order.filter((id) => isChanged(graph.nodes.get(id)!))
  const result = sorted.length > 0 || issues.some((i) => i.severity === 'error') ? 'CONFLICT' : install.length + upgrade.length + downgrade.length > 0 ? 'RESOLVABLE' : 'OK'
  return { result, packages, install, upgrade, downgrade, prune, order: planOrder, conflicts: sorted, issues }
}

/** What evaluating every dependency yields besides conflicts and issues. */
interface Evaluation {
  evaluated: Map<string, Evaluated[]>
  /** Node id → the other present nodes its dependencies resolve to, in dependency order (the graph's edges). */
  edges: Map<string, string[]>
  /** Node id → the labels of the nodes that require it (a label may repeat). */
  requiredBy: Map<string, string[]>
}

/**
 * Every dependency of every node, in id order: its report, and its conflict
 * where the plan is to blame (a pre-existing problem between untouched
 * installations is a warning). Also the graph's edges and who requires each node.
 */
function evaluateDependencies(graph: PlanGraph, options: ReportOptions, conflicts: ConflictList, issues: PlanIssue[]): Evaluation {
  const evaluated = new Map<string, Evaluated[]>()
  const edges = new Map<string, string[]>()
  const requiredBy = new Map<string, string[]>()
  for (const node of graph.sortedNodes()) {
    const label = nodeLabel(node.package, node.namespace, node.version?.raw)
    const list: Evaluated[] = []
    const out: string[] = []
    const transitive = node.action !== 'target'
    node.deps.forEach((dep, i) => {
      let decision = decide(graph, node, dep, i)
      if (changesPlan(decision)) decision = options.unsettled(decision, node, dep)
      const report: DependencyReport = { requiredBy: label, ...decision.report, transitive }
      if (dep.declaredAt) report.declaredAt = dep.declaredAt
      list.push({ decision, dep, report })
      const to = decision.to
      if (to !== undefined) {
        const by = requiredBy.get(to)
        if (by) by.push(label)
        else requiredBy.set(to, [label])
        if (to !== node.id && graph.nodes.has(to)) out.push(to)
      }
      if (report.preExisting) {
        issues.push({ severity: 'warning', package: node.package, message: `${label}: ${report.message}`, ...(dep.declaredAt ? { declaredAt: dep.declaredAt } : {}) })
        return
      }
      if (decision.conflict && (isChanged(node) || to === undefined || isChanged(graph.nodes.get(to)!))) {
        const { id: _id, ...rest } = decision.conflict
        void _id
        const constraints = constraintList(graph, to, decision.conflict.package)
        conflicts.add({ ...rest, requiredBy: label, constraints, ...(dep.declaredAt ? { declaredAt: dep.declaredAt } : {}) })
      } else if (decision.conflict) {
        issues.push({ severity: 'warning', package: node.package, message: `${label}: ${report.message} (pre-existing)` })
      }
    })
    evaluated.set(node.id, list)
    if (out.length > 0) edges.set(node.id, out)
  }
  return { evaluated, edges, requiredBy }
}

/** Every range on the dependency's node (or, with no node, on its package), as the conflict lists them. */
function constraintList(graph: PlanGraph, to: string | undefined, pkg: string): { from: string; range: string }[] {
  const node = to ? graph.nodes.get(to) : undefined
  const list = node ? graph.rangesOn(node) : (graph.ranges.get(pkg) ?? [])
  return list
    .map((r) => ({ from: nodeLabel(r.from.package, r.from.namespace, r.from.version?.raw), range: r.constraint.display }))
    .sort((a, b) => byString(a.from, b.from) || byString(a.range, b.range))
}

/** The install, upgrade and downgrade steps, each with who requires it, by package and namespace. */
function planSteps(graph: PlanGraph, targetIds: readonly string[], requiredBy: Map<string, string[]>): { install: InstallStep[]; upgrade: ChangeStep[]; downgrade: ChangeStep[] } {
  const labels = (id: string) => {
    const list = requiredBy.get(id)
    if (!list) return []
    return list.length === 1 ? [...list] : [...new Set(list)].sort(byString)
  }
  const targetLabels = new Set(
    targetIds.map((id) => {
      const n = graph.nodes.get(id)!
      return nodeLabel(n.package, n.namespace, n.version?.raw)
    }),
  )
  const install: InstallStep[] = []
  const upgrade: ChangeStep[] = []
  const downgrade: ChangeStep[] = []
  for (const n of graph.sortedNodes()) {
    if (n.action === 'install') {
      const by = labels(n.id)
      install.push({ package: n.package, version: n.version!.raw, namespace: n.namespace, requiredBy: by, transitive: !by.some((l) => targetLabels.has(l)) })
    } else if (n.action === 'upgrade' || n.action === 'downgrade') {
      const step = { package: n.package, namespace: n.namespace, from: n.installed!.version.raw, to: n.version!.raw, requiredBy: labels(n.id) }
      ;(n.action === 'upgrade' ? upgrade : downgrade).push(step)
    }
  }
  const byPlace = (a: { package: string; namespace: string }, b: { package: string; namespace: string }) => byString(a.package, b.package) || byString(a.namespace, b.namespace)
  return { install: install.sort(byPlace), upgrade: upgrade.sort(byPlace), downgrade: downgrade.sort(byPlace) }
}

/** Rule 10: repeatedly drop untouched dependency installations that nothing requires. */
function pruneSteps(graph: PlanGraph, edges: (id: string) => string[]): PruneStep[] {
  const inbound = new Map<string, number>()
  for (const id of graph.nodes.keys()) for (const to of edges(id)) inbound.set(to, (inbound.get(to) ?? 0) + 1)
  const prunable = (n: PlanNode | undefined) => !!n && n.action === 'keep' && !!n.installed?.asDependency && (inbound.get(n.id) ?? 0) === 0
  const pruned: PruneStep[] = []
  const queue = graph.sortedNodes().filter(prunable)
  while (queue.length > 0) {
    const next = queue.shift()!
    pruned.push({ package: next.package, namespace: next.namespace, name: next.installed!.name })
    for (const to of edges(next.id)) {
      inbound.set(to, (inbound.get(to) ?? 1) - 1)
      const n = graph.nodes.get(to)
      if (prunable(n) && !queue.includes(n!)) queue.push(n!)
    }
  }
  return pruned.sort((a, b) => byString(a.package, b.package) || byString(a.namespace, b.namespace))
}

/** Per target: its own dependencies, then those of the changed packages it pulls in (transitive). */
function targetReports(graph: PlanGraph, targetIds: readonly string[], evaluated: Map<string, Evaluated[]>): TargetReport[] {
  return targetIds.map((id) => {
    const node = graph.nodes.get(id)!
    const dependencies: DependencyReport[] = []
    const seen = new Set<string>([id])
    const queue = [id]
    while (queue.length > 0) {
      const current = queue.shift()!
      for (const e of evaluated.get(current) ?? []) {
        dependencies.push(e.report)
        const to = e.decision.to
        if (to && !seen.has(to) && graph.nodes.has(to) && graph.nodes.get(to)!.action !== 'keep' && graph.nodes.get(to)!.action !== 'target') {
          seen.add(to)
          queue.push(to)
        }
      }
    }
    return { package: node.package, namespace: node.namespace, ...(node.version ? { version: node.version.raw } : {}), dependencies }
  })
}
