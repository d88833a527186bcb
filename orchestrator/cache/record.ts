/**
 * The cache's records: JSON objects with a `version`. A reader gets a record
 * only when it is whole and of the version it reads; a missing, damaged or
 * other-version record (an older kpt-variants wrote it) is a miss, which
 * costs the work it would have saved, never an error.
 */
import { readFileSync } from 'node:fs'
import { writeFileAtomic } from './atomic-write.js'

/** One kind of record: its version, to be bumped when its shape changes, and a check of what its reader relies on. */
export interface RecordFormat<T extends object> {
  readonly version: number
  /** Whether a parsed object of this version holds what `T` promises. */
  readonly holds: (record: Partial<Record<keyof T, unknown>>) => boolean
}

/** The record in `file`, or undefined for a miss. */
export function readRecord<T extends object>(file: string, format: RecordFormat<T>): T | undefined {
  const text = readText(file)
  if (text === undefined) return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined
  const record = parsed as { version?: unknown }
  return record.version === format.version && format.holds(record as Partial<Record<keyof T, unknown>>)
    ? (record as T)
    : undefined
}

/**
 * Writes `record` to `file` with the format's version (first, for a person
 * reading it), atomically; returns false, having written nothing, when the
 * file already holds exactly that: a run that changed nothing touches nothing.
 */
export function writeRecord<T extends object>(file: string, format: RecordFormat<T>, record: T): boolean {
  const text = JSON.stringify({ version: format.version, ...withoutVersion(record) })
  if (readText(file) === text) return false
  writeFileAtomic(file, text)
  return true
}

function withoutVersion<T extends object>(record: T): Omit<T, 'version'> {
  const { version: _version, ...rest } = record as T & { version?: unknown }
  return rest
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8')
  } catch {
    return undefined
  }
}
