/**
 * The dependency problem as finite domains and incompatibilities.
 *
 * One variable per installation (package + scope, as the planner names
 * nodes). Its values: a target's version(s); an installed package's installed
 * version ("keep") plus the catalog versions the upgrade / downgrade policies
 * allow; any other package "not installed" plus every catalog version the
 * prerelease and incomplete-version policies admit.
 *
 * Incompatibilities, per group of a variable's values sharing a dependency:
 * - package dependency: the dependency present at a version in its range
 *   (optional: only if present);
 * - GVK dependency: some variable at a version providing it (unless the
 *   cluster serves it);
 * - anyOf: some alternative holds;
 * - an untouched installation's ranges bind only what the plan changes
 *   (Glasskube's isErrNew): its missing dependencies are not installed and a
 *   dependency kept at its installed version is not blamed on anyone.
 */
import type { Dependency, DependencyPolicy, GVK, PackageDependency } from '../../api/dependencies.js'
import { candidateAdmitted, parseConstraint, satisfies } from '../constraints.js'
import type { Constraint } from '../constraints.js'
import { gvkKey, walkGraph } from '../graph.js'
import type { CatalogIndex, IndexedPackage, IndexedVersion } from '../graph.js'
import { compareVersions, isPrerelease, isUpgrade, parseVersion } from '../versions.js'
import type { Version } from '../versions.js'
import { append } from '../append.js'
import { describeTerm } from './explain.js'
import type { NamedVariable } from './explain.js'
import { incompatibility } from './incompatibility.js'
import type { Incompatibility, Term } from './incompatibility.js'
import type { PartialSolution } from './partial-solution.js'
import type { Choice, Problem } from './solver.js'
import { ValueSet } from './value-set.js'

/** A node the planner starts from: an installation or a target. */
export interface ModelNode {
  id: string
  package: string
  namespace: string
  installed?: { version: Version; deps: Dependency[]; provides: GVK[] }
  /** For a target: its version(s); a single value when fixed. */
  target?: { values: TargetValue[] }
}

/** One possible version of a target (undefined version: unknown, its range is not checked). */
export interface TargetValue {
  version?: Version
  indexed?: IndexedVersion
  deps: Dependency[]
  provides: GVK[]
}

/** One value of a variable. */
export interface Value {
  kind: 'absent' | 'keep' | 'change' | 'target'
  version?: Version
  indexed?: IndexedVersion
  deps: Dependency[]
  provides: GVK[]
}

/** One variable: an installation that exists, or may. */
export interface Variable extends NamedVariable {
  id: string
  package: string
  namespace: string
  values: Value[]
  /** Preferred order of values, for installed packages and targets. */
  order?: number[] | undefined
  /** Dependants' ranges, for "no non-empty range applies" (the `latest` policy); none until a dependant is added. */
  incoming?: Incoming[]
}

/** A dependant's range on a variable: `from`, at a value in `set`, needs it in `constraint`. */
interface Incoming {
  from: number
  set: ValueSet
  constraint: Constraint
}

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

/** What the model reads besides the nodes. */
export interface ModelContext {
  catalog: CatalogIndex
  policy: DependencyPolicy
  clusterAPIs: Set<string>
  /** GVK key → installations whose installed version serves it. */
  servedBefore: Map<string, string[]>
}

/** "Not installed": one object for every variable (values are never changed). */
const absentValue: Value = Object.freeze({ kind: 'absent', deps: Object.freeze([]) as unknown as Dependency[], provides: Object.freeze([]) as unknown as GVK[] })

function nodeId(pkg: string, namespace: string): string {
  return namespace ? `${namespace}/${pkg}` : pkg
}

/** Builds the variables (reachable from the nodes) and the incompatibilities. */
export function buildModel(nodes: readonly ModelNode[], context: ModelContext): Model {
  return new ModelBuilder(nodes, context).build()
}

