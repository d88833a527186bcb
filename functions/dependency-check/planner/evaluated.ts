/** What the report gathers as it evaluates a plan's dependencies, shared by report.ts and graph-conflicts.ts. */
import type { Dependency } from '../../api/dependencies.js'
import type { Conflict, DependencyReport } from '../plan.js'

/** One dependency of one node as the report evaluated it. */
export interface Evaluated {
  /** The position (among the graph's nodes in id order) of the present node the dependency resolves to, if any. */
  target: number | undefined
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
