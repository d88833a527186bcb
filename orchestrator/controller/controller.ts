/**
 * `kpt-variants controller`, while this replica leads: the fleet watched
 * (fleet-cache.ts), and a render after each change of it, of only the
 * PackageVariants the change affects (changes.ts, plan/scope.ts), through the
 * same render as `render --cluster` (run/render-fleet.ts), status written back
 * the same way. One cycle at a time; changes that arrive during a cycle are
 * taken together by the next. A full render at the start, at every resync
 * (the safety net for what no watch sees: a downstream repository changed by
 * hand, a render that failed), and when the upstream repositories changed
 * (polled, or a webhook's call) or a dependency kind did (they change whole
 * repositories' dependency plans).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import type { ClusterClient } from '../fleet/cluster-client.js'
import type { RenderScope } from '../plan/scope.js'
import { sortReports } from '../report/report.js'
import type { RunReport, VariantReport } from '../report/report.js'
import { describeFailure } from '../report/failure.js'
import { RenderMemo } from '../run/memo.js'
import { renderFleet } from '../run/render-fleet.js'
import type { RenderSettings } from '../run/settings.js'
import { loadAndPlan } from '../run/setup.js'
import { statusUpdates } from '../status/cluster-status.js'
import { upstreamIndexDigest } from '../upstream/upstreams.js'
import type { UpstreamPins } from '../upstream/upstreams.js'
import { stopPoint } from '../util/stop-point.js'
import { affectedScope, fleetWideKeys, planState } from './changes.js'
import type { PlanState } from './changes.js'
import { FleetCache } from './fleet-cache.js'
import type { FleetChange } from './fleet-cache.js'
import { systemClock } from './lease.js'
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

export interface ControllerSettings {
  /** The render's settings but for the fleet directory (the snapshot) and what each cycle sets. */
  render: Omit<RenderSettings, 'fleetDir' | 'clusterScoped' | 'servedKinds' | 'scope' | 'upstreamPins'>
  /** Where the record of earlier renders is (the same as `render --cluster`'s): which variants read the whole fleet. */
  memo: string
  /** Watch only this namespace (and cluster-scoped kinds). */
  namespace?: string
  cacheDir: string
  /** A full render this long after the last one. */
  resyncMs: number
  /** Upstream repositories listed anew this often (0: only at a resync or a webhook call). */
  pollMs: number
  log: (line: string) => void
  onCycle?: (cycle: Cycle) => void
}

/** What the next cycle is to do. */
interface Pending {
  /** Render everything. */
  full: boolean
  /** List the upstream repositories anew. */
  upstream: boolean
  changes: FleetChange[]
  /** When the first of the changes was seen. */
  firstChangeAt?: number
  triggers: Set<Trigger>
}

/** Changes arriving this close together are rendered in one cycle. */
const gatherMs = 20
/** After a failed cycle, the next is tried this long after (doubling, up to the maximum). */
const firstRetryMs = 2_000
const maxRetryMs = 300_000

export class Controller {
  readonly #cache: FleetCache
  #pending: Pending = { full: true, upstream: true, changes: [], triggers: new Set(['start']) }
  #wake: (() => void) | undefined
  #stopped = false
  readonly #stopping = deferred()
  #timers: { resync?: unknown; poll?: unknown; gather?: unknown; retry?: unknown } = {}
  #retryMs = firstRetryMs
  #cycles = 0
  /** The plan of the last render, the refs it listed, and the latest report of each PackageVariant. */
  #state: PlanState | undefined
  #pins: UpstreamPins | undefined
  #upstreamDigest: string | undefined
  readonly #reports = new Map<string, VariantReport>()

