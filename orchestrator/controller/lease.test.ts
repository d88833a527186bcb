import { checkTiming, LeaderElector } from './lease.js'
import type { Clock, ElectionTiming, LeaseApi, LeaseSpec } from './lease.js'

/** A clock the test moves: timers fire in order as it advances, each after the promises before it settled. */
class FakeClock implements Clock {
  time = 1_000_000
  #timers: { at: number; seq: number; callback: () => void }[] = []
  #seq = 0

  now(): number {
    return this.time
  }

  setTimeout(callback: () => void, ms: number): unknown {
    const timer = { at: this.time + ms, seq: this.#seq++, callback }
    this.#timers.push(timer)
    return timer
  }

  clearTimeout(timer: unknown): void {
    this.#timers = this.#timers.filter((t) => t !== timer)
  }

  async advance(ms: number): Promise<void> {
    const end = this.time + ms
    for (;;) {
      await settle()
      const due = this.#timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at || a.seq - b.seq)[0]
      if (!due) break
      this.clearTimeout(due)
      this.time = due.at
      due.callback()
    }
    this.time = end
    await settle()
  }
}

const settle = () => new Promise((resolve) => setImmediate(resolve))

/** The Lease as the API server keeps it: optimistic concurrency by resourceVersion; every write recorded with its time. */
class LeaseStore {
  lease: { spec: LeaseSpec; resourceVersion: string } | undefined
  writes: { at: number; holder: string }[] = []
  #version = 0

  constructor(private readonly clock: FakeClock) {}