class ModelBuilder {
  private readonly variables: Variable[] = []
  private readonly byId = new Map<string, number>()
  private readonly existing: Map<string, ModelNode>
  private readonly existingByPackage = new Map<string, ModelNode[]>()
  private readonly prereleaseRanges = new Map<string, Constraint[]>()
  /** Package → the digests some constraint pins it to. */
  private readonly digestPins = new Map<string, Set<string>>()
  private readonly providers = new Map<string, number[]>()
  private readonly incompatibilities: Incompatibility[] = []
  private readonly choices: Choice[] = []
  /** Scratch for addDependencies, reused per variable: changed values' groups by key, then the dependencies of a value alone in its class. */
  private readonly groups: [Map<string, DependencyGroup>, DependencyGroup[], DependencyGroup[]] = [new Map<string, DependencyGroup>(), [], []]
  /** Dependency objects are shared between catalog versions: their grouping keys, by identity. */
  private readonly dependencyKeys = new Map<Dependency, string>()
  /** scope() answers by namespace, then package. */
  private readonly scopes = new Map<string, Map<string, string>>()
  /** Per variable: the values of each dependant (by variable) that need it, from changed or new packages only. */
  private readonly neededBy = new Map<number, Map<number, ValueSet>>()

  constructor(
    private readonly nodes: readonly ModelNode[],
    private readonly context: ModelContext,
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

  build(): Model {
    this.collectPrereleaseRanges()
    for (const node of this.nodes) this.addExisting(node)
    // Discovery: every installation some value's dependency can reach.
    // (Indexed loops: this runs once per plan, mostly before it is optimised, where for-of allocates.)
    for (let v = 0; v < this.variables.length; v++) {
      const { values, namespace } = this.variables[v]!
      for (let i = 0; i < values.length; i++) {
        const deps = values[i]!.deps
        for (let d = 0; d < deps.length; d++) this.reach(deps[d]!, namespace)
      }
    }
    for (let v = 0; v < this.variables.length; v++) this.addDependencies(v)
    const variables = this.variables
    this.nodes.forEach((n) => {
      if (!n.target) this.addChangeNeedsDependant(this.byId.get(n.id)!)
    })
    const problem: Problem = {
      domainSizes: variables.map((v) => v.values.length),
      incompatibilities: this.incompatibilities,
      absent: variables.map((v) => v.values.findIndex((x) => x.kind === 'absent')),
      first: this.nodes.filter((n) => n.target).map((n) => this.byId.get(n.id)!),
      later: this.nodes.filter((n) => !n.target).map((n) => this.byId.get(n.id)!),
      choices: this.choices,
      prefer: (v, allowed, solution) => this.prefer(v, allowed, solution),
    }
    return { variables, problem, forbidCycles: (values) => this.forbidCycles(values) }
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
      if (!parsed.ok || parsed.constraint.kind !== 'range' || !parsed.constraint.branches.some((b) => b.namesPrerelease)) return
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
    return !isPrerelease(v.version) || candidateAdmitted(v.version, policy.prereleases, this.prereleaseRanges.get(entry.name) ?? [])
  }

  private addVariable(variable: Omit<Variable, 'valueLabels' | 'label' | 'incoming'>): number {
    const index = this.variables.length
    // A copy of the values that were pushed one by one: exactly their size (see append.ts), since every variable lives to the end.
    this.variables.push(new ModelVariable(variable.id, variable.package, variable.namespace, variable.values.slice(), variable.order))
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
      this.addVariable({ id: node.id, package: node.package, namespace: node.namespace, values, order: values.map((_, i) => i) })
      return
    }
    const installed = node.installed!
    const values: Value[] = [{ kind: 'keep', version: installed.version, deps: installed.deps, provides: installed.provides }]
    const up: number[] = []
    const down: number[] = []
    for (const v of entry?.versions ?? []) {
      if (!this.admitted(entry!, v)) continue
      if (compareVersions(v.version, installed.version) === 0) continue
      const upgrade = isUpgrade(installed.version, v.version)
      if ((upgrade && policy.upgrades !== 'Allow') || (!upgrade && policy.downgrades !== 'Allow')) continue
      ;(upgrade ? up : down).push(values.length)
      values.push({ kind: 'change', version: v.version, indexed: v, deps: v.spec.dependencies, provides: v.spec.provides })
    }
    const ups = policy.upgradeTarget === 'Lowest' ? up : up.reverse()
    this.addVariable({ id: node.id, package: node.package, namespace: node.namespace, values, order: [0, ...ups, ...down.reverse()] })
  }

