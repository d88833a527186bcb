/**
 * The incompatibilities of the variables' dependencies, per group of a
 * variable's values sharing a dependency:
 * - package dependency: the dependency present at a version in its range
 *   (optional: only if present);
 * - GVK dependency: some variable at a version providing it (unless the
 *   cluster serves it);
 * - anyOf: some alternative holds;
 * - an untouched installation's ranges bind only what the plan changes
 *   (Glasskube's isErrNew): its missing dependencies are not installed and a
 *   dependency kept at its installed version is not blamed on anyone.
 */
import type { Dependency } from '../../api/dependencies.js'
import { parseConstraint } from '../constraints.js'
import { gvkKey } from '../graph.js'
import { append } from '../append.js'
import type { Domains } from './domains.js'
import { describeTerm } from './explain.js'
import { incompatibility } from './incompatibility.js'
import type { Incompatibility, Term } from './incompatibility.js'
import type { Choice } from './solver.js'
import { ValueSet } from './value-set.js'
import { dependencyKey } from './variables.js'
import type { Incoming } from './variables.js'

/** Values of one variable that share a dependency. */
interface DependencyGroup {
  dep: Dependency
  keep: boolean
  indices: number[]
}

/** Collects the incompatibilities and the solver's choices, variable by variable. */
export class DependencyRules {
  readonly incompatibilities: Incompatibility[] = []
  readonly choices: Choice[] = []
  /** Scratch for addDependencies, reused per variable: changed values' groups by key, then the dependencies of a value alone in its class. */
  private readonly groups: [Map<string, DependencyGroup>, DependencyGroup[], DependencyGroup[]] = [
    new Map<string, DependencyGroup>(),
    [],
    [],
  ]
  /** Dependency objects are shared between catalog versions: their grouping keys, by identity. */
  private readonly dependencyKeys = new Map<Dependency, string>()
  /** Per variable: the values of each dependant (by variable) that need it, from changed or new packages only. */
  private readonly neededBy = new Map<number, Map<number, ValueSet>>()

  constructor(private readonly domains: Domains) {}

  /** `, but no version of d satisfies it` (or: it is in no catalog), when nothing can satisfy a range. */
  private noneSatisfies(y: number, sat: ValueSet): string {
    if (!sat.isEmpty()) return ''
    const variable = this.domains.variables[y]!
    const present = variable.valueLabels.filter((l) => l !== undefined)
    if (present.length === 0) return `, but ${variable.package} is not available in any repository`
    return `, but none of the versions ${variable.package} may take here satisfies it (${present.join(', ')})`
  }

  /** Adds the incompatibilities of the variable's dependencies. */
  addDependencies(x: number): void {
    const variable = this.domains.variables[x]!
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
    const variable = this.domains.variables[x]!
    const head: Term = { variable: x, set: ValueSet.of(variable.values.length, indices) }
    if (dep.type === 'Package') this.addPackageDependency(x, head, dep.name, dep.version, dep.optional, keep)
    else if (dep.type === 'GVK') this.addApiDependency(x, head, gvkKey(dep.gvk), dep.optional, keep)
    else if (!dep.optional && !keep) this.addAlternatives(x, head, dep)
  }

  private addIncoming(y: number, edge: Incoming): void {
    const variable = this.domains.variables[y]!
    variable.incoming = append(variable.incoming, edge)
  }

  /** The dependant's values an incompatibility's text names (computed only when an explanation needs it). */
  private who(head: Term): string {
    return describeTerm(this.domains.variables[head.variable]!, head.set)
  }

