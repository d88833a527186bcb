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
import type { IntervalHistogram } from 'node:perf_hooks'
import type { ClusterClient } from '../fleet/cluster-client.js'
import type { FleetPlan } from '../plan/plan.js'
import type { RenderScope } from '../plan/scope.js'
import { sortReports } from '../report/report.js'
import type { RunReport, VariantReport } from '../report/report.js'
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
import type { FleetChange, Snapshot } from './fleet-cache.js'
import { systemClock } from './lease.js'
import type { Clock } from './lease.js'
import { describeCycle, liveMemory, PhaseTimer } from './cycle.js'
import type { Cycle, CyclePhases, Trigger } from './cycle.js'

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
    const timer = new PhaseTimer(this.clock)
    try {
      // Every resource listed first: what their lists report belongs to this cycle.
      await Promise.race([this.#cache.ready(), this.#stopping.promise])
      if (this.#stopped) return
      pending = this.#pending
      this.#pending = { full: false, upstream: false, changes: [], triggers: new Set() }
      timer.start()
      const snapshot = this.#cache.write()
      timer.done('snapshot')
      for (const warning of snapshot.warnings) if (pending.full) this.settings.log(`warning: ${warning}`)
      const base = {
        ...this.settings.render,
        fleetDir: snapshot.dir,
        clusterScoped: snapshot.clusterScoped,
        servedKinds: snapshot.servedKinds,
      }
      const planned = await this.#plan(base, pending, scratch)
      timer.done('plan')
      // New upstream revisions may change what any repository's dependencies resolve to: everything is rendered.
      const full = pending.full || !this.#state || planned.upstreamDigest !== this.#upstreamDigest
      const scope = full ? undefined : this.#affected(planned)
      timer.done('scope')
      const report = await this.#render(base, planned, scope)
      timer.done('render')
      this.#rendered(planned, report, scope)
      if (full) this.#scheduleResync()
      const status = await this.#writeStatus(snapshot, planned.plan, report)
      timer.done('status')
      const retry = this.#retryAfter(status.written, planned.plan)
      const cycle = this.#record({ pending, scope, report, status, startedAt, delay, phases: timer.phases })
      this.#log(cycle, planned.plan.variants.length, retry)
    } catch (err) {
      // Tried again, with everything it was to do, after a while; meanwhile changes gather.
      this.settings.log(`cycle failed (trying again in ${this.#retryMs / 1000} s): ${(err as Error).message}`)
      if (pending) this.#requeue(pending)
      this.#retryLater()
    } finally {
      delay.disable()
      rmSync(scratch, { recursive: true, force: true })
    }
  }

  /**
   * The fleet snapshot loaded and planned as the render plans it: at the refs
   * the last listing read, unless this cycle lists the upstreams anew.
   */
  async #plan(base: RenderSettings, pending: Pending, scratch: string): Promise<CyclePlan> {
    const listAnew = pending.full || pending.upstream || !this.#pins
    const planned = await loadAndPlan(listAnew ? base : { ...base, upstreamPins: this.#pins! }, scratch)
    return {
      planned,
      plan: planned.plan,
      pins: await planned.sources.pins(),
      upstreamDigest: upstreamIndexDigest(planned.upstreams.index),
      state: planState(planned.plan, planned.fleet),
    }
  }

  /** The variants the changes since the last render affect, and those that read the whole fleet. */
  #affected({ plan, state }: CyclePlan): RenderScope {
    const rendered = new Set(
      [...this.#reports.values()]
        .filter((r) => r.status !== 'failed')
        .map((r) => r.subject.slice('PackageVariant '.length)),
    )
    const records = RenderMemo.read(this.settings.memo)
    return affectedScope(this.#state!, state, { always: fleetWideKeys(plan, records, rendered), records })
  }

  /** Renders the scope (none: everything) as `render --cluster` does; an empty scope renders nothing. */
  async #render(
    base: RenderSettings,
    { planned, pins }: CyclePlan,
    scope: RenderScope | undefined,
  ): Promise<RunReport> {
    if (scope && scope.variants.length === 0) return { dryRun: false, variants: [], problems: [] }
    // onPlan: this run writes status (no quiet run, see quiet-run.ts).
    return renderFleet({ ...base, upstreamPins: pins, ...(scope ? { scope } : {}) }, undefined, () => {}, planned)
  }

  /** What the next cycle compares with: this one's plan, the refs it listed, every variant's latest report. */
  #rendered(planned: CyclePlan, report: RunReport, scope: RenderScope | undefined): void {
    this.#state = planned.state
    this.#pins = planned.pins
    this.#upstreamDigest = planned.upstreamDigest
    this.#remember(report, scope, planned.state)
  }

  /** The status of the whole plan from every variant's latest report, as a full render writes it; what changed is written. */
  async #writeStatus(
    snapshot: Snapshot,
    plan: FleetPlan,
    report: RunReport,
  ): Promise<{ changed: number; written: StatusWrites }> {
    const outcome = {
      variants: plan.variants,
      failures: plan.failures,
      report: { ...report, variants: [...this.#reports.values()] },
      sharded: false,
    }
    const now = new Date(this.clock.now()).toISOString().replace(/\.\d+Z$/, 'Z')
    const updates = statusUpdates(snapshot.variants, snapshot.sets, outcome, now)
    await stopPoint('status-computed')
    const written =
      updates.length > 0
        ? await this.client.writeStatus(updates, snapshot.statusResources)
        : { written: 0, failures: [] }
    return { changed: updates.length, written }
  }

  /**
   * When the next cycle is to come without a change to bring it: a status not
   * written (the API server unreachable, etcd down) is written by a cycle of
   * its own after a while, as a failed cycle is tried again, since no watch
   * event would bring it and until then it says what git no longer holds; a
   * set naming a kind the server does not serve may be waiting for its CRD
   * (installed after this replica started, as `kpt live apply` of a fleet and
   * its CRDs does): discovery is asked again, backing off as a retry.
   */
  #retryAfter(written: StatusWrites, plan: FleetPlan): { statusMs?: number; unservedKindMs?: number } {
    if (written.failures.length > 0) {
      const statusMs = this.#retryMs
      this.#pending.triggers.add('status')
      this.#retryLater()
      return { statusMs }
    }
    if (plan.failures.some((f) => f.code === 'NoMatchingTargets')) {
      const unservedKindMs = this.#retryMs
      this.#cache.rediscover()
      this.#pending.full = true
      this.#pending.triggers.add('resync')
      this.#retryLater()
      return { unservedKindMs }
    }
    this.#retryMs = firstRetryMs
    return {}
  }

  /** The cycle's record, numbered, as it ends now. */
  #record(done: {
    pending: Pending
    scope: RenderScope | undefined
    report: RunReport
    status: { changed: number; written: StatusWrites }
    startedAt: number
    delay: IntervalHistogram
    phases: CyclePhases
  }): Cycle {
    const { pending, report, status } = done
    return {
      cycle: ++this.#cycles,
      trigger: [...pending.triggers],
      changed: changedObjects(pending.changes),
      scope: done.scope ?? 'all',
      report: { ...report, variants: sortReports(report.variants) },
      status: { written: status.written.written, changed: status.changed, failures: status.written.failures },
      startedAt: done.startedAt,
      doneAt: this.clock.now(),
      ...(pending.firstChangeAt !== undefined ? { firstChangeAt: pending.firstChangeAt } : {}),
      memory: liveMemory(),
      eventLoopDelayMs: Math.round(done.delay.max / 1e6),
      phases: done.phases,
    }
  }

  /** The cycle's line in the log, and when the next comes without a change. */
  #log(cycle: Cycle, planned: number, retry: { statusMs?: number; unservedKindMs?: number }): void {
    this.settings.log(describeCycle(cycle, planned))
    if (retry.statusMs !== undefined) this.settings.log(`writing the status again in ${retry.statusMs / 1000} s`)
    if (retry.unservedKindMs !== undefined)
      this.settings.log(
        `a set names a kind the server does not serve: discovery again in ${retry.unservedKindMs / 1000} s`,
      )
    this.settings.onCycle?.(cycle)
  }

  /** A failed cycle's work, put back before what arrived meanwhile. */
  #requeue(pending: Pending): void {
    this.#pending.full ||= pending.full
    this.#pending.upstream ||= pending.upstream
    this.#pending.changes.unshift(...pending.changes)
    if (pending.firstChangeAt !== undefined)
      this.#pending.firstChangeAt = Math.min(pending.firstChangeAt, this.#pending.firstChangeAt ?? Infinity)
    for (const t of pending.triggers) this.#pending.triggers.add(t)
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

/** What a cycle's status write did: how many were written, and the failures. */
type StatusWrites = Awaited<ReturnType<ClusterClient['writeStatus']>>

/** A cycle's plan: the fleet planned, the refs it listed, its upstreams' digest and the state changes are compared with. */
interface CyclePlan {
  planned: Awaited<ReturnType<typeof loadAndPlan>>
  plan: FleetPlan
  pins: UpstreamPins
  upstreamDigest: string
  state: PlanState
}

/** The objects whose change started a cycle (`resource.group namespace/name`), at most 20. */
function changedObjects(changes: readonly FleetChange[]): string[] {
  return [
    ...new Set(changes.map((c) => `${c.served.resource}${c.served.group ? `.${c.served.group}` : ''} ${c.name}`)),
  ].slice(0, 20)
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {}
  const promise = new Promise<void>((r) => (resolve = r))
  return { promise, resolve }
}
