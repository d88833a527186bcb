import fc from 'fast-check'
import { compileWindow, nextOpening, openingAt, windowsAt, zonedTime } from './rollout-windows.js'
import type { RolloutWindow } from './rollout-windows.js'

function window(schedule: string, duration: string, timeZone?: string): RolloutWindow {
  const compiled = compileWindow({ schedule, duration, ...(timeZone ? { timeZone } : {}) })
  if (!compiled.ok) throw new Error(compiled.errors.map((e) => e.problem).join('; '))
  return compiled.window
}

const at = (iso: string) => new Date(iso)
const span = (w: RolloutWindow, now: string) => {
  const o = openingAt(w, at(now))
  return o ? `${o.start.toISOString()} - ${o.end.toISOString()}` : 'closed'
}

describe('openingAt', () => {
  const office = window('0 9 * * 1-5', '8h', 'Europe/Berlin')

  test.each([
    ['the instant it opens', '2025-06-02T07:00:00Z', '2025-06-02T07:00:00.000Z - 2025-06-02T15:00:00.000Z'],
    ['a millisecond before', '2025-06-02T06:59:59.999Z', 'closed'],
    ['the last millisecond', '2025-06-02T14:59:59.999Z', '2025-06-02T07:00:00.000Z - 2025-06-02T15:00:00.000Z'],
    ['the instant it closes', '2025-06-02T15:00:00Z', 'closed'],
    ['a Saturday', '2025-06-07T10:00:00Z', 'closed'],
    // In winter Berlin is UTC+1: the same 09:00 is an hour later in UTC.
    ['a winter Monday', '2025-01-06T07:30:00Z', 'closed'],
    ['a winter Monday, later', '2025-01-06T08:00:00Z', '2025-01-06T08:00:00.000Z - 2025-01-06T16:00:00.000Z'],
  ])('%s', (_, now, want) => {
    expect(span(office, now)).toBe(want)
  })

  test('the Monday after the spring-forward opens at 09:00 summer time', () => {
    // Clocks went forward on Sunday 30 March 2025 at 02:00.
    expect(span(office, '2025-03-31T07:00:00Z')).toBe('2025-03-31T07:00:00.000Z - 2025-03-31T15:00:00.000Z')
    expect(span(office, '2025-03-28T07:30:00Z')).toBe('closed')
  })

  test('a start time the spring-forward skips opens at the first time after the gap', () => {
    // 02:30 does not exist in Berlin on 30 March 2025: 02:00 CET became 03:00 CEST (01:00Z).
    const w = window('30 2 * * *', '1h', 'Europe/Berlin')
    expect(span(w, '2025-03-30T01:30:00Z')).toBe('2025-03-30T01:00:00.000Z - 2025-03-30T02:00:00.000Z')
    expect(span(w, '2025-03-31T00:45:00Z')).toBe('2025-03-31T00:30:00.000Z - 2025-03-31T01:30:00.000Z')
  })

  test('a start time the fall-back repeats opens once, and the duration is elapsed time', () => {
    // 02:30 happens twice in Berlin on 26 October 2025: at 00:30Z (CEST) and 01:30Z (CET).
    const w = window('30 2 * * *', '1h', 'Europe/Berlin')
    expect(span(w, '2025-10-26T00:45:00Z')).toBe('2025-10-26T00:30:00.000Z - 2025-10-26T01:30:00.000Z')
    expect(span(w, '2025-10-26T01:45:00Z')).toBe('closed')
    expect(nextOpening(w, at('2025-10-26T00:30:00Z'))!.start.toISOString()).toBe('2025-10-27T01:30:00.000Z')
  })

  test('a window across midnight, and one longer than a day', () => {
    expect(span(window('0 22 * * *', '4h'), '2025-06-03T01:59:00Z')).toBe(
      '2025-06-02T22:00:00.000Z - 2025-06-03T02:00:00.000Z',
    )
    expect(span(window('0 0 * * 1', '72h'), '2025-06-04T12:00:00Z')).toBe(
      '2025-06-02T00:00:00.000Z - 2025-06-05T00:00:00.000Z',
    )
  })

  test('a window in UTC by default, never in the zone of the machine', () => {
    expect(window('0 9 * * *', '1h').timeZone).toBe('UTC')
    expect(span(window('0 9 * * *', '1h'), '2025-06-02T09:30:00Z')).toBe(
      '2025-06-02T09:00:00.000Z - 2025-06-02T10:00:00.000Z',
    )
  })
})

