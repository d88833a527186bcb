/**
 * `--now RFC3339`: the time a run acts at (rollout gates and windows, the
 * dates of the commits and tags it writes). Parsed here, once; everything
 * downstream takes the Date, and only the CLI reads the clock when the
 * option is absent.
 */
import { parseRfc3339 } from '../../functions/api/rfc3339.js'
import { UsageError } from './cli-io.js'

/** The value of `--now`, or a usage error naming the option and the value (exit 2). */
export function parseNowOption(value: string): { ok: true; now: Date } | { ok: false; error: string } {
  const parsed = parseRfc3339(value.trim())
  if (parsed.ok) return { ok: true, now: parsed.date }
  return { ok: false, error: `--now ${JSON.stringify(value)} ${parsed.error}` }
}

/** The time a command acts at: `--now`'s, else the clock's; a bad value is a usage error (exit 2). */
export function nowOf(option: string | undefined): Date {
  if (option === undefined) return new Date()
  const parsed = parseNowOption(option)
  if (!parsed.ok) throw new UsageError(parsed.error)
  return parsed.now
}
