import { parseNowOption } from './now.js'

describe('parseNowOption', () => {
  test.each([
    ['2025-06-02T09:00:00Z', '2025-06-02T09:00:00.000Z'],
    ['2025-06-02T11:00:00+02:00', '2025-06-02T09:00:00.000Z'],
    ['2025-06-01T23:30:00-09:30', '2025-06-02T09:00:00.000Z'],
    [' 2025-06-02T09:00:00.250Z\n', '2025-06-02T09:00:00.250Z'],
  ])('%j is %s', (value, iso) => {
    const parsed = parseNowOption(value)
    expect(parsed.ok && parsed.now.toISOString()).toBe(iso)
  })

  test.each([
    [
      '2025-06-02T09:00:00',
      '--now "2025-06-02T09:00:00" needs a time zone offset: Z for UTC, or one such as +02:00 (e.g. 2025-06-02T09:00:00Z or 2025-06-02T11:00:00+02:00)',
    ],
    [
      'next monday',
      '--now "next monday" is not an RFC 3339 time (e.g. 2025-06-02T09:00:00Z or 2025-06-02T11:00:00+02:00)',
    ],
    ['2025-02-30T09:00:00Z', '--now "2025-02-30T09:00:00Z" has day 30: 2025-02 has days 01 to 28'],
    ['', '--now "" is not an RFC 3339 time (e.g. 2025-06-02T09:00:00Z or 2025-06-02T11:00:00+02:00)'],
  ])('%j: %s', (value, error) => {
    expect(parseNowOption(value)).toEqual({ ok: false, error })
  })
})
