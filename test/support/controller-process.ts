/**
 * `kpt-variants controller` as a real process, for the e2e tests: its
 * cycles (`--json`, a line each) and its log lines are collected as they
 * come, and a test waits on them (`cycle`, `logged`), never on time.
 */
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import type { Cycle } from '../../orchestrator/controller/cycle.js'
import { cliCommand } from './cli-run.js'

/** A cycle as `--json` prints it: the controller's own record of it, read back from its JSON line. */
export type CycleLine = Cycle

/** Processes still running, killed if the test process exits without stopping them. */
const running = new Set<ChildProcess>()
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL')
})

export class ControllerProcess {
  readonly cycles: CycleLine[] = []
  readonly log: string[] = []
  readonly #child: ChildProcess
  #waiters: (() => void)[] = []
  readonly exited: Promise<number | null>

  /** `nodeFlags`: flags for the controller's Node (the soak's `--expose-gc`). */
  constructor(
    args: readonly string[],
    options: { cwd: string; env: Record<string, string | undefined>; nodeFlags?: readonly string[] },
  ) {
    const [file, argv] = cliCommand(['controller', '--json', ...args], options.nodeFlags)
    this.#child = spawn(file, argv, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    running.add(this.#child)
    this.exited = new Promise((resolve) =>
      this.#child.once('exit', (code, signal) => {
        running.delete(this.#child)
        this.#notify()
        resolve(code ?? (signal ? null : null))
      }),
    )
    createInterface(this.#child.stdout!).on('line', (line) => {
      this.cycles.push(JSON.parse(line) as CycleLine)
      this.#notify()
    })
    createInterface(this.#child.stderr!).on('line', (line) => {
      this.log.push(line)
      this.#notify()
    })
  }

  get pid(): number {
    return this.#child.pid!
  }

  get running(): boolean {
    return this.#child.exitCode === null && this.#child.signalCode === null
  }

  #notify(): void {
    const waiters = this.#waiters
    this.#waiters = []
    for (const wake of waiters) wake()
  }

  /** Resolves with the first value `find` returns, checking now and after every line; rejects when the process exits first or after `timeout`. */
  async until<T>(find: () => T | undefined, what: string, timeout = 60_000): Promise<T> {
    const deadline = Date.now() + timeout
    for (;;) {
      const found = find()
      if (found !== undefined) return found
      if (!this.running)
        throw new Error(
          `the controller exited (${this.#child.exitCode ?? this.#child.signalCode}) before ${what}; its log:\n${this.log.join('\n')}`,
        )
      const left = deadline - Date.now()
      if (left <= 0)
        throw new Error(`no ${what} after ${timeout / 1000} s; the controller's log:\n${this.log.join('\n')}`)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left)
        this.#waiters.push(() => {
          clearTimeout(timer)
          resolve()
        })
      })
    }
  }

  /** The first cycle after cycle `after` (0: any) that `match` accepts. */
  cycle(match: (cycle: CycleLine) => boolean, what: string, after = 0, timeout?: number): Promise<CycleLine> {
    return this.until(() => this.cycles.find((c) => c.cycle > after && match(c)), what, timeout)
  }

  /** The number of the last cycle so far (0: none yet). */
  get lastCycle(): number {
    return this.cycles.at(-1)?.cycle ?? 0
  }

  /** The first log line (from line `from` on) that matches. */
  logged(pattern: RegExp, from = 0, timeout?: number): Promise<string> {
    return this.until(
      () => this.log.slice(from).find((line) => pattern.test(line)),
      `a log line matching ${pattern}`,
      timeout,
    )
  }

  /** Sends a signal. */
  signal(signal: NodeJS.Signals): void {
    this.#child.kill(signal)
  }

  /** SIGTERM, and the exit code. */
  async stop(): Promise<number | null> {
    if (this.running) this.#child.kill('SIGTERM')
    return this.exited
  }
}

/** `PackageVariant ns/name status` of each variant a cycle reported. */
export function outcomes(cycle: CycleLine): string[] {
  return cycle.report.variants.map((v) => `${v.subject} ${v.status}`)
}
