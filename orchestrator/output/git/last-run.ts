/**
 * The last failure of each variant of a fleet, kept in the cache by every
 * `render --git`, so `kpt-variants status` can show why a package has no
 * draft (git records what succeeded; this records what did not).
 */
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { RunReport } from '../../report/report.js'

/** Last failures by subject (`PackageVariant ns/name`, ...): when, and why. */
export type LastFailures = Record<string, { time: string; reasons: string[] }>

function recordPath(cacheDir: string, fleetDir: string): string {
  return join(cacheDir, 'runs', `${createHash('sha1').update(fleetDir).digest('hex').slice(0, 16)}.json`)
}

/** Reads the fleet's last failures (none when no run recorded any). */
export function readLastFailures(cacheDir: string, fleetDir: string): LastFailures {
  try {
    return JSON.parse(readFileSync(recordPath(cacheDir, fleetDir), 'utf8')) as LastFailures
  } catch {
    return {}
  }
}

/** Records a run: its failures replace earlier ones of the same subjects, and a subject that succeeded loses its record. */
export function recordRun(cacheDir: string, fleetDir: string, report: RunReport, time = new Date()): void {
  const failures = readLastFailures(cacheDir, fleetDir)
  for (const v of report.variants) {
    if (v.status === 'failed') failures[v.subject] = { time: time.toISOString(), reasons: v.reasons }
    else delete failures[v.subject]
  }
  const file = recordPath(cacheDir, fleetDir)
  mkdirSync(join(file, '..'), { recursive: true })
  writeFileSync(`${file}.${process.pid}`, `${JSON.stringify(failures, null, 2)}\n`)
  renameSync(`${file}.${process.pid}`, file)
}
