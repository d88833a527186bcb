/**
 * One leader at a time, through a `coordination.k8s.io` Lease, as
 * client-go's leader election keeps one (client-node has no such helper).
 * The leader renews the Lease every retry period; a standby reads it every
 * retry period and takes it once the record has not changed for the lease's
 * duration. Time is this replica's own clock only (another replica's
 * `renewTime` is never compared with it), and injected, so the rules are
 * tested without waiting.
 *
 * Within the lease duration: a standby that sees the record change dates
 * the change to its previous read (the renewal happened after it), never
 * later, and wakes exactly when the lease runs out; so it takes over at most
 * one lease duration after the leader's last renewal, hence after the leader
 * died. Safety: a leader that could not renew for the renew deadline stops
 * leading, and a standby takes over no earlier than a lease duration minus
 * a retry period after the last renewal; the settings must keep the first
 * shorter than the second (`checkTiming`).
 */

/** The Lease's spec, as the API serves it. */
export interface LeaseSpec {
  holderIdentity?: string
  leaseDurationSeconds?: number
  acquireTime?: string
  renewTime?: string
  leaseTransitions?: number
}

/** The Lease object's API. */
export interface LeaseApi {
  /** The Lease and its resourceVersion; undefined when there is none. */
  get(): Promise<{ spec: LeaseSpec; resourceVersion: string } | undefined>
  /** Creates it; false when another replica created it first. Resolves to its resourceVersion. */
  create(spec: LeaseSpec): Promise<string | false>
  /** Replaces it if it is still at `resourceVersion`; false when it changed since. Resolves to the new resourceVersion. */
  update(spec: LeaseSpec, resourceVersion: string): Promise<string | false>
}

/** Time, injected: milliseconds and timers. */
export interface Clock {
  now(): number
  setTimeout(callback: () => void, ms: number): unknown
  clearTimeout(timer: unknown): void
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (timer) => clearTimeout(timer as ReturnType<typeof setTimeout>),
}

/** client-go's defaults: a 15 s lease, renewed every 2 s, given up after 10 s without a renewal. */
export interface ElectionTiming {
  leaseDurationMs: number
  renewDeadlineMs: number
  retryPeriodMs: number
}

export const defaultTiming: ElectionTiming = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 }

/** Why timings cannot keep one leader at a time, or undefined. */
export function checkTiming(timing: ElectionTiming): string | undefined {
  const { leaseDurationMs: lease, renewDeadlineMs: deadline, retryPeriodMs: retry } = timing
  if (lease < 1000 || lease % 1000 !== 0) return 'the lease duration must be a whole number of seconds, at least 1'
  if (retry <= 0 || deadline <= 0) return 'the renew deadline and the retry period must be longer than 0'
  if (deadline + retry >= lease)
    return 'the renew deadline plus the retry period must be shorter than the lease duration (a standby may take over a retry period early)'
  return undefined
}

/** What the election tells the controller's log. */
export type ElectionLog = (message: string) => void

export class LeaderElector {
  /** The record as last read (its text), and the latest time this replica knows it was written after. */
  #observed: { text: string; since: number } | undefined
  /** When the previous read was sent: a change first seen now was made after it. */
  #previousRead: number | undefined
  #resourceVersion = ''
  #spec: LeaseSpec = {}
  /** The holder this replica last said it stands by for. */
  #standingBy: string | undefined
  #leading = false
  #stopped = false
  #timer: unknown
  #deadline: unknown
  #wake: (() => void) | undefined
  #lost: { promise: Promise<string>; resolve: (why: string) => void }

  constructor(
    private readonly api: LeaseApi,
    readonly identity: string,
    private readonly timing: ElectionTiming,
    private readonly clock: Clock = systemClock,
    private readonly log: ElectionLog = () => {},
  ) {
    let resolve: (why: string) => void = () => {}
    this.#lost = { promise: new Promise<string>((r) => (resolve = r)), resolve: (why) => resolve(why) }
  }

  get leading(): boolean {
    return this.#leading
  }

  /** Resolves, with the reason, once this replica stops leading (it never leads again: a new elector is needed). */
  get lost(): Promise<string> {
    return this.#lost.promise
  }

  /** Tries until this replica leads (true), then renews in the background; false when stopped first. */
  async acquire(): Promise<boolean> {
    while (!this.#stopped) {
      const readAt = this.clock.now()
      let wait = this.timing.retryPeriodMs
      try {
        const result = await this.#tryAcquire(readAt)
        if (result === true) {
          this.#startLeading(readAt)
          return true
        }
        wait = result
      } catch (err) {
        this.log(`cannot read or write the lease: ${(err as Error).message}`)
      }
      await this.#sleep(wait)
    }
    return false
  }

