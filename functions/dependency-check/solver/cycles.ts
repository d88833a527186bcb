/**
 * Cycles of a solution: the planner's dependency edges among the present
 * variables, and incompatibilities that forbid each cycle through a package
 * the plan installs or changes (a cycle is a conflict; another choice of
 * versions may avoid it).
 */
import type { Dependency, PackageDependency } from '../../api/dependencies.js'
import { parseConstraint } from '../constraints.js'
import { gvkKey, walkGraph } from '../graph.js'
import type { Domains } from './domains.js'
import { incompatibility } from './incompatibility.js'
import type { Incompatibility, Term } from './incompatibility.js'
import { ValueSet } from './value-set.js'
import { dependencyKey } from './variables.js'

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

/** Finds the cycles of solutions over one model's variables. */
export class CycleRules {
  constructor(private readonly domains: Domains) {}

  /** Incompatibilities that forbid the solution's cycles; empty when it has none. */
  forbidCycles(values: readonly number[]): Incompatibility[] {
    const present = (v: number) => this.domains.variables[v]!.values[values[v]!]!.kind !== 'absent'
    const edges = new Array<Edge[] | undefined>(this.domains.variables.length)
    const edgesOf = (v: number): Edge[] => (edges[v] ??= this.edgesOf(v, values, present))
    const out: Incompatibility[] = []
    const variables = this.domains.variables.length
    function* presentVariables() {
      for (let v = 0; v < variables; v++) if (present(v)) yield v
    }
    for (const { path } of walkGraph(variables, presentVariables(), edgesOf, (edge) => edge.to).cycles) {
      if (!path.some((v) => this.domains.variables[v]!.values[values[v]!]!.kind !== 'keep')) continue
      const terms: Term[] = []
      for (let k = 0; k + 1 < path.length; k++) {
        const edge = edgesOf(path[k]!).find((e) => e.to === path[k + 1])!
        terms.push(
          this.withDependency(path[k]!, edge.dep),
          ...(edge.terms ? edge.terms() : this.packageTerms(edge.to, edge.dep as PackageDependency)),
        )
      }
      const labels = path.map(
        (v) => `${this.domains.variables[v]!.label}@${this.domains.variables[v]!.valueLabels[values[v]!]}`,
      )
      const inc = incompatibility(terms, {
        kind: 'external',
        text: () =>
          `${labels.join(' -> ')} would be a cycle (detected cycle on: ${this.domains.variables[path[0]!]!.label})`,
      })
      if (inc) out.push(inc)
    }
    return out
  }

  /** The values of `v` that have the dependency (the first term of an edge). */
  private withDependency(v: number, dep: Dependency): Term {
    const values = this.domains.variables[v]!.values
    const key = dependencyKey(dep)
    return {
      variable: v,
      set: ValueSet.where(
        values.length,
        (i) => values[i]!.kind !== 'absent' && values[i]!.deps.some((d) => dependencyKey(d) === key),
      ),
    }
  }

  /** The terms of a package edge to `y`: `y` at a version in the range (any present version if the range does not parse). */
  private packageTerms(y: number, dep: PackageDependency): Term[] {
    const parsed = parseConstraint(dep.version)
    return [
      { variable: y, set: parsed.ok ? this.domains.satisfying(y, parsed.constraint) : this.domains.absentSet(y).not() },
    ]
  }

  /** The present variable a package dependency of `v` resolves to, if another. */
  private packageTarget(v: number, name: string, present: (v: number) => boolean): number | undefined {
    const y = this.domains.byId.get(this.domains.scope(name, this.domains.variables[v]!.namespace))
    return y === undefined || y === v || !present(y) ? undefined : y
  }

  /**
   * The planner's edges from a present variable at its value: package, first
   * present API provider, first met alternative. A package edge's terms are
   * derived from its dependency when a cycle needs them (most edges are
   * package edges, and few lie on a cycle); the others carry theirs.
   */
  private edgesOf(v: number, values: readonly number[], present: (v: number) => boolean): Edge[] {
    const variable = this.domains.variables[v]!
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
        if (to !== undefined && (!parsed.ok || this.domains.satisfying(to, parsed.constraint).has(values[to]!))) {
          const before = [...unmet]
          out.push({ to, dep, terms: () => [...this.packageTerms(to, alt), ...before] })
          break
        }
        const y = this.domains.byId.get(this.domains.scope(alt.name, variable.namespace))
        if (y !== undefined && parsed.ok)
          unmet.push({ variable: y, set: this.domains.satisfying(y, parsed.constraint).not() })
      }
    }
    return out
  }

  /** The edge of an API dependency of `v`: none when `v` or the cluster serves it, else to its first present provider. */
  private apiEdge(
    v: number,
    key: string,
    values: readonly number[],
  ): { to: number; terms: () => Term[] } | undefined | 'served' {
    if (this.domains.context.clusterAPIs.has(key)) return 'served'
    const providers = this.domains
      .providing(key, this.domains.variables[v]!.namespace)
      .sort((a, b) => (this.domains.variables[a.variable]!.id < this.domains.variables[b.variable]!.id ? -1 : 1))
    // A package that provides the API itself needs no other (the planner's rule).
    const own = providers.find((p) => p.variable === v)
    if (own?.set.has(values[v]!)) return 'served'
    const first = providers.find((p) => p.set.has(values[p.variable]!))
    if (!first) return undefined
    const before = providers
      .filter((p) => this.domains.variables[p.variable]!.id < this.domains.variables[first.variable]!.id)
      .map((p) => ({ variable: p.variable, set: p.set.not() }))
    const notOwn = own ? [{ variable: v, set: own.set.not() }] : []
    return { to: first.variable, terms: () => [first, ...before, ...notOwn] }
  }
}
