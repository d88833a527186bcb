/**
 * The model's vocabulary: the nodes the planner starts from, the variables
 * (one per installation that exists, or may) and their values.
 */
import type { Dependency, DependencyPolicy, GVK } from '../../api/dependencies.js'
import type { Constraint } from '../constraints.js'
import { gvkKey } from '../graph.js'
import type { CatalogIndex, IndexedVersion } from '../graph.js'
import type { Version } from '../versions.js'
import type { NamedVariable } from './explain.js'
import type { ValueSet } from './value-set.js'

/** A node the planner starts from: an installation or a target. */
export interface ModelNode {
  id: string
  package: string
  namespace: string
  /** `asDependency`: installed as another package's dependency (the `autoUpgrade` policy moves it to its highest version). */
  installed?: { version: Version; deps: Dependency[]; provides: GVK[]; asDependency?: boolean }
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
export interface Incoming {
  from: number
  set: ValueSet
  constraint: Constraint
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
export const absentValue: Value = Object.freeze({
  kind: 'absent',
  deps: Object.freeze([]) as unknown as Dependency[],
  provides: Object.freeze([]) as unknown as GVK[],
})

export class ModelVariable implements Variable {
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
    this.labels ??= this.values.map((x) =>
      x.kind === 'absent'
        ? undefined
        : `${x.version?.raw ?? '(any version)'}${x.kind === 'keep' ? ' (installed)' : ''}`,
    )
    return this.labels
  }
}

/** A dependency's identity for grouping (its declaration site aside). */
export function dependencyKey(dep: Dependency): string {
  if (dep.type === 'Package') return `P\0${dep.name}\0${dep.version}\0${dep.optional}`
  if (dep.type === 'GVK') return `G\0${gvkKey(dep.gvk)}\0${dep.optional}`
  return `A\0${dep.optional}\0${dep.anyOf.map(dependencyKey).join('\0')}`
}