  /** Where a dependency of a package in `namespace` on `pkg` lives (the planner's scopes, over the starting nodes). */
  private scope(pkg: string, namespace: string): string {
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
    if (this.context.catalog.packages.get(pkg)?.installationType === 'OnePerCluster') return this.existingByPackage.get(pkg)?.[0]?.id ?? cluster
    return own
  }

  private variableFor(pkg: string, namespace: string): number {
    const id = this.scope(pkg, namespace)
    const known = this.byId.get(id)
    if (known !== undefined) return known
    const entry = this.context.catalog.packages.get(pkg)
    const values: Value[] = [absentValue]
    for (const v of entry?.versions ?? []) {
      if (this.admitted(entry!, v)) values.push({ kind: 'change', version: v.version, indexed: v, deps: v.spec.dependencies, provides: v.spec.provides })
    }
    return this.addVariable({ id, package: pkg, namespace: id.includes('/') ? namespace : '', values })
  }

  private reach(dep: Dependency, namespace: string): void {
    if (dep.type === 'AnyOf') for (const d of dep.anyOf) this.reach(d, namespace)
    else if (dep.type === 'Package') this.variableFor(dep.name, namespace)
    else for (const name of this.context.catalog.providers.get(gvkKey(dep.gvk)) ?? []) this.variableFor(name, namespace)
  }

  /** `, but no version of d satisfies it` (or: it is in no catalog), when nothing can satisfy a range. */
  private noneSatisfies(y: number, sat: ValueSet): string {
    if (!sat.isEmpty()) return ''
    const variable = this.variables[y]!
    const present = variable.valueLabels.filter((l) => l !== undefined)
    if (present.length === 0) return `, but ${variable.package} is not available in any repository`
    return `, but none of the versions ${variable.package} may take here satisfies it (${present.join(', ')})`
  }

  /** Present values that satisfy the constraint (a target of unknown version satisfies every range). */
  private satisfying(y: number, c: Constraint): ValueSet {
    const values = this.variables[y]!.values
    return ValueSet.where(values.length, (i) => values[i]!.kind !== 'absent' && (!values[i]!.version || satisfies(values[i]!.version, c)))
  }

  private absentSet(y: number): ValueSet {
    const values = this.variables[y]!.values
    return ValueSet.where(values.length, (i) => values[i]!.kind === 'absent')
  }

  private keepSet(y: number): ValueSet {
    const values = this.variables[y]!.values
    return ValueSet.where(values.length, (i) => values[i]!.kind === 'keep')
  }

  /** Variables at a value providing the GVK, with those values; cluster-wide (an API is). */
  private providing(key: string, namespace: string): Term[] {
    let list = this.providers.get(key)
    if (!list) {
      list = []
      this.variables.forEach((v, i) => {
        if (v.values.some((x) => x.kind !== 'absent' && x.provides.some((g) => gvkKey(g) === key))) list!.push(i)
      })
      this.providers.set(key, list)
    }
    // The dependant's own scope first, in catalog order (the planner's preference), then the rest.
    const preferred = (this.context.catalog.providers.get(key) ?? []).map((name) => this.byId.get(this.scope(name, namespace))).filter((v): v is number => v !== undefined)
    const ordered = [...new Set([...list.filter((v) => !this.variables[v]!.values.some((x) => x.kind === 'absent')), ...preferred, ...list])]
    return ordered.map((v) => {
      const values = this.variables[v]!.values
      return { variable: v, set: ValueSet.where(values.length, (i) => values[i]!.kind !== 'absent' && values[i]!.provides.some((g) => gvkKey(g) === key)) }
    })
  }