describe('windowsAt', () => {
  const office = window('0 9 * * 1-5', '8h', 'Europe/Berlin')
  const night = window('0 22 * * *', '2h')

  test('open: the opening that lasts longest', () => {
    const long = window('0 8 * * *', '12h')
    expect(windowsAt([office, long], at('2025-06-02T10:00:00Z')).open!.end.toISOString()).toBe(
      '2025-06-02T20:00:00.000Z',
    )
  })

  test('closed: the next opening of any window', () => {
    const { open, next } = windowsAt([office, night], at('2025-06-07T12:00:00Z'))
    expect(open).toBeUndefined()
    expect(next!.start.toISOString()).toBe('2025-06-07T22:00:00.000Z')
    expect(zonedTime(next!.start, 'Europe/Berlin')).toBe('2025-06-08 00:00 Europe/Berlin')
  })
})

describe('compileWindow', () => {
  test.each([
    ['@daily', '1h', undefined, []],
    ['0 9 * * MON-FRI', '8h', 'America/New_York', []],
    ['0 9 * * *', '1h', 'Mars/Olympus', ['timeZone']],
    ['0 9 * *', '1h', undefined, ['schedule']],
    ['2030-01-01T00:00:00', '1h', undefined, ['schedule']],
    ['0 9 * * *', '-1h', undefined, ['duration']],
  ])('%s for %s in %s', (schedule, duration, timeZone, fields) => {
    const compiled = compileWindow({ schedule, duration, ...(timeZone ? { timeZone } : {}) })
    expect(compiled.ok ? [] : compiled.errors.map((e) => e.field)).toEqual(fields)
  })
})

describe('windows, for any zone, time of day and instant', () => {
  const zones = [
    'UTC',
    'Europe/Berlin',
    'America/New_York',
    'Australia/Lord_Howe',
    'Asia/Kolkata',
    'America/Sao_Paulo',
    'Pacific/Chatham',
  ]
  const arbitraryWindow = fc.record({
    zone: fc.constantFrom(...zones),
    minute: fc.integer({ min: 0, max: 59 }),
    hour: fc.integer({ min: 0, max: 23 }),
    hours: fc.integer({ min: 1, max: 30 }),
  })
  const instant = fc.date({
    min: new Date('2020-01-01T00:00:00Z'),
    max: new Date('2030-12-31T00:00:00Z'),
    noInvalidDate: true,
  })

  test('open exactly when the first opening after (now - duration) has begun by now', () => {
    fc.assert(
      fc.property(arbitraryWindow, instant, ({ zone, minute, hour, hours }, now) => {
        const w = window(`${minute} ${hour} * * *`, `${hours}h`, zone)
        const opening = openingAt(w, now)
        const first = w.cron.nextRun(new Date(now.getTime() - w.durationMs))
        expect(opening !== undefined).toBe(first !== null && first <= now)
        if (opening) expect(opening.start <= now && now < opening.end).toBe(true)
      }),
    )
  })

  test('a window opens at its time of day in its zone, except after a gap the clocks skip', () => {
    fc.assert(
      fc.property(arbitraryWindow, instant, ({ zone, minute, hour, hours }, now) => {
        const w = window(`${minute} ${hour} * * *`, `${hours}h`, zone)
        const start = nextOpening(w, now)!.start
        expect(start > now).toBe(true)
        const local = zonedTime(start, zone)
        const wanted = `${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')} ${zone}`
        if (!local.endsWith(wanted)) {
          // Only where that local time did not exist that day: the zone's offset changed in the hours before.
          const offset = (d: Date) =>
            new Date(`${zonedTime(d, zone).slice(0, 16).replace(' ', 'T')}:00Z`).getTime() -
            Math.floor(d.getTime() / 60_000) * 60_000
          expect(offset(new Date(start.getTime() - 3 * 3_600_000))).not.toBe(offset(start))
        }
      }),
    )
  })
})