  /** Records that `head` needs variable `y` (so an installed `y` may change for it). */
  private need(y: number, head: Term): void {
    if (this.domains.variables[y]!.values[0]?.kind !== 'keep') return // only installed packages are held by it
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
  addChangeNeedsDependant(x: number): void {
    const variable = this.domains.variables[x]!
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

  private addPackageDependency(
    x: number,
    head: Term,
    name: string,
    version: string,
    optional: boolean,
    keep: boolean,
  ): void {
    const namespace = this.domains.variables[x]!.namespace
    const y = this.domains.variableFor(name, namespace)
    const parsed = parseConstraint(version)
    if (!parsed.ok) {
      if (!keep) this.add([head], () => `${this.who(head)} needs ${name} with an ${parsed.error}`)
      return
    }
    const c = parsed.constraint
    const range = c.display || 'any'
    const sat = this.domains.satisfying(y, c)
    if (y === x) {
      // A package that depends on itself: only the versions inside their own range.
      if (!keep)
        this.add(
          [{ variable: x, set: head.set.and(sat.not()) }],
          () => `${this.who(head)} needs ${name} (${range}), itself`,
        )
      return
    }
    this.addIncoming(y, { from: x, set: head.set, constraint: c })
    if (keep) {
      // An untouched installation binds only a dependency the plan installs or changes.
      this.add(
        [head, { variable: y, set: sat.or(this.domains.absentSet(y)).or(this.domains.keepSet(y)).not() }],
        () => `${this.who(head)} needs ${name} (${range}) if the plan installs or changes it`,
      )
      return
    }
    this.need(y, head)
    if (optional) {
      this.add(
        [head, { variable: y, set: sat.or(this.domains.absentSet(y)).not() }],
        () => `${this.who(head)} needs ${name} (${range}) if it is installed`,
      )
      if (this.domains.context.policy.optional === 'InstallIfResolvable')
        this.choices.push({ head, alternatives: [{ variable: y, set: sat }], wish: true })
      return
    }
    this.add(
      [head, { variable: y, set: sat.not() }],
      () => `${this.who(head)} needs ${name} (${range})${this.noneSatisfies(y, sat)}`,
    )
  }

  private addApiDependency(x: number, head: Term, key: string, optional: boolean, keep: boolean): void {
    if (this.domains.context.clusterAPIs.has(key) || optional) return
    if (keep && (this.domains.context.servedBefore.get(key) ?? []).length === 0) return
    const alternatives = this.domains.providing(key, this.domains.variables[x]!.namespace)
    if (!keep) for (const a of alternatives) this.need(a.variable, head)
    const text = () => {
      const names = alternatives.map((a) => describeTerm(this.domains.variables[a.variable]!, a.set))
      return `${this.who(head)} needs the API ${key}${names.length > 0 ? ` (provided by ${names.join(', ')})` : ', which no package provides'}`
    }
    this.add([head, ...alternatives.map((a) => ({ variable: a.variable, set: a.set.not() }))], text)
    if (alternatives.length > 1) this.choices.push({ head, alternatives })
  }

  private addAlternatives(x: number, head: Term, dep: Extract<Dependency, { type: 'AnyOf' }>): void {
    const namespace = this.domains.variables[x]!.namespace
    const alternatives: Term[] = []
    const texts: string[] = []
    for (const alt of dep.anyOf) {
      if (alt.type === 'GVK') {
        const key = gvkKey(alt.gvk)
        if (this.domains.context.clusterAPIs.has(key)) return
        alternatives.push(...this.domains.providing(key, namespace))
        texts.push(`the API ${key}`)
        continue
      }
      const parsed = parseConstraint(alt.version)
      texts.push(`${alt.name} (${parsed.ok ? parsed.constraint.display || 'any' : alt.version})`)
      if (!parsed.ok) continue
      const y = this.domains.variableFor(alt.name, namespace)
      this.addIncoming(y, { from: x, set: head.set, constraint: parsed.constraint })
      alternatives.push({ variable: y, set: this.domains.satisfying(y, parsed.constraint) })
    }
    // Two alternatives on one variable: either set will do.
    const merged = new Map<number, ValueSet>()
    for (const a of alternatives) merged.set(a.variable, merged.get(a.variable)?.or(a.set) ?? a.set)
    const terms = [...merged].map(([variable, set]) => ({ variable, set }))
    for (const t of terms) this.need(t.variable, head)
    this.add(
      [head, ...terms.map((t) => ({ variable: t.variable, set: t.set.not() }))],
      () => `${this.who(head)} needs one of ${texts.join(', ')}`,
    )
    if (terms.length > 1) this.choices.push({ head, alternatives: terms })
  }
}