  private addDependencies(x: number): void {
    const variable = this.variables[x]!
    // Values sharing a dependency make one incompatibility (the installed version's apart: it binds less).
    const [byKey, changedAlone, keptAlone] = this.groups
    byKey.clear()
    changedAlone.length = 0
    keptAlone.length = 0
    let changed = 0
    for (const value of variable.values) if (value.kind !== 'absent' && value.kind !== 'keep') changed++
    variable.values.forEach((value, i) => {
      if (value.kind === 'absent') return
      // A value alone in its class (the installed one; a single version) shares nothing: no keys to compute.
      if (value.kind === 'keep' || changed === 1) {
        const alone = value.kind === 'keep' ? keptAlone : changedAlone
        for (const dep of value.deps) alone.push({ dep, keep: value.kind === 'keep', indices: [i] })
        return
      }
      for (const dep of value.deps) {
        let key = this.dependencyKeys.get(dep)
        if (key === undefined) this.dependencyKeys.set(dep, (key = dependencyKey(dep)))
        const group = byKey.get(key)
        if (group) group.indices.push(i)
        else byKey.set(key, { dep, keep: false, indices: [i] })
      }
    })
    for (const group of byKey.values()) this.addGroup(x, group)
    for (const group of changedAlone) this.addGroup(x, group)
    for (const group of keptAlone) this.addGroup(x, group)
  }

  private addGroup(x: number, { dep, keep, indices }: DependencyGroup): void {
    const variable = this.variables[x]!
    const head: Term = { variable: x, set: ValueSet.of(variable.values.length, indices) }
    if (dep.type === 'Package') this.addPackageDependency(x, head, dep.name, dep.version, dep.optional, keep)
    else if (dep.type === 'GVK') this.addApiDependency(x, head, gvkKey(dep.gvk), dep.optional, keep)
    else if (!dep.optional && !keep) this.addAlternatives(x, head, dep)
  }

  private addIncoming(y: number, edge: Incoming): void {
    const variable = this.variables[y]!
    variable.incoming = append(variable.incoming, edge)
  }

  /** The dependant's values an incompatibility's text names (computed only when an explanation needs it). */
  private who(head: Term): string {
    return describeTerm(this.variables[head.variable]!, head.set)
  }

  /** Records that `head` needs variable `y` (so an installed `y` may change for it). */
  private need(y: number, head: Term): void {
    if (this.variables[y]!.values[0]?.kind !== 'keep') return // only installed packages are held by it
    const byDependant = this.neededBy.get(y) ?? new Map<number, ValueSet>()
    byDependant.set(head.variable, byDependant.get(head.variable)?.or(head.set) ?? head.set)
    this.neededBy.set(y, byDependant)
  }

  /**
   * An installed package changes version only for a changed or new package
   * that depends on it (the upgrade and downgrade policies are about
   * dependencies); an installed dependant that would accept an update only at
   * a newer version is reported, with that version, not upgraded.
   */
  private addChangeNeedsDependant(x: number): void {
    const variable = this.variables[x]!
    const changes = ValueSet.where(variable.values.length, (i) => variable.values[i]!.kind === 'change')
    if (changes.isEmpty()) return
    const dependants = [...(this.neededBy.get(x) ?? [])].map(([variable, set]) => ({ variable, set: set.not() }))
    this.add([{ variable: x, set: changes }, ...dependants], () =>
      dependants.length === 0
        ? `${variable.label} stays at its installed version: nothing the plan installs or changes depends on it`
        : `${variable.label} changes version only if a package the plan installs or changes needs it`,
    )
  }

  private add(terms: Term[], text: () => string): void {
    const inc = incompatibility(terms, { kind: 'external', text })
    if (inc) this.incompatibilities.push(inc)
  }

