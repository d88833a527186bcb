/**
 * The last failure of each variant of a fleet, kept in the cache by every
 * render, so `kpt-variants status` can show why a package was not rendered
 * (the output records what succeeded; this records what did not).
 */
import { failuresFile } from '../cache/layout.js'
import { readRecord, writeRecord } from '../cache/record.js'
import type { RecordFormat } from '../cache/record.js'
import { isFailureCode } from '../report/failure.js'
import type { Failure } from '../report/failure.js'
import type { RunReport } from '../report/report.js'

/** Last failures by subject (`PackageVariant ns/name`, ...): since when, and why (without stacks). */
export type LastFailures = Record<string, { time: string; reasons: Failure[] }>

/** The record of an output, under its key: `--git` records by the fleet, a directory output by the fleet and the directory. */
const failuresFormat: RecordFormat<{ failures: LastFailures }> = {
  // 2: reasons with failure codes; version 1 (reasons as text) and the unversioned record before it are misses.
  version: 2,
  holds: (record) =>
    typeof record.failures === 'object' &&
    record.failures !== null &&
    Object.values(record.failures as Record<string, { reasons?: unknown } | null>).every(
      (f) =>
        Array.isArray(f?.reasons) && (f.reasons as ({ code?: unknown } | null)[]).every((r) => isFailureCode(r?.code)),
    ),
}

/** The key of a directory output's record. */
export function directoryFailureKey(fleetId: string, outDir: string): string {
  return `${fleetId}\0--out ${outDir}`
}

/** Reads the last failures recorded under `key` (none when no run recorded any). */
export function readLastFailures(cacheDir: string, key: string): LastFailures {
  return readRecord(failuresFile(cacheDir, key), failuresFormat)?.failures ?? {}
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
  if (JSON.stringify(failures) !== before) writeRecord(failuresFile(cacheDir, key), failuresFormat, { failures })
}
