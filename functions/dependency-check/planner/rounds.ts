/**
 * Edge-by-edge rounds, for an input with no plan: starting from the targets,
 * each round evaluates the dependencies of the nodes marked dirty and applies
 * what they decide (an install, an upgrade, a re-chosen version). A changed
 * node marks itself and its dependants for the next round, so a diamond's
 * ranges are all registered before a shared version is picked. The report
 * over the graph they leave names the dependencies that fail and why.
 */
import { decide } from './decide.js'
import type { Effect } from './decision.js'
import { byString, nodeId } from './plan-graph.js'
import type { PlanGraph, PlanNode } from './plan-graph.js'

/** How often the rounds may change one node's version: the bound that makes them end. */
export const maxChanges = 4

/** Runs rounds from the targets until nothing changes, then drops the installs nobody requires. */
export function diagnose(graph: PlanGraph, targetIds: readonly string[]): void {
  const rounds = new EdgeRounds(graph)
  // Ends: each round installs a new node or changes a version, at most maxChanges times per node.
  for (let dirty = new Set(targetIds); dirty.size > 0;) dirty = rounds.round(dirty)
  rounds.dropUnrequiredInstalls()
}

export class EdgeRounds {
  /** Package → ids of nodes whose GVK / anyOf dependency resolved to it (re-evaluated when it changes). */
  private readonly apiDependants = new Map<string, Set<string>>()
  /** Some evaluated node's dependencies were replaced, so planned installs may be orphaned. */
  private mayOrphan = false

  constructor(private readonly graph: PlanGraph) {}

  /** Evaluates the dependencies of the `dirty` nodes and applies their effects; returns the nodes to evaluate next. */
  round(dirty: ReadonlySet<string>): Set<string> {
    const { graph } = this
    const next = new Set<string>()
    const fresh: PlanNode[] = []
    for (const id of [...dirty].sort(byString)) {
      const node = graph.nodes.get(id)
      if (!node) continue
      node.evaluated = true
      node.deps.forEach((dep, i) => {
        const decision = decide(graph, node, dep, i)
        if (decision.choice !== undefined && node.choices?.get(i) !== decision.choice) {
          if (node.choices?.has(i)) this.mayOrphan = true
          graph.choose(node, i, decision.choice)
        }
        if (decision.to && dep.type !== 'Package') {
          const pkg =
            graph.nodes.get(decision.to)?.package ??
            (decision.effect?.kind === 'install' ? decision.effect.package : undefined)
          if (pkg) {
            const set = this.apiDependants.get(pkg)
            if (set) set.add(node.id)
            else this.apiDependants.set(pkg, new Set([node.id]))
          }
        }
        if (decision.effect) this.apply(decision.effect, next, fresh)
      })
    }
    for (const node of fresh) graph.register(node)
    return next
  }

  private apply(effect: Effect, next: Set<string>, fresh: PlanNode[]): void {
    const { graph } = this
    if (effect.kind === 'install') {
      const id = nodeId(effect.package, effect.namespace)
      if (graph.nodes.has(id)) return
      const entry = graph.catalog.packages.get(effect.package)
      const node: PlanNode = {
        id,
        package: effect.package,
        namespace: effect.namespace,
        action: 'install',
        version: effect.version.version,
        deps: effect.version.spec.dependencies,
        provides: effect.version.spec.provides,
        installationType: effect.version.spec.installationType ?? entry?.installationType ?? 'NoRestrictions',
        changes: 0,
      }
      graph.addNode(node)
      fresh.push(node)
      next.add(id)
      return
    }
    const { node } = effect
    if (node.changes >= maxChanges) return
    node.changes++
    if (node.evaluated) this.mayOrphan = true
    graph.nodeChanged()
    graph.unregister(node)
    node.action = effect.action
    node.choices?.clear()
    if (effect.version) {
      node.version = effect.version.version
      node.deps = effect.version.spec.dependencies
      node.provides = effect.version.spec.provides
    } else if (node.installed) {
      node.version = node.installed.version
      node.deps = node.installed.deps
      node.provides = node.installed.provides
    }
    graph.register(node)
    next.add(node.id)
    for (const r of graph.ranges.get(node.package) ?? []) next.add(r.from.id)
    for (const id of this.apiDependants.get(node.package) ?? []) next.add(id)
  }

  /**
   * Planned installs nobody requires any more (a dependant was re-chosen) are
   * dropped, repeatedly, with inbound counts (one pass over the edges).
   */
  dropUnrequiredInstalls(): void {
    if (!this.mayOrphan) return
    const { graph } = this
    const out = new Map<string, string[]>()
    const inbound = new Map<string, number>()
    for (const node of graph.nodes.values()) {
      const edges = this.edgesOf(node)
      out.set(node.id, edges)
      for (const to of edges) inbound.set(to, (inbound.get(to) ?? 0) + 1)
    }
    const queue = graph.sortedNodes().filter((n) => n.action === 'install' && !inbound.get(n.id))
    while (queue.length > 0) {
      const orphan = queue.shift()!
      graph.removeNode(orphan)
      for (const to of out.get(orphan.id) ?? []) {
        const left = (inbound.get(to) ?? 1) - 1
        inbound.set(to, left)
        const n = graph.nodes.get(to)
        if (left === 0 && n?.action === 'install') queue.push(n)
      }
    }
  }

  /** The node ids a node's dependencies resolve to (final state). */
  private edgesOf(node: PlanNode): string[] {
    const out: string[] = []
    node.deps.forEach((dep, i) => {
      const to = decide(this.graph, node, dep, i).to
      if (to && this.graph.nodes.has(to) && to !== node.id) out.push(to)
    })
    return out
  }
}