  private addPackageDependency(x: number, head: Term, name: string, version: string, optional: boolean, keep: boolean): void {
    const namespace = this.variables[x]!.namespace
    const y = this.variableFor(name, namespace)
    const parsed = parseConstraint(version)
    if (!parsed.ok) {
      if (!keep) this.add([head], () => `${this.who(head)} needs ${name} with an ${parsed.error}`)
      return
    }
    const c = parsed.constraint
    const range = c.display || 'any'
    const sat = this.satisfying(y, c)
    if (y === x) {
      // A package that depends on itself: only the versions inside their own range.
      if (!keep) this.add([{ variable: x, set: head.set.and(sat.not()) }], () => `${this.who(head)} needs ${name} (${range}), itself`)
      return
    }
    this.addIncoming(y, { from: x, set: head.set, constraint: c })
    if (keep) {
      // An untouched installation binds only a dependency the plan installs or changes.
      this.add([head, { variable: y, set: sat.or(this.absentSet(y)).or(this.keepSet(y)).not() }], () => `${this.who(head)} needs ${name} (${range}) if the plan installs or changes it`)
      return
    }
    this.need(y, head)
    if (optional) {
      this.add([head, { variable: y, set: sat.or(this.absentSet(y)).not() }], () => `${this.who(head)} needs ${name} (${range}) if it is installed`)
      if (this.context.policy.optional === 'InstallIfResolvable') this.choices.push({ head, alternatives: [{ variable: y, set: sat }], wish: true })
      return
    }
    this.add([head, { variable: y, set: sat.not() }], () => `${this.who(head)} needs ${name} (${range})${this.noneSatisfies(y, sat)}`)
  }

  private addApiDependency(x: number, head: Term, key: string, optional: boolean, keep: boolean): void {
    if (this.context.clusterAPIs.has(key) || optional) return
    if (keep && (this.context.servedBefore.get(key) ?? []).length === 0) return
    const alternatives = this.providing(key, this.variables[x]!.namespace)
    if (!keep) for (const a of alternatives) this.need(a.variable, head)
    const text = () => {
      const names = alternatives.map((a) => describeTerm(this.variables[a.variable]!, a.set))
      return `${this.who(head)} needs the API ${key}${names.length > 0 ? ` (provided by ${names.join(', ')})` : ', which no package provides'}`
    }
    this.add([head, ...alternatives.map((a) => ({ variable: a.variable, set: a.set.not() }))], text)
    if (alternatives.length > 1) this.choices.push({ head, alternatives })
  }

  private addAlternatives(x: number, head: Term, dep: Extract<Dependency, { type: 'AnyOf' }>): void {
    const namespace = this.variables[x]!.namespace
    const alternatives: Term[] = []
    const texts: string[] = []
    for (const alt of dep.anyOf) {
      if (alt.type === 'GVK') {
        const key = gvkKey(alt.gvk)
        if (this.context.clusterAPIs.has(key)) return
        alternatives.push(...this.providing(key, namespace))
        texts.push(`the API ${key}`)
        continue
      }
      const parsed = parseConstraint(alt.version)
      texts.push(`${alt.name} (${parsed.ok ? parsed.constraint.display || 'any' : alt.version})`)
      if (!parsed.ok) continue
      const y = this.variableFor(alt.name, namespace)
      this.addIncoming(y, { from: x, set: head.set, constraint: parsed.constraint })
      alternatives.push({ variable: y, set: this.satisfying(y, parsed.constraint) })
    }
    // Two alternatives on one variable: either set will do.
    const merged = new Map<number, ValueSet>()
    for (const a of alternatives) merged.set(a.variable, merged.get(a.variable)?.or(a.set) ?? a.set)
    const terms = [...merged].map(([variable, set]) => ({ variable, set }))
    for (const t of terms) this.need(t.variable, head)
    this.add([head, ...terms.map((t) => ({ variable: t.variable, set: t.set.not() }))], () => `${this.who(head)} needs one of ${texts.join(', ')}`)
    if (terms.length > 1) this.choices.push({ head, alternatives: terms })
  }

