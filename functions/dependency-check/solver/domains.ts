/**
 * The variables and their finite domains.
 *
 * One variable per installation (package + scope, as the planner names
 * nodes). Its values: a target's version(s); an installed package's installed
 * version ("keep") plus the catalog versions the upgrade / downgrade policies
 * allow; any other package "not installed" plus every catalog version the
 * prerelease and incomplete-version policies admit.
 */
import type { Dependency } from '../../api/dependencies.js'
import { candidateAdmitted, parseConstraint, satisfies } from '../constraints.js'
import type { Constraint } from '../constraints.js'
import { gvkKey } from '../graph.js'
import type { IndexedPackage, IndexedVersion } from '../graph.js'
import { compareVersions, isPrerelease, isUpgrade } from '../versions.js'
import type { Term } from './incompatibility.js'
import { ValueSet } from './value-set.js'
import { absentValue, ModelVariable } from './variables.js'
import type { ModelContext, ModelNode, Value, Variable } from './variables.js'

function nodeId(pkg: string, namespace: string): string {
  return namespace ? `${namespace}/${pkg}` : pkg
}

/** The variables, found from the starting nodes, and the sets of their values the rules name. */
export class Domains {
  readonly variables: Variable[] = []
  readonly byId = new Map<string, number>()
  private readonly existing: Map<string, ModelNode>
  private readonly existingByPackage = new Map<string, ModelNode[]>()
  private readonly prereleaseRanges = new Map<string, Constraint[]>()
  /** Package → the digests some constraint pins it to. */
  private readonly digestPins = new Map<string, Set<string>>()
  private readonly providers = new Map<string, number[]>()
  /** scope() answers by namespace, then package. */
  private readonly scopes = new Map<string, Map<string, string>>()

  constructor(
    private readonly nodes: readonly ModelNode[],
    readonly context: ModelContext,
  ) {
    this.existing = new Map(nodes.map((n) => [n.id, n]))
    for (const n of nodes) {
      const list = this.existingByPackage.get(n.package) ?? []
      list.push(n)
      this.existingByPackage.set(
        n.package,
        list.sort((a, b) => (a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : 0)),
      )
    }
  }

  /** Adds the starting nodes' variables, then every installation some value's dependency can reach. */
  discover(): void {
    this.collectPrereleaseRanges()
    for (const node of this.nodes) this.addExisting(node)
    // (Indexed loops: this runs once per plan, mostly before it is optimised, where for-of allocates.)
    for (let v = 0; v < this.variables.length; v++) {
      const { values, namespace } = this.variables[v]!
      for (let i = 0; i < values.length; i++) {
        const deps = values[i]!.deps
        for (let d = 0; d < deps.length; d++) this.reach(deps[d]!, namespace)
      }
    }
  }

  /**
   * Ranges that name a prerelease admit it (the Masterminds group rule), and
   * constraints that name a digest admit it (a digest is installed only where
   * pinned), wherever they appear.
   */
  private collectPrereleaseRanges(): void {
    const note = (dep: Dependency): void => {
      if (dep.type === 'AnyOf') return dep.anyOf.forEach(note)
      if (dep.type !== 'Package') return
      const parsed = parseConstraint(dep.version)
      if (parsed.ok && parsed.constraint.kind === 'digest') {
        const pins = this.digestPins.get(dep.name) ?? new Set<string>()
        this.digestPins.set(dep.name, pins.add(parsed.constraint.digest))
        return
      }
      if (
        !parsed.ok ||
        parsed.constraint.kind !== 'range' ||
        !parsed.constraint.branches.some((b) => b.namesPrerelease)
      )
        return
      const list = this.prereleaseRanges.get(dep.name) ?? []
      if (!list.includes(parsed.constraint)) list.push(parsed.constraint)
      this.prereleaseRanges.set(dep.name, list)
    }
    this.context.catalog.packages.forEach((entry) => {
      for (const v of entry.versions) v.spec.dependencies.forEach(note)
    })
    for (const n of this.nodes) {
      n.installed?.deps.forEach(note)
      for (const t of n.target?.values ?? []) t.deps.forEach(note)
    }
  }

  private admitted(entry: IndexedPackage, v: IndexedVersion): boolean {
    const policy = this.context.policy
    if (v.version.coerced && policy.incompleteVersions !== 'Coerce') return false
    if (v.version.digest) return this.digestPins.get(entry.name)?.has(v.version.digest) ?? false
    return (
      !isPrerelease(v.version) ||
      candidateAdmitted(v.version, policy.prereleases, this.prereleaseRanges.get(entry.name) ?? [])
    )
  }

  private addVariable(variable: Omit<Variable, 'valueLabels' | 'label' | 'incoming'>): number {
    const index = this.variables.length
    // A copy of the values that were pushed one by one: exactly their size (see append.ts), since every variable lives to the end.
    this.variables.push(
      new ModelVariable(variable.id, variable.package, variable.namespace, variable.values.slice(), variable.order),
    )
    this.byId.set(variable.id, index)
    return index
  }

