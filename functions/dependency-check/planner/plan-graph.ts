/**
 * The planner's working graph: one node per installation (a package in a
 * scope), the ranges the nodes' package dependencies put on one another, and
 * the look-ups every decision needs (a dependency's scope, the ranges on a
 * node, the providers of an API). Building, resolution and diagnosis change
 * nodes through it; the report reads it.
 */
import type { Dependency, DependencyPolicy, GVK, InstallationType, PackageDependency } from '../../api/dependencies.js'
import { append } from '../append.js'
import { parseConstraint } from '../constraints.js'
import type { Constraint } from '../constraints.js'
import { gvkKey } from '../graph.js'
import type { CatalogIndex } from '../graph.js'
import type { Conflict, PlanIssue } from '../plan.js'
import type { Version } from '../versions.js'

/** What the plan does to a node: `keep` an installation as it is, or the step that changes it. */
export type Action = 'keep' | 'install' | 'upgrade' | 'downgrade' | 'target'

export interface PlanNode {
  id: string
  package: string
  namespace: string
  installed?: { name: string; version: Version; asDependency: boolean; deps: Dependency[]; provides: GVK[] }
  action: Action
  version?: Version
  deps: Dependency[]
  provides: GVK[]
  installationType: InstallationType
  /** How often the diagnosis rounds changed its version (bounded, so the rounds end). */
  changes: number
  /** anyOf dependency index → chosen alternative index (made on the first choice: most nodes have no anyOf). */
  choices?: Map<number, number>
  /** Package names this node's ranges are registered under (for a quick unregister). */
  registered?: string[]
  /** Its dependencies were evaluated (and may have planned installs). */
  evaluated?: boolean
}

/** A registered range: `from` requires `name` with `constraint`. */
export interface RangeEdge {
  from: PlanNode
  constraint: Constraint
  raw: string
}

/** `name@version`, namespaced `ns/name@version`; without a version just the name. */
export function nodeLabel(pkg: string, namespace: string, version?: string): string {
  const name = namespace ? `${namespace}/${pkg}` : pkg
  return version ? `${name}@${version}` : name
}

export function nodeId(pkg: string, namespace: string): string {
  return namespace ? `${namespace}/${pkg}` : pkg
}

/** The node is changed by the plan (a target, an install, an upgrade or a downgrade). */
export function isChanged(n: PlanNode): boolean {
  return n.action !== 'keep'
}