  /**
   * Stops trying and renewing; a leader gives the lease up, so that another replica takes it at once.
   * Called again after an acquisition that was under way when it was first called (a replica told to
   * stop as the old leader released the lease), it gives that lease up too.
   */
  async stop(): Promise<void> {
    this.#stopped = true
    this.clock.clearTimeout(this.#timer)
    this.clock.clearTimeout(this.#deadline)
    this.#wake?.()
    if (!this.#leading) return
    this.#leading = false
    const now = this.#time(this.clock.now())
    // As client-go releases: no holder, and a lease of one second.
    const released = (spec: LeaseSpec): LeaseSpec => ({
      ...spec,
      holderIdentity: '',
      leaseDurationSeconds: 1,
      renewTime: now,
    })
    try {
      let written = await this.api.update(released(this.#spec), this.#resourceVersion)
      if (written === false) {
        // Changed since: by a renewal of ours that landed first (its answer not yet in)? Still ours, it is released.
        const current = await this.api.get()
        if (current?.spec.holderIdentity === this.identity)
          written = await this.api.update(released(current.spec), current.resourceVersion)
      }
      this.log(written === false ? 'did not release the lease: another replica holds it' : 'released the lease')
    } catch (err) {
      this.log(`cannot release the lease: ${(err as Error).message}`)
    }
    this.#lost.resolve('stopped')
  }

  /** true when this replica now holds the lease; else how long to wait before reading it again. */
  async #tryAcquire(readAt: number): Promise<true | number> {
    const current = await this.api.get()
    const retry = this.timing.retryPeriodMs
    if (!current) {
      const created = await this.api.create(this.#mine(readAt, 0))
      if (created === false) return 0
      this.#resourceVersion = created
      this.log(`acquired the lease (created it)`)
      return true
    }
    const text = JSON.stringify(current.spec)
    if (this.#observed?.text !== text) this.#observed = { text, since: this.#previousRead ?? readAt }
    this.#previousRead = readAt
    const spec = current.spec
    const holder = spec.holderIdentity ?? ''
    const expiry = this.#observed.since + (spec.leaseDurationSeconds ?? this.timing.leaseDurationMs / 1000) * 1000
    const now = this.clock.now()
    if (holder !== '' && holder !== this.identity && now < expiry) {
      if (this.#standingBy !== holder) this.log(`standing by: the lease is held by ${holder}`)
      this.#standingBy = holder
      return Math.max(0, Math.min(retry, expiry - now))
    }
    const transitions = (spec.leaseTransitions ?? 0) + (holder === this.identity ? 0 : 1)
    const updated = await this.api.update(this.#mine(readAt, transitions), current.resourceVersion)
    if (updated === false) return retry
    this.#resourceVersion = updated
    this.log(
      holder === '' || holder === this.identity
        ? 'acquired the lease'
        : `acquired the lease (from ${holder}, whose lease ran out)`,
    )
    return true
  }

  #mine(at: number, transitions: number): LeaseSpec {
    const time = this.#time(at)
    this.#spec = {
      holderIdentity: this.identity,
      leaseDurationSeconds: this.timing.leaseDurationMs / 1000,
      acquireTime: time,
      renewTime: time,
      leaseTransitions: transitions,
    }
    return this.#spec
  }

  #startLeading(sentAt: number): void {
    this.#leading = true
    this.#armDeadline(sentAt)
    void this.#renewLoop()
  }

  /** Stops leading `renewDeadline` after the last renewal sent, unless another succeeds first. */
  #armDeadline(lastSent: number): void {
    this.clock.clearTimeout(this.#deadline)
    const left = lastSent + this.timing.renewDeadlineMs - this.clock.now()
    this.#deadline = this.clock.setTimeout(
      () => this.#lose(`could not renew the lease for ${this.timing.renewDeadlineMs / 1000} s`),
      Math.max(0, left),
    )
  }

  async #renewLoop(): Promise<void> {
    while (this.#leading && !this.#stopped) {
      await this.#sleep(this.timing.retryPeriodMs)
      if (!this.#leading || this.#stopped) return
      const sentAt = this.clock.now()
      try {
        const renewed = await this.#renew(sentAt)
        if (!this.#leading || this.#stopped) return
        if (renewed === true) this.#armDeadline(sentAt)
        else return this.#lose(`the lease is held by ${renewed}`)
      } catch (err) {
        this.log(`cannot renew the lease: ${(err as Error).message}`)
      }
    }
  }

  /** true when renewed; else who holds the lease now. */
  async #renew(sentAt: number): Promise<true | string> {
    const spec = { ...this.#spec, renewTime: this.#time(sentAt) }
    let updated = await this.api.update(spec, this.#resourceVersion)
    if (updated === false) {
      // Changed since this replica wrote it: still ours (a write of ours whose answer was lost)?
      const current = await this.api.get()
      const holder = current?.spec.holderIdentity ?? ''
      if (!current || holder !== this.identity) return holder || 'no one'
      updated = await this.api.update({ ...current.spec, renewTime: this.#time(sentAt) }, current.resourceVersion)
      if (updated === false) return 'another replica'
    }
    this.#spec = spec
    this.#resourceVersion = updated
    return true
  }

  #lose(why: string): void {
    if (!this.#leading) return
    this.#leading = false
    this.clock.clearTimeout(this.#deadline)
    this.log(`lost the lease: ${why}`)
    this.#lost.resolve(why)
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.#wake = resolve
      this.#timer = this.clock.setTimeout(resolve, ms)
    })
  }

  /** A MicroTime: RFC 3339 with microseconds, as the API server stores it. */
  #time(ms: number): string {
    return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z')
  }
}
