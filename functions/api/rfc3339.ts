/**
 * RFC 3339 timestamps (`2025-06-02T09:00:00Z`, `2025-06-02T11:00:00.5+02:00`),
 * as Kubernetes writes `metav1.Time`: a full date, a full time and an offset.
 * `Date.parse` is not used: it takes many other forms, and a time without an
 * offset as the machine's local time, which would make a result depend on
 * where it runs.
 */

const form = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/

/** An example of each accepted form, for messages. */
export const rfc3339Examples = '2025-06-02T09:00:00Z or 2025-06-02T11:00:00+02:00'

/** The instant an RFC 3339 timestamp names, or what is wrong with it (a sentence without the value). */
export function parseRfc3339(text: string): { ok: true; date: Date } | { ok: false; error: string } {
  const m = form.exec(text)
  if (!m) {
    const noOffset = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(text)
    return {
      ok: false,
      error: noOffset
        ? `needs a time zone offset: Z for UTC, or one such as +02:00 (e.g. ${rfc3339Examples})`
        : `is not an RFC 3339 time (e.g. ${rfc3339Examples})`,
    }
  }
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ]
  if (month < 1 || month > 12) return { ok: false, error: `has month ${m[2]}: months are 01 to 12` }
  const days = daysInMonth(year, month)
  if (day < 1 || day > days) return { ok: false, error: `has day ${m[3]}: ${year}-${m[2]} has days 01 to ${days}` }
  if (hour > 23) return { ok: false, error: `has hour ${m[4]}: hours are 00 to 23` }
  if (minute > 59) return { ok: false, error: `has minute ${m[5]}: minutes are 00 to 59` }
  // RFC 3339 allows a leap second (60); JavaScript time has none, and neither has Kubernetes' Go time.
  if (second > 59)
    return { ok: false, error: `has second ${m[6]}: seconds are 00 to 59 (leap seconds are not supported)` }
  let offsetMinutes = 0
  if (m[9]) {
    const oh = Number(m[10])
    const om = Number(m[11])
    if (oh > 23 || om > 59)
      return { ok: false, error: `has offset ${m[9]}${m[10]}:${m[11]}: offsets are -23:59 to +23:59` }
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (oh * 60 + om)
  }
  // Milliseconds are all a Date holds: further digits are cut, never rounded up into the next second.
  const ms = m[7] ? Math.floor(Number(`0${m[7]}`) * 1000) : 0
  // Set the year apart: Date.UTC maps years 0-99 to 1900-1999 (2000, a leap year, takes any valid day).
  const local = new Date(Date.UTC(2000, month - 1, day, hour, minute, second, ms))
  local.setUTCFullYear(year)
  const date = new Date(local.getTime() - offsetMinutes * 60_000)
  return { ok: true, date }
}

/** The form Kubernetes writes: UTC, seconds, `Z` (`2025-06-02T09:00:00Z`); milliseconds only when there are any. */
export function formatRfc3339(date: Date): string {
  return date.toISOString().replace(/\.000Z$/, 'Z')
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28
  return [4, 6, 9, 11].includes(month) ? 30 : 31
}
