/**
 * The last failure of each variant of a fleet, kept in the cache by every
 * render, so `kpt-variants status` can show why a package was not rendered
 * (the output records what succeeded; this records what did not).
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { isFailureCode } from '../report/failure.js'
import type { Failure } from '../report/failure.js'
import type { RunReport } from '../report/report.js'
import { writeFileWhole } from '../util/write-file.js'

/** Last failures by subject (`PackageVariant ns/name`, ...): since when, and why (without stacks). */
export type LastFailures = Record<string, { time: string; reasons: Failure[] }>

/** The record of an output: `--git` records by the fleet, a directory output by the fleet and the directory (failureKey). */
function recordPath(cacheDir: string, key: string): string {
  return join(cacheDir, 'runs', `${createHash('sha1').update(key).digest('hex').slice(0, 16)}.json`)
}

/** The key of a directory output's record. */
export function directoryFailureKey(fleetId: string, outDir: string): string {
  return `${fleetId}\0--out ${outDir}`
}

/** Reads the last failures recorded under `key` (none when no run recorded any). */
export function readLastFailures(cacheDir: string, key: string): LastFailures {
  try {
    const read = JSON.parse(readFileSync(recordPath(cacheDir, key), 'utf8')) as LastFailures
    // A record from before failures had codes (reasons as strings) is dropped: the next render records it again.
    for (const [subject, f] of Object.entries(read))
      if (!Array.isArray(f?.reasons) || !f.reasons.every((r) => isFailureCode(r?.code))) delete read[subject]
    return read
  } catch {
    return {}
  }
}

/**
 * Records a run: its failures replace earlier ones of the same subjects, and
 * a subject that succeeded loses its record. A failure repeated with the same
 * reasons keeps the time it was first seen, so a run that changes nothing
 * writes nothing.
 */
export function recordFailures(cacheDir: string, key: string, report: RunReport, time = new Date()): void {
  const failures = readLastFailures(cacheDir, key)
  const before = JSON.stringify(failures)
  for (const v of report.variants) {
    if (v.status !== 'failed') delete failures[v.subject]
    else {
      const reasons = v.reasons.map(({ code, message }) => ({ code, message }))
      if (JSON.stringify(failures[v.subject]?.reasons) !== JSON.stringify(reasons))
        failures[v.subject] = { time: time.toISOString(), reasons }
    }
  }
  if (JSON.stringify(failures) === before) return
  writeFileWhole(recordPath(cacheDir, key), `${JSON.stringify(failures, null, 2)}\n`)
}