  private forbidCycles(values: readonly number[]): Incompatibility[] {
    const present = (v: number) => this.variables[v]!.values[values[v]!]!.kind !== 'absent'
    const edges = new Array<Edge[] | undefined>(this.variables.length)
    const edgesOf = (v: number): Edge[] => (edges[v] ??= this.edgesOf(v, values, present))
    const out: Incompatibility[] = []
    const variables = this.variables.length
    function* presentVariables() {
      for (let v = 0; v < variables; v++) if (present(v)) yield v
    }
    for (const { path } of walkGraph(variables, presentVariables(), edgesOf, (edge) => edge.to).cycles) {
      if (!path.some((v) => this.variables[v]!.values[values[v]!]!.kind !== 'keep')) continue
      const terms: Term[] = []
      for (let k = 0; k + 1 < path.length; k++) {
        const edge = edgesOf(path[k]!).find((e) => e.to === path[k + 1])!
        terms.push(this.withDependency(path[k]!, edge.dep), ...(edge.terms ? edge.terms() : this.packageTerms(edge.to, edge.dep as PackageDependency)))
      }
      const labels = path.map((v) => `${this.variables[v]!.label}@${this.variables[v]!.valueLabels[values[v]!]}`)
      const inc = incompatibility(terms, { kind: 'external', text: () => `${labels.join(' -> ')} would be a cycle (detected cycle on: ${this.variables[path[0]!]!.label})` })
      if (inc) out.push(inc)
    }
    return out
  }

  /** The values of `v` that have the dependency (the first term of an edge). */
  private withDependency(v: number, dep: Dependency): Term {
    const values = this.variables[v]!.values
    const key = dependencyKey(dep)
    return { variable: v, set: ValueSet.where(values.length, (i) => values[i]!.kind !== 'absent' && values[i]!.deps.some((d) => dependencyKey(d) === key)) }
  }

  /** The terms of a package edge to `y`: `y` at a version in the range (any present version if the range does not parse). */
  private packageTerms(y: number, dep: PackageDependency): Term[] {
    const parsed = parseConstraint(dep.version)
    return [{ variable: y, set: parsed.ok ? this.satisfying(y, parsed.constraint) : this.absentSet(y).not() }]
  }

  /** The present variable a package dependency of `v` resolves to, if another. */
  private packageTarget(v: number, name: string, present: (v: number) => boolean): number | undefined {
    const y = this.byId.get(this.scope(name, this.variables[v]!.namespace))
    return y === undefined || y === v || !present(y) ? undefined : y
  }

  /**
   * The planner's edges from a present variable at its value: package, first
   * present API provider, first met alternative. A package edge's terms are
   * derived from its dependency when a cycle needs them (most edges are
   * package edges, and few lie on a cycle); the others carry theirs.
   */
  private edgesOf(v: number, values: readonly number[], present: (v: number) => boolean): Edge[] {
    const variable = this.variables[v]!
    const value = variable.values[values[v]!]!
    const out: Edge[] = []
    for (const dep of value.deps) {
      if (dep.type === 'Package') {
        const to = this.packageTarget(v, dep.name, present)
        if (to !== undefined) out.push({ to, dep })
        continue
      }
      if (dep.type === 'GVK') {
        const e = this.apiEdge(v, gvkKey(dep.gvk), values)
        if (e !== undefined && e !== 'served') out.push({ to: e.to, dep, terms: e.terms })
        continue
      }
      const unmet: Term[] = []
      for (const alt of dep.anyOf) {
        if (alt.type === 'GVK') {
          const e = this.apiEdge(v, gvkKey(alt.gvk), values)
          if (e === 'served') break
          if (e) {
            const before = [...unmet]
            out.push({ to: e.to, dep, terms: () => [...e.terms(), ...before] })
            break
          }
          continue
        }
        const to = this.packageTarget(v, alt.name, present)
        const parsed = parseConstraint(alt.version)
        if (to !== undefined && (!parsed.ok || this.satisfying(to, parsed.constraint).has(values[to]!))) {
          const before = [...unmet]
          out.push({ to, dep, terms: () => [...this.packageTerms(to, alt), ...before] })
          break
        }
        const y = this.byId.get(this.scope(alt.name, variable.namespace))
        if (y !== undefined && parsed.ok) unmet.push({ variable: y, set: this.satisfying(y, parsed.constraint).not() })
      }
    }
    return out
  }