  constructor(
    private readonly client: ClusterClient,
    private readonly settings: ControllerSettings,
    private readonly clock: Clock = systemClock,
  ) {
    this.#cache = new FleetCache(
      client,
      settings.namespace,
      settings.cacheDir,
      (change) => this.#changed(change),
      (message) => settings.log(message),
    )
  }

  /** Watches and renders until `stop`; a failure to find the fleet's kinds at the start is thrown. */
  async run(): Promise<void> {
    try {
      await this.#cache.start()
      this.#schedulePoll()
      while (!this.#stopped) {
        await this.#next()
        if (this.#stopped) break
        await this.#cycle()
      }
    } finally {
      this.#cache.stop()
      for (const timer of Object.values(this.#timers)) this.clock.clearTimeout(timer)
    }
  }

  /** Stops after the cycle under way, if any. */
  stop(): void {
    this.#stopped = true
    this.#wake?.()
    this.#stopping.resolve()
  }

  /** Lists the upstream repositories anew now (a webhook's call). */
  upstreamChanged(): void {
    this.#request({ upstream: true, trigger: 'upstream' })
  }

  /** A full render now (SIGHUP), with discovery asked again (a CRD made since is found). */
  resync(): void {
    this.#cache.rediscover()
    this.#request({ full: true, trigger: 'resync' })
  }

  #changed(change: FleetChange): void {
    // A full render is to come: it renders whatever changed (the start's lists report every object).
    if (this.#pending.full) return
    this.#pending.changes.push(change)
    this.#pending.firstChangeAt ??= this.clock.now()
    // A dependency kind changes repositories' dependency plans: those are worked out whole.
    this.#request(change.dependencies ? { full: true, trigger: 'fleet' } : { trigger: 'fleet' })
  }

  #request(what: { full?: boolean; upstream?: boolean; trigger: Trigger }): void {
    if (what.full) this.#pending.full = true
    if (what.upstream) this.#pending.upstream = true
    this.#pending.triggers.add(what.trigger)
    // Changes are gathered for a moment: an apply of many objects is one cycle.
    if (what.trigger === 'fleet' && this.#timers.gather === undefined) {
      this.#timers.gather = this.clock.setTimeout(() => {
        delete this.#timers.gather
        this.#wake?.()
      }, gatherMs)
    }
    this.#wake?.()
  }

  /** Waits until something is to be done (or the controller stops). */
  async #next(): Promise<void> {
    const due = () =>
      this.#pending.triggers.size > 0 && this.#timers.gather === undefined && this.#timers.retry === undefined
    while (!this.#stopped && !due()) await new Promise<void>((resolve) => (this.#wake = resolve))
    this.#wake = undefined
  }

  async #cycle(): Promise<void> {
    let pending: Pending | undefined
    const startedAt = this.clock.now()
    const delay = monitorEventLoopDelay({ resolution: 10 })
    delay.enable()
    const scratch = mkdtempSync(join(tmpdir(), 'kpt-variants-controller-'))
    const phases: CyclePhases = { snapshot: 0, plan: 0, scope: 0, render: 0, status: 0 }
    let phaseStart = 0
    const phaseDone = (phase: keyof CyclePhases) => {
      const now = this.clock.now()
      phases[phase] = now - phaseStart
      phaseStart = now
    }
    try {
      // Every resource listed first: what their lists report belongs to this cycle.
      await Promise.race([this.#cache.ready(), this.#stopping.promise])
      if (this.#stopped) return
      pending = this.#pending
      this.#pending = { full: false, upstream: false, changes: [], triggers: new Set() }
      phaseStart = this.clock.now()
      const snapshot = this.#cache.write()
      phaseDone('snapshot')
      for (const warning of snapshot.warnings) if (pending.full) this.settings.log(`warning: ${warning}`)
      const base = {
        ...this.settings.render,
        fleetDir: snapshot.dir,
        clusterScoped: snapshot.clusterScoped,
        servedKinds: snapshot.servedKinds,
      }
      // Planned as the render plans: at the refs the last listing read, unless this cycle lists the upstreams anew.
      const listAnew = pending.full || pending.upstream || !this.#pins
      const planned = await loadAndPlan(listAnew ? base : { ...base, upstreamPins: this.#pins! }, scratch)
      const pins = await planned.sources.pins()
      const upstreamDigest = upstreamIndexDigest(planned.upstreams.index)
      phaseDone('plan')
      const state = planState(planned.plan, planned.fleet)
      // New upstream revisions may change what any repository's dependencies resolve to: everything is rendered.
      const full = pending.full || !this.#state || upstreamDigest !== this.#upstreamDigest
      let scope: RenderScope | undefined
      if (!full) {
        const rendered = new Set(
          [...this.#reports.values()]
            .filter((r) => r.status !== 'failed')
            .map((r) => r.subject.slice('PackageVariant '.length)),
        )
        const records = RenderMemo.read(this.settings.memo)
        scope = affectedScope(this.#state!, state, { always: fleetWideKeys(planned.plan, records, rendered), records })
      }
      phaseDone('scope')
      const report: RunReport =
        scope && scope.variants.length === 0
          ? { dryRun: false, variants: [], problems: [] }
          : // onPlan: this run writes status (no quiet run, see quiet-run.ts).
            await renderFleet(
              { ...base, upstreamPins: pins, ...(scope ? { scope } : {}) },
              undefined,
              () => {},
              planned,
            )
      phaseDone('render')
      this.#state = state
      this.#pins = pins
      this.#upstreamDigest = upstreamDigest
      this.#remember(report, scope, state)
      if (full) this.#scheduleResync()
      // Status from the whole plan and every variant's latest report, as a full render writes it.
      const outcome = {
        variants: planned.plan.variants,
        failures: planned.plan.failures,
        report: { ...report, variants: [...this.#reports.values()] },
        sharded: false,
      }
      const updates = statusUpdates(
        snapshot.variants,
        snapshot.sets,
        outcome,
        new Date(this.clock.now()).toISOString().replace(/\.\d+Z$/, 'Z'),
      )
      await stopPoint('status-computed')
      const written =
        updates.length > 0
          ? await this.client.writeStatus(updates, snapshot.statusResources)
          : { written: 0, failures: [] }
      phaseDone('status')
      // A status not written (the API server unreachable, etcd down) is written by a cycle of its own after a
      // while, as a failed cycle is tried again: no watch event would bring it, and until then it says what git no longer holds.
      const statusRetryMs = written.failures.length > 0 ? this.#retryMs : undefined
      // A set naming a kind the server does not serve may be waiting for its CRD (installed after this replica
      // started, as `kpt live apply` of a fleet and its CRDs does): discovery is asked again, backing off as a retry.
      const unservedKindMs =
        statusRetryMs === undefined && planned.plan.failures.some((f) => f.code === 'NoMatchingTargets')
          ? this.#retryMs
          : undefined
      if (statusRetryMs !== undefined) {
        this.#pending.triggers.add('status')
        this.#retryLater()
      } else if (unservedKindMs !== undefined) {
        this.#cache.rediscover()
        this.#pending.full = true
        this.#pending.triggers.add('resync')
        this.#retryLater()
      } else this.#retryMs = firstRetryMs
      const cycle: Cycle = {
        cycle: ++this.#cycles,
        trigger: [...pending.triggers],
        changed: [
          ...new Set(
            pending.changes.map((c) => `${c.served.resource}${c.served.group ? `.${c.served.group}` : ''} ${c.name}`),
          ),
        ].slice(0, 20),
        scope: scope ?? 'all',
        report: { ...report, variants: sortReports(report.variants) },
        status: { written: written.written, changed: updates.length, failures: written.failures },
        startedAt,
        doneAt: this.clock.now(),
        ...(pending.firstChangeAt !== undefined ? { firstChangeAt: pending.firstChangeAt } : {}),
        memory: liveMemory(),
        eventLoopDelayMs: Math.round(delay.max / 1e6),
        phases,
      }
      this.settings.log(describeCycle(cycle, planned.plan.variants.length))
      if (statusRetryMs !== undefined) this.settings.log(`writing the status again in ${statusRetryMs / 1000} s`)
      if (unservedKindMs !== undefined)
        this.settings.log(`a set names a kind the server does not serve: discovery again in ${unservedKindMs / 1000} s`)
      this.settings.onCycle?.(cycle)
    } catch (err) {
      // Tried again, with everything it was to do, after a while; meanwhile changes gather.
      this.settings.log(`cycle failed (trying again in ${this.#retryMs / 1000} s): ${(err as Error).message}`)
      if (pending) {
        this.#pending.full ||= pending.full
        this.#pending.upstream ||= pending.upstream
        this.#pending.changes.unshift(...pending.changes)
        if (pending.firstChangeAt !== undefined)
          this.#pending.firstChangeAt = Math.min(pending.firstChangeAt, this.#pending.firstChangeAt ?? Infinity)
        for (const t of pending.triggers) this.#pending.triggers.add(t)
      }
      this.#retryLater()
    } finally {
      delay.disable()
      rmSync(scratch, { recursive: true, force: true })
    }
  }

  /** The next cycle waits for the retry timer (doubling, up to the maximum, until a cycle goes through). */
  #retryLater(): void {
    this.clock.clearTimeout(this.#timers.retry)
    this.#timers.retry = this.clock.setTimeout(() => {
      delete this.#timers.retry
      this.#wake?.()
    }, this.#retryMs)
    this.#retryMs = Math.min(this.#retryMs * 2, maxRetryMs)
  }

  /** Keeps the latest report of each PackageVariant still in the plan (a full render's replace them all). */
  #remember(report: RunReport, scope: RenderScope | undefined, state: PlanState): void {
    if (!scope) this.#reports.clear()
    else for (const key of scope.variants) this.#reports.delete(`PackageVariant ${key}`)
    for (const v of report.variants)
      if (v.subject.startsWith('PackageVariant ') && v.status !== 'deleted' && v.status !== 'orphaned')
        this.#reports.set(v.subject, v)
    for (const subject of this.#reports.keys())
      if (!state.digests.has(subject.slice('PackageVariant '.length))) this.#reports.delete(subject)
  }

  #scheduleResync(): void {
    this.clock.clearTimeout(this.#timers.resync)
    this.#timers.resync = this.clock.setTimeout(() => this.resync(), this.settings.resyncMs)
  }

  #schedulePoll(): void {
    if (this.settings.pollMs <= 0) return
    this.#timers.poll = this.clock.setTimeout(() => {
      this.#request({ upstream: true, trigger: 'upstream' })
      this.#schedulePoll()
    }, this.settings.pollMs)
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {}
  const promise = new Promise<void>((r) => (resolve = r))
  return { promise, resolve }
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
function liveMemory(): { rss: number; heapUsed: number } {
  const collect = (globalThis as { gc?: () => void }).gc
  if (collect) collect()
  const { rss, heapUsed } = process.memoryUsage()
  return { rss, heapUsed }
}
