/**
 * The record of one controller cycle (controller.ts): what started it, what
 * it rendered and wrote, where its time went, as `--json` prints it and the
 * log summarizes it.
 */
import type { RenderScope } from '../plan/scope.js'
import type { RunReport } from '../report/report.js'
import { describeFailure } from '../report/failure.js'
import type { Clock } from './lease.js'

/** What a cycle was started by (`status`: the last cycle's status writes failed, and are tried again). */
export type Trigger = 'start' | 'resync' | 'upstream' | 'fleet' | 'status'

/** One cycle, as `--json` prints it (a line) and the log summarizes it. */
export interface Cycle {
  cycle: number
  trigger: Trigger[]
  /** The objects whose change started it (`resource.group namespace/name`), at most 20. */
  changed: string[]
  /** `all`, or the PackageVariants rendered and the repositories opened. */
  scope: 'all' | RenderScope
  report: RunReport
  status: { written: number; changed: number; failures: string[] }
  /** When the cycle started and ended, and when the first change it took was seen (ms since the epoch). */
  startedAt: number
  doneAt: number
  firstChangeAt?: number
  /** The controller's memory at the end of the cycle (bytes). */
  memory: { rss: number; heapUsed: number }
  /** The longest the event loop was held up during the cycle (ms): how late a timer can fire. */
  eventLoopDelayMs: number
  /** Where the cycle's time went (ms), phase by phase: what to make faster first. */
  phases: CyclePhases
}

/**
 * A cycle's phases: the snapshot written, the fleet loaded and planned (the
 * upstreams listed), the plan compared with the last (the scope), the
 * render (repositories opened, variants rendered, pushed), the status written.
 */
export interface CyclePhases {
  snapshot: number
  plan: number
  scope: number
  render: number
  status: number
}

/** Times a cycle's phases, each from the end of the one before. */
export class PhaseTimer {
  readonly phases: CyclePhases = { snapshot: 0, plan: 0, scope: 0, render: 0, status: 0 }
  #start = 0

  constructor(private readonly clock: Clock) {}

  /** The first phase starts now. */
  start(): void {
    this.#start = this.clock.now()
  }

  /** `phase` ends now, and the next starts. */
  done(phase: keyof CyclePhases): void {
    const now = this.clock.now()
    this.phases[phase] = now - this.#start
    this.#start = now
  }
}

/** A cycle in one line: why, what was rendered, how it went. */
export function describeCycle(cycle: Cycle, planned: number): string {
  const counts = new Map<string, number>()
  for (const v of cycle.report.variants) counts.set(v.status, (counts.get(v.status) ?? 0) + 1)
  const what =
    cycle.scope === 'all' ? `all ${planned} variant(s)` : `${cycle.scope.variants.length} of ${planned} variant(s)`
  const outcome = counts.size === 0 ? 'nothing to do' : [...counts].map(([status, n]) => `${n} ${status}`).join(', ')
  const status =
    cycle.status.changed === 0
      ? 'no status changed'
      : `status: ${cycle.status.written} of ${cycle.status.changed} written`
  const lines = [
    `cycle ${cycle.cycle} (${cycle.trigger.join(', ')}${cycle.changed.length > 0 ? `: ${cycle.changed.join(', ')}` : ''}): ${what}: ${outcome}; ${status}; ${cycle.doneAt - cycle.startedAt} ms`,
  ]
  for (const v of cycle.report.variants)
    if (v.status === 'failed') lines.push(`  ${v.path ?? v.subject}: ${v.reasons.map(describeFailure).join('; ')}`)
  for (const failure of cycle.status.failures) lines.push(`  ${failure}`)
  return lines.join('\n')
}

/**
 * The process's memory after the cycle. Started with `--expose-gc` (the
 * bench's soak), a full collection runs first, so that `heapUsed` is the live
 * heap rather than wherever V8's next collection happens to be.
 */
export function liveMemory(): { rss: number; heapUsed: number } {
  const collect = (globalThis as { gc?: () => void }).gc
  if (collect) collect()
  const { rss, heapUsed } = process.memoryUsage()
  return { rss, heapUsed }
}
