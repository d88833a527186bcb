/**
 * An injected clock for the kpt-variants processes a test starts: each run
 * can be made to happen later than the system's clock says, instead of the
 * test sleeping (see clock-ahead.js). Only ever moved forward, so the runs of
 * one test see time pass in order.
 */
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { repoRoot } from '../e2e/runner.js'

const preload = pathToFileURL(join(repoRoot, 'test', 'support', 'clock-ahead.js')).href

/** How long after a file's modification a run trusts its metadata (orchestrator/package/directory.ts's racy window), and a margin. */
export const pastRacyWindowMs = 2100

export class TestClock {
  private aheadMs = 0

  /** Moves the clock of the runs started from now on `ms` further ahead of the system's. */
  advance(ms: number): void {
    this.aheadMs += ms
  }

  /** The environment of a run at this clock's time (extends `env`'s NODE_OPTIONS). */
  env(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
    if (this.aheadMs === 0) return {}
    return {
      NODE_OPTIONS: `${env['NODE_OPTIONS'] ?? ''} --import=${preload}`.trim(),
      KPT_VARIANTS_TEST_CLOCK_AHEAD_MS: String(this.aheadMs),
    }
  }
}
