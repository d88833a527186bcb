/**
 * A Rollout's `spec.windows`: publishing happens only while one is open. A
 * window opens at each time its cron `schedule` names, read in its
 * `timeZone` (an IANA name, default UTC), and stays open for `duration` of
 * elapsed time. The schedule is read by croner (docs/npm-dependencies.md), with
 * its daylight-saving rules, which are Vixie cron's: a start time that a
 * spring-forward skips opens at the first time after the gap that day; one
 * that a fall-back repeats opens once, at its first occurrence.
 */
import { Cron } from 'croner'
import { parseDuration } from './duration.js'

/** One `spec.windows` entry as written. */
export interface RolloutWindowSpec {
  schedule: string
  duration: string
  timeZone?: string
}

/** A window ready to be asked when it is open. */
export interface RolloutWindow {
  schedule: string
  duration: string
  timeZone: string
  durationMs: number
  cron: Cron
}

/** One opening of a window: from `start` (included) to `end` (excluded). */
export interface WindowOpening {
  window: RolloutWindow
  start: Date
  end: Date
}

/** The time zone of a window without `timeZone`, as Argo CD's sync windows have it: never the machine's. */
export const defaultWindowTimeZone = 'UTC'

/** A fixed instant to ask whether a schedule ever fires, so that validation reads no clock. */
const someTime = new Date(Date.UTC(2000, 0, 1))

/** Reads a window; each problem names its field (`schedule`, `duration` or `timeZone`). */
export function compileWindow(
  spec: RolloutWindowSpec,
): { ok: true; window: RolloutWindow } | { ok: false; errors: { field: keyof RolloutWindowSpec; problem: string }[] } {
  const errors: { field: keyof RolloutWindowSpec; problem: string }[] = []
  const timeZone = spec.timeZone || defaultWindowTimeZone
  const zoneError = timeZoneError(timeZone)
  if (zoneError) errors.push({ field: 'timeZone', problem: zoneError })
  const duration = parseDuration(spec.duration)
  if (!duration.ok) errors.push({ field: 'duration', problem: duration.error })
  else if (duration.ms <= 0)
    errors.push({ field: 'duration', problem: `${JSON.stringify(spec.duration)} must be longer than 0` })
  let cron: Cron | undefined
  const scheduleError = cronError(spec.schedule)
  if (scheduleError) errors.push({ field: 'schedule', problem: scheduleError })
  else if (!zoneError) {
    cron = new Cron(spec.schedule, { timezone: timeZone, mode: '5-part' })
    if (cron.nextRun(someTime) === null)
      errors.push({
        field: 'schedule',
        problem: `${JSON.stringify(spec.schedule)} names no time that exists (e.g. 31 February)`,
      })
  }
  if (errors.length > 0 || !cron || !duration.ok) return { ok: false, errors }
  return {
    ok: true,
    window: { schedule: spec.schedule, duration: spec.duration, timeZone, durationMs: duration.ms, cron },
  }
}

/** The opening of a window that `now` is in, if any. */
export function openingAt(window: RolloutWindow, now: Date): WindowOpening | undefined {
  // Runs fall on whole seconds and previousRuns excludes its reference: a millisecond later includes a start at `now`.
  const [start] = window.cron.previousRuns(1, new Date(now.getTime() + 1))
  if (!start) return undefined
  const end = new Date(start.getTime() + window.durationMs)
  return now < end ? { window, start, end } : undefined
}

/** The next time a window opens after `now`, if it ever does. */
export function nextOpening(window: RolloutWindow, now: Date): WindowOpening | undefined {
  const start = window.cron.nextRun(now)
  return start ? { window, start, end: new Date(start.getTime() + window.durationMs) } : undefined
}

/**
 * Where `now` stands among windows: `open` is the opening that ends last of
 * those `now` is in; `next` is the earliest opening after `now`, when none is open.
 */
export function windowsAt(
  windows: readonly RolloutWindow[],
  now: Date,
): { open?: WindowOpening; next?: WindowOpening } {
  let open: WindowOpening | undefined
  for (const window of windows) {
    const opening = openingAt(window, now)
    if (opening && (!open || opening.end > open.end)) open = opening
  }
  if (open) return { open }
  let next: WindowOpening | undefined
  for (const window of windows) {
    const opening = nextOpening(window, now)
    if (opening && (!next || opening.start < next.start)) next = opening
  }
  return next ? { next } : {}
}

/** A time as the window's zone reads it, for messages: `2025-06-02 09:00 Europe/Berlin`. */
export function zonedTime(date: Date, timeZone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    })
      .formatToParts(date)
      .map((p) => [p.type, p.value]),
  )
  return `${parts['year']}-${parts['month']}-${parts['day']} ${parts['hour']}:${parts['minute']} ${timeZone}`
}

function timeZoneError(timeZone: string): string | undefined {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone })
    return undefined
  } catch {
    return `${JSON.stringify(timeZone)} is not a time zone this machine knows (an IANA name, e.g. Europe/Berlin, America/New_York, UTC)`
  }
}

function cronError(schedule: string): string | undefined {
  const fields = schedule.trim().split(/\s+/)
  const example = '(e.g. "0 9 * * 1-5": minute, hour, day of month, month, day of week)'
  // croner takes an ISO time as a one-off date, and six or seven fields with seconds and years: a window is none of those.
  if (!schedule.trim().startsWith('@') && fields.length !== 5)
    return `${JSON.stringify(schedule)} is not a cron schedule of five fields ${example}`
  try {
    new Cron(schedule, { timezone: defaultWindowTimeZone, mode: '5-part' })
    return undefined
  } catch (err) {
    return `${JSON.stringify(schedule)} is not a cron schedule: ${(err as Error).message.replace(/^CronPattern: /, '')} ${example}`
  }
}
