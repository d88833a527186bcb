import fc from 'fast-check'
import { formatDuration, parseDuration } from './duration.js'
import { formatRfc3339, parseRfc3339 } from './rfc3339.js'

/** Instants whose local time at any offset has a four-digit year. */
const instant = fc.date({
  min: new Date('0001-01-02T00:00:00Z'),
  max: new Date('9999-12-30T23:59:59.999Z'),
  noInvalidDate: true,
})
const offsetMinutes = fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 })

/** An instant written as RFC 3339 at an offset, the way another tool may write it. */
function writeAt(date: Date, offset: number, fraction: string): string {
  const local = new Date(date.getTime() + offset * 60_000)
  const pad = (n: number, w = 2) => String(n).padStart(w, '0')
  const sign = offset < 0 ? '-' : '+'
  const abs = Math.abs(offset)
  const zone = offset === 0 && fraction.length % 2 === 0 ? 'Z' : `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
  return `${pad(local.getUTCFullYear(), 4)}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())}T${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())}${fraction}${zone}`
}

describe('parseRfc3339', () => {
  test('reads back any instant written at any offset', () => {
    fc.assert(
      fc.property(instant, offsetMinutes, (date, offset) => {
        const ms = date.getUTCMilliseconds()
        const fraction = ms ? `.${String(ms).padStart(3, '0')}` : ''
        const parsed = parseRfc3339(writeAt(date, offset, fraction))
        expect(parsed).toEqual({ ok: true, date })
      }),
    )
  })

  test('formatRfc3339 is read back as the same instant', () => {
    fc.assert(fc.property(instant, (date) => expect(parseRfc3339(formatRfc3339(date))).toEqual({ ok: true, date })))
  })

  test('digits beyond milliseconds are cut, never rounded into the next second', () => {
    expect(parseRfc3339('2025-06-02T09:00:59.9999999Z')).toEqual({
      ok: true,
      date: new Date('2025-06-02T09:00:59.999Z'),
    })
  })

  test.each([
    ['2025-06-02 09:00:00Z', 'is not an RFC 3339 time (e.g. 2025-06-02T09:00:00Z or 2025-06-02T11:00:00+02:00)'],
    [
      '2025-06-02T09:00:00',
      'needs a time zone offset: Z for UTC, or one such as +02:00 (e.g. 2025-06-02T09:00:00Z or 2025-06-02T11:00:00+02:00)',
    ],
    [
      '2025-06-02T09:00',
      'needs a time zone offset: Z for UTC, or one such as +02:00 (e.g. 2025-06-02T09:00:00Z or 2025-06-02T11:00:00+02:00)',
    ],
    ['2025-06-02', 'is not an RFC 3339 time (e.g. 2025-06-02T09:00:00Z or 2025-06-02T11:00:00+02:00)'],
    ['tomorrow', 'is not an RFC 3339 time (e.g. 2025-06-02T09:00:00Z or 2025-06-02T11:00:00+02:00)'],
    ['2025-13-01T00:00:00Z', 'has month 13: months are 01 to 12'],
    ['2025-02-29T00:00:00Z', 'has day 29: 2025-02 has days 01 to 28'],
    ['2025-04-31T00:00:00Z', 'has day 31: 2025-04 has days 01 to 30'],
    ['2025-06-02T24:00:00Z', 'has hour 24: hours are 00 to 23'],
    ['2025-06-02T09:60:00Z', 'has minute 60: minutes are 00 to 59'],
    ['2016-12-31T23:59:60Z', 'has second 60: seconds are 00 to 59 (leap seconds are not supported)'],
    ['2025-06-02T09:00:00+24:00', 'has offset +24:00: offsets are -23:59 to +23:59'],
  ])('%s %s', (text, error) => {
    expect(parseRfc3339(text)).toEqual({ ok: false, error })
  })

  test('a leap day and lowercase separators are fine', () => {
    expect(parseRfc3339('2024-02-29t12:00:00z')).toEqual({ ok: true, date: new Date('2024-02-29T12:00:00Z') })
  })
})

describe('parseDuration', () => {
  test.each([
    ['30m', 1_800_000],
    ['8h', 28_800_000],
    ['1h30m', 5_400_000],
    ['1.5h', 5_400_000],
    ['90s', 90_000],
    ['500ms', 500],
    ['0', 0],
    ['-5m', -300_000],
  ])('%s', (text, ms) => {
    expect(parseDuration(text)).toEqual({ ok: true, ms })
  })

  test.each(['', '5', '30 minutes', '1d', 'm', '1h 30m', '.h', '5m-'])('%j is not a duration', (text) => {
    expect(parseDuration(text)).toEqual({
      ok: false,
      error: `${JSON.stringify(text)} is not a duration (e.g. 30m, 8h, 1h30m)`,
    })
  })

  test('formatDuration is read back as the same whole seconds', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10 * 365 * 86_400 }), (seconds) => {
        expect(parseDuration(formatDuration(seconds * 1000))).toEqual({ ok: true, ms: seconds * 1000 })
      }),
    )
  })
})