  private addExisting(node: ModelNode): void {
    const entry = this.context.catalog.packages.get(node.package)
    const { policy } = this.context
    if (node.target) {
      const values: Value[] = node.target.values.map((t) => ({
        kind: 'target',
        ...(t.version ? { version: t.version } : {}),
        ...(t.indexed ? { indexed: t.indexed } : {}),
        deps: t.deps,
        provides: t.provides,
      }))
      this.addVariable({
        id: node.id,
        package: node.package,
        namespace: node.namespace,
        values,
        order: values.map((_, i) => i),
      })
      return
    }
    const installed = node.installed!
    const values: Value[] = [
      { kind: 'keep', version: installed.version, deps: installed.deps, provides: installed.provides },
    ]
    const up: number[] = []
    const down: number[] = []
    for (const v of entry?.versions ?? []) {
      if (!this.admitted(entry!, v)) continue
      if (compareVersions(v.version, installed.version) === 0) continue
      const upgrade = isUpgrade(installed.version, v.version)
      if ((upgrade && policy.upgrades !== 'Allow') || (!upgrade && policy.downgrades !== 'Allow')) continue
      ;(upgrade ? up : down).push(values.length)
      values.push({
        kind: 'change',
        version: v.version,
        indexed: v,
        deps: v.spec.dependencies,
        provides: v.spec.provides,
      })
    }
    const highestFirst = up.slice().reverse()
    const ups = policy.upgradeTarget === 'Lowest' ? up : highestFirst
    // autoUpgrade: a dependency takes the highest version every range admits, keeping its own only when none does.
    const newest = policy.autoUpgrade === 'Dependencies' && installed.asDependency === true
    this.addVariable({
      id: node.id,
      package: node.package,
      namespace: node.namespace,
      values,
      order: newest ? [...highestFirst, 0, ...down.reverse()] : [0, ...ups, ...down.reverse()],
    })
  }

  /** Where a dependency of a package in `namespace` on `pkg` lives (the planner's scopes, over the starting nodes). */
  scope(pkg: string, namespace: string): string {
    let byNamespace = this.scopes.get(namespace)
    if (!byNamespace) this.scopes.set(namespace, (byNamespace = new Map<string, string>()))
    let id = byNamespace.get(pkg)
    if (id === undefined) byNamespace.set(pkg, (id = this.findScope(pkg, namespace)))
    return id
  }

  private findScope(pkg: string, namespace: string): string {
    const own = nodeId(pkg, namespace)
    if (this.existing.has(own)) return own
    const cluster = nodeId(pkg, '')
    if (namespace && this.existing.has(cluster)) return cluster
    if (this.context.catalog.packages.get(pkg)?.installationType === 'OnePerCluster')
      return this.existingByPackage.get(pkg)?.[0]?.id ?? cluster
    return own
  }

  /** The variable of `pkg` as a package in `namespace` sees it, added (not installed, or a catalog version) if new. */
  variableFor(pkg: string, namespace: string): number {
    const id = this.scope(pkg, namespace)
    const known = this.byId.get(id)
    if (known !== undefined) return known
    const entry = this.context.catalog.packages.get(pkg)
    const values: Value[] = [absentValue]
    for (const v of entry?.versions ?? []) {
      if (this.admitted(entry!, v))
        values.push({
          kind: 'change',
          version: v.version,
          indexed: v,
          deps: v.spec.dependencies,
          provides: v.spec.provides,
        })
    }
    return this.addVariable({ id, package: pkg, namespace: id.includes('/') ? namespace : '', values })
  }

  private reach(dep: Dependency, namespace: string): void {
    if (dep.type === 'AnyOf') for (const d of dep.anyOf) this.reach(d, namespace)
    else if (dep.type === 'Package') this.variableFor(dep.name, namespace)
    else for (const name of this.context.catalog.providers.get(gvkKey(dep.gvk)) ?? []) this.variableFor(name, namespace)
  }

  /** Present values that satisfy the constraint (a target of unknown version satisfies every range). */
  satisfying(y: number, c: Constraint): ValueSet {
    const values = this.variables[y]!.values
    return ValueSet.where(
      values.length,
      (i) => values[i]!.kind !== 'absent' && (!values[i]!.version || satisfies(values[i]!.version, c)),
    )
  }

  absentSet(y: number): ValueSet {
    const values = this.variables[y]!.values
    return ValueSet.where(values.length, (i) => values[i]!.kind === 'absent')
  }

  keepSet(y: number): ValueSet {
    const values = this.variables[y]!.values
    return ValueSet.where(values.length, (i) => values[i]!.kind === 'keep')
  }

  /** Variables at a value providing the GVK, with those values; cluster-wide (an API is). */
  providing(key: string, namespace: string): Term[] {
    let list = this.providers.get(key)
    if (!list) {
      list = []
      this.variables.forEach((v, i) => {
        if (v.values.some((x) => x.kind !== 'absent' && x.provides.some((g) => gvkKey(g) === key))) list!.push(i)
      })
      this.providers.set(key, list)
    }
    // The dependant's own scope first, in catalog order (the planner's preference), then the rest.
    const preferred = (this.context.catalog.providers.get(key) ?? [])
      .map((name) => this.byId.get(this.scope(name, namespace)))
      .filter((v): v is number => v !== undefined)
    const ordered = [
      ...new Set([
        ...list.filter((v) => !this.variables[v]!.values.some((x) => x.kind === 'absent')),
        ...preferred,
        ...list,
      ]),
    ]
    return ordered.map((v) => {
      const values = this.variables[v]!.values
      return {
        variable: v,
        set: ValueSet.where(
          values.length,
          (i) => values[i]!.kind !== 'absent' && values[i]!.provides.some((g) => gvkKey(g) === key),
        ),
      }
    })
  }
}