  /** The edge of an API dependency of `v`: none when `v` or the cluster serves it, else to its first present provider. */
  private apiEdge(v: number, key: string, values: readonly number[]): { to: number; terms: () => Term[] } | undefined | 'served' {
    if (this.context.clusterAPIs.has(key)) return 'served'
    const providers = this.providing(key, this.variables[v]!.namespace).sort((a, b) => (this.variables[a.variable]!.id < this.variables[b.variable]!.id ? -1 : 1))
    // A package that provides the API itself needs no other (the planner's rule).
    const own = providers.find((p) => p.variable === v)
    if (own?.set.has(values[v]!)) return 'served'
    const first = providers.find((p) => p.set.has(values[p.variable]!))
    if (!first) return undefined
    const before = providers.filter((p) => this.variables[p.variable]!.id < this.variables[first.variable]!.id).map((p) => ({ variable: p.variable, set: p.set.not() }))
    const notOwn = own ? [{ variable: v, set: own.set.not() }] : []
    return { to: first.variable, terms: () => [first, ...before, ...notOwn] }
  }

  /**
   * The value to try: installed packages keep their version, then upgrade
   * (Highest or Lowest), then downgrade; targets in their order; new
   * installations take `latest(D)` when no non-empty range applies, else the
   * highest admitted version.
   */
  private prefer(v: number, allowed: ValueSet, solution: PartialSolution): number {
    const variable = this.variables[v]!
    if (variable.order) return variable.order.find((i) => allowed.has(i)) ?? allowed.indices()[0]!
    const candidates = allowed.indices().filter((i) => variable.values[i]!.kind !== 'absent')
    if (candidates.length === 0) return allowed.indices()[0]!
    const highest = candidates[candidates.length - 1]!
    const { policy } = this.context
    const ranged = !!variable.incoming?.some((e) => e.constraint.kind !== 'any' && solution.allowedOf(e.from).subsetOf(e.set))
    if (ranged || policy.latest === 'Highest') return highest
    const entry = this.context.catalog.packages.get(variable.package)
    if (policy.latest === 'LatestVersionField' && entry?.latestVersion) {
      const latest = parseVersion(entry.latestVersion, { coerce: true })
      const hit = latest && candidates.find((i) => compareVersions(variable.values[i]!.version!, latest) === 0 || variable.values[i]!.version!.raw === entry.latestVersion)
      if (hit !== undefined && hit !== null) return hit
    }
    const stable = candidates.filter((i) => !isPrerelease(variable.values[i]!.version!))
    return stable[stable.length - 1] ?? highest
  }
}

class ModelVariable implements Variable {
  incoming: Incoming[] | undefined = undefined
  private labels: (string | undefined)[] | undefined

  constructor(
    readonly id: string,
    readonly package_: string,
    readonly namespace: string,
    readonly values: Value[],
    readonly order: number[] | undefined,
  ) {}

  get package(): string {
    return this.package_
  }

  get label(): string {
    return this.id
  }

  /** Computed when an explanation first names a value. */
  get valueLabels(): (string | undefined)[] {
    this.labels ??= this.values.map((x) => (x.kind === 'absent' ? undefined : `${x.version?.raw ?? '(any version)'}${x.kind === 'keep' ? ' (installed)' : ''}`))
    return this.labels
  }
}

/** Values of one variable that share a dependency. */
interface DependencyGroup {
  dep: Dependency
  keep: boolean
  indices: number[]
}

/**
 * A dependency edge of a solution: to a variable, for a dependency, while
 * these terms hold (computed only for edges on a cycle; package edges derive
 * theirs from the dependency).
 */
interface Edge {
  to: number
  dep: Dependency
  terms?: () => Term[]
}

/** A dependency's identity for grouping (its declaration site aside). */
function dependencyKey(dep: Dependency): string {
  if (dep.type === 'Package') return `P\0${dep.name}\0${dep.version}\0${dep.optional}`
  if (dep.type === 'GVK') return `G\0${gvkKey(dep.gvk)}\0${dep.optional}`
  return `A\0${dep.optional}\0${dep.anyOf.map(dependencyKey).join('\0')}`
}