export function byString(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

export class PlanGraph {
  readonly nodes = new Map<string, PlanNode>()
  /** Package → its nodes, by namespace. */
  readonly byPackage = new Map<string, PlanNode[]>()
  /** Package → every registered range on it. */
  readonly ranges = new Map<string, RangeEdge[]>()
  /** Problems of the input, reported as they are. */
  readonly issues: PlanIssue[] = []
  /** Targets that cannot be planned at all (package or version missing). */
  readonly targetConflicts: (Conflict & { id: string })[] = []
  /** Node id → the installations of the same package and namespace that were ignored (duplicates). */
  readonly duplicates = new Map<string, { name: string; version: string }[]>()
  private providerCache: Map<string, PlanNode[]> | undefined
  /** The nodes by id, until a node is added or removed (a new array then: one being iterated stays as it was). */
  private sorted: readonly PlanNode[] | undefined
  private installedProvides: Map<string, string[]> | undefined

  constructor(
    readonly catalog: CatalogIndex,
    readonly policy: DependencyPolicy,
    readonly clusterAPIs: Set<string>,
  ) {}

  addNode(node: PlanNode): void {
    this.providerCache = undefined
    this.sorted = undefined
    this.nodes.set(node.id, node)
    const list = this.byPackage.get(node.package)
    if (list) {
      list.push(node)
      list.sort((a, b) => byString(a.namespace, b.namespace))
    } else this.byPackage.set(node.package, [node])
  }

  removeNode(node: PlanNode): void {
    this.unregister(node)
    this.providerCache = undefined
    this.sorted = undefined
    this.nodes.delete(node.id)
    const rest = (this.byPackage.get(node.package) ?? []).filter((n) => n !== node)
    if (rest.length > 0) this.byPackage.set(node.package, rest)
    else this.byPackage.delete(node.package)
  }

  /** A node's version or API changed: who provides which API is looked up again. */
  nodeChanged(): void {
    this.providerCache = undefined
  }

  /** Every node by id; the report and each stage walk them in this order many times, so it is sorted once per change of the node set. */
  sortedNodes(): readonly PlanNode[] {
    return (this.sorted ??= [...this.nodes.values()].sort((a, b) => byString(a.id, b.id)))
  }

  // ---- ranges ---------------------------------------------------------------

  /** Registers the node's package-dependency ranges (chosen anyOf alternatives included). */
  register(node: PlanNode): void {
    node.deps.forEach((dep, i) => {
      const pkgDep = dep.type === 'Package' ? dep : dep.type === 'AnyOf' ? this.chosenPackage(node, dep, i) : undefined
      if (!pkgDep) return
      const parsed = parseConstraint(pkgDep.version)
      if (!parsed.ok) return
      const list = this.ranges.get(pkgDep.name)
      const edge = { from: node, constraint: parsed.constraint, raw: pkgDep.version }
      if (list) list.push(edge)
      else this.ranges.set(pkgDep.name, [edge])
      node.registered = append(node.registered, pkgDep.name)
    })
  }

  unregister(node: PlanNode): void {
    if (!node.registered?.length) return
    for (const name of new Set(node.registered)) {
      const list = this.ranges.get(name)
      if (list)
        this.ranges.set(
          name,
          list.filter((r) => r.from !== node),
        )
    }
    node.registered = undefined
  }

  /** Chooses an anyOf alternative, so its range counts from now on. */
  choose(node: PlanNode, index: number, choice: number): void {
    this.unregister(node)
    node.choices ??= new Map()
    node.choices.set(index, choice)
    this.register(node)
  }

  private chosenPackage(
    node: PlanNode,
    dep: Extract<Dependency, { type: 'AnyOf' }>,
    index: number,
  ): PackageDependency | undefined {
    const choice = node.choices?.get(index)
    const alt = choice === undefined ? undefined : dep.anyOf[choice]
    return alt?.type === 'Package' ? alt : undefined
  }

  /** Where a dependency of a package in `namespace` on `pkg` lives (see README, "Scopes"). */
  scope(pkg: string, namespace: string): string {
    const own = nodeId(pkg, namespace)
    if (this.nodes.has(own)) return own
    const cluster = nodeId(pkg, '')
    if (this.nodes.has(cluster)) return cluster
    const entry = this.catalog.packages.get(pkg)
    const existing = this.byPackage.get(pkg)
    if (entry?.installationType === 'OnePerCluster') return existing?.[0]?.id ?? cluster
    return own
  }

  /** The namespace a new installation of `pkg` needed by a package in `namespace` goes to. */
  installNamespace(pkg: string, namespace: string): string {
    return this.catalog.packages.get(pkg)?.installationType === 'OnePerCluster' ? '' : namespace
  }

  /** The ranges C(D) on the node `id` would be: every present dependant's whose scope resolves to it. */
  rangesOn(node: { package: string; id: string }): RangeEdge[] {
    return (this.ranges.get(node.package) ?? []).filter((r) => this.scope(node.package, r.from.namespace) === node.id)
  }

  // ---- APIs -------------------------------------------------------------------

  /** Present nodes providing a GVK, by id (cached; invalidated whenever a node changes). */
  providersOf(key: string): PlanNode[] {
    if (!this.providerCache) {
      this.providerCache = new Map()
      for (const n of this.sortedNodes()) {
        if (!n.version) continue
        for (const g of n.provides) {
          const k = gvkKey(g)
          const list = this.providerCache.get(k)
          if (!list) this.providerCache.set(k, [n])
          else if (!list.includes(n)) list.push(n)
        }
      }
    }
    return this.providerCache.get(key) ?? []
  }

  /** GVK key → the installations whose installed version provides it (labels, in id order); computed once. */
  servedBefore(): Map<string, string[]> {
    if (!this.installedProvides) {
      this.installedProvides = new Map()
      for (const n of this.sortedNodes()) {
        if (!n.installed) continue
        for (const key of new Set(n.installed.provides.map(gvkKey))) {
          const label = nodeLabel(n.package, n.namespace, n.installed.version.raw)
          const list = this.installedProvides.get(key)
          if (list) list.push(label)
          else this.installedProvides.set(key, [label])
        }
      }
    }
    return this.installedProvides
  }
}