  /** One replica's view: `down` makes its requests never answered (a killed process), `failing` fail them (a partition). */
  api(): LeaseApi & { down: boolean; failing: boolean } {
    const answer = <T>(value: () => T): Promise<T> =>
      view.down
        ? new Promise<T>(() => {})
        : view.failing
          ? Promise.reject(new Error('connection refused'))
          : Promise.resolve().then(value)
    const view = {
      down: false,
      failing: false,
      get: () =>
        answer(() =>
          this.lease ? { spec: { ...this.lease.spec }, resourceVersion: this.lease.resourceVersion } : undefined,
        ),
      create: (spec: LeaseSpec) => answer(() => (this.lease ? false : this.#write(spec))),
      update: (spec: LeaseSpec, resourceVersion: string) =>
        answer(() => (this.lease?.resourceVersion !== resourceVersion ? false : this.#write(spec))),
    }
    return view
  }

  #write(spec: LeaseSpec): string {
    this.lease = { spec: { ...spec }, resourceVersion: String(++this.#version) }
    this.writes.push({ at: this.clock.now(), holder: spec.holderIdentity ?? '' })
    return this.lease.resourceVersion
  }

  /** When `holder` last wrote the lease. */
  lastWrite(holder: string): number {
    return this.writes.filter((w) => w.holder === holder).at(-1)!.at
  }
}

const timing: ElectionTiming = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 }

/** `count` replicas, replica i starting `offsetMs * i` after the first (so that their reads fall between the leader's renewals). */
function replicas(count: number, offsetMs = 0) {
  const clock = new FakeClock()
  const store = new LeaseStore(clock)
  const log: string[] = []
  const made = Array.from({ length: count }, (_, i) => {
    const api = store.api()
    const name = `replica-${i}`
    const elector = new LeaderElector(api, name, timing, clock, (m) => log.push(`${clock.time} ${name}: ${m}`))
    const leading = { at: undefined as number | undefined }
    clock.setTimeout(
      () =>
        void elector.acquire().then((ok) => {
          if (ok) leading.at = clock.now()
        }),
      offsetMs * i,
    )
    return { api, name, elector, leading }
  })
  return { clock, store, log, replicas: made }
}

describe('leader election through a Lease', () => {
  test('the first replica creates the lease and leads; the second stands by; the leader renews every retry period', async () => {
    const {
      clock,
      store,
      log,
      replicas: [a, b],
    } = replicas(2)
    await clock.advance(0)
    expect([a!.elector.leading, b!.elector.leading]).toEqual([true, false])
    expect(store.lease!.spec).toMatchObject({
      holderIdentity: 'replica-0',
      leaseDurationSeconds: 15,
      leaseTransitions: 0,
    })
    expect(store.lease!.spec.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/)
    await clock.advance(60_000)
    expect(b!.elector.leading).toBe(false)
    expect(store.writes.filter((w) => w.holder === 'replica-0')).toHaveLength(31)
    expect(log).toEqual([
      '1000000 replica-0: acquired the lease (created it)',
      '1000000 replica-1: standing by: the lease is held by replica-0',
    ])
  })

  test('a leader stopped while a renewal of its own has landed unanswered releases the lease all the same', async () => {
    const {
      clock,
      store,
      log,
      replicas: [a, b],
    } = replicas(2)
    await clock.advance(0)
    // The renewal written, its answer (the new resourceVersion) not yet in: the leader's version is stale.
    const lease = store.lease!
    await store.api().update({ ...lease.spec, renewTime: lease.spec.renewTime }, lease.resourceVersion)
    await a!.elector.stop()
    expect(store.lease!.spec).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1 })
    expect(log.at(-1)).toBe('1000000 replica-0: released the lease')
    // The standby takes it at its next read, not a lease duration later.
    await clock.advance(timing.retryPeriodMs)
    expect(b!.elector.leading).toBe(true)
  })

  test('a standby stopped while its acquisition is under way gives the lease it won up, and renews nothing', async () => {
    const {
      clock,
      store,
      replicas: [a, b],
    } = replicas(2)
    await clock.advance(0)
    // The leader releases (a Deployment scaled to none stops both at once); the standby's read is then in flight.
    await a!.elector.stop()
    await clock.advance(timing.retryPeriodMs - 1)
    const acquiring = b!.elector.acquire()
    void b!.elector.stop()
    await clock.advance(1)
    expect(await acquiring).toBe(true)
    await b!.elector.stop()
    expect(store.lease!.spec.holderIdentity).toBe('')
    const writes = store.writes.length
    await clock.advance(60_000)
    expect([b!.elector.leading, store.writes.length]).toEqual([false, writes])
  })

  test('when the leader dies, the standby takes over within the lease duration after its last renewal', async () => {
    for (const [diesAfter, offset] of [0, 1, 999, 1000, 1999, 7000].flatMap((d) =>
      [0, 1, 700, 1999].map((o) => [d, o] as const),
    )) {
      const {
        clock,
        store,
        replicas: [a, b],
      } = replicas(2, offset)
      await clock.advance(30_000 + diesAfter)
      a!.api.down = true
      const lastRenewal = store.lastWrite('replica-0')
      await clock.advance(30_000)
      expect(b!.elector.leading).toBe(true)
      const takeover = b!.leading.at! - lastRenewal
      // No later than a lease duration after the last renewal, and no earlier than a duration minus a retry period.
      expect([
        diesAfter,
        offset,
        takeover <= timing.leaseDurationMs,
        takeover >= timing.leaseDurationMs - timing.retryPeriodMs,
      ]).toEqual([diesAfter, offset, true, true])
      expect(store.lease!.spec).toMatchObject({ holderIdentity: 'replica-1', leaseTransitions: 1 })
    }
  })

  test('a leader cut off from the server stops leading before a standby can take over', async () => {
    const {
      clock,
      store,
      replicas: [a, b],
    } = replicas(2, 700)
    await clock.advance(10_000)
    a!.api.failing = true
    const lastRenewal = store.lastWrite('replica-0')
    const lost = a!.elector.lost.then((why) => ({ why, at: clock.now() }))
    await clock.advance(30_000)
    const { why, at } = await lost
    expect(why).toBe('could not renew the lease for 10 s')
    expect(at - lastRenewal).toBe(timing.renewDeadlineMs)
    expect(b!.elector.leading).toBe(true)
    expect(b!.leading.at!).toBeGreaterThan(at)
    // It never leads again, even when the server answers again.
    a!.api.failing = false
    await clock.advance(60_000)
    expect(a!.elector.leading).toBe(false)
  })

  test('a leader that finds another holder when it renews stops leading at once', async () => {
    const {
      clock,
      store,
      replicas: [a],
    } = replicas(1)
    await clock.advance(0)
    store.lease = { spec: { ...store.lease!.spec, holderIdentity: 'someone-else' }, resourceVersion: 'taken' }
    const lost = a!.elector.lost.then((why) => ({ why, at: clock.now() }))
    await clock.advance(timing.retryPeriodMs)
    expect(await lost).toEqual({ why: 'the lease is held by someone-else', at: clock.now() })
  })

  test('a leader that stops gives the lease up: the standby takes it at its next read', async () => {
    const {
      clock,
      store,
      replicas: [a, b],
    } = replicas(2)
    await clock.advance(5_000)
    await a!.elector.stop()
    const released = clock.now()
    expect(store.lease!.spec).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1 })
    await clock.advance(timing.retryPeriodMs)
    expect(b!.elector.leading).toBe(true)
    expect(b!.leading.at! - released).toBeLessThanOrEqual(timing.retryPeriodMs)
    expect(await a!.elector.lost).toBe('stopped')
  })

  test('two standbys racing for a lease that ran out: one wins', async () => {
    const { clock, replicas: all } = replicas(3)
    await clock.advance(1_000)
    all[0]!.api.down = true
    await clock.advance(60_000)
    // The dead one stopped leading (it could not renew); of the two standbys, exactly one leads.
    expect(all[0]!.elector.leading).toBe(false)
    expect(all.filter((r) => r.elector.leading)).toHaveLength(1)
  })

  test('timings that could make two leaders are refused', () => {
    expect(checkTiming(timing)).toBeUndefined()
    expect(checkTiming({ ...timing, renewDeadlineMs: 13_000 })).toMatch(/shorter than the lease duration/)
    expect(checkTiming({ ...timing, leaseDurationMs: 1500 })).toMatch(/whole number of seconds/)
    expect(checkTiming({ ...timing, retryPeriodMs: 0 })).toMatch(/longer than 0/)
  })
})
