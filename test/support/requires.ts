/**
 * The one way a suite or a test says what it needs of the machine (a program, a built binary,
 * root). Where that is missing it is skipped, with a warning saying why and how to get it; where
 * `CI` is set, it fails instead: CI provides everything, so a skip there would hide a lost suite.
 */

/** Whether `have`; when not, warns (`SKIPPED: reason`), or throws under CI. */
export function available(have: boolean, reason: string): boolean {
  if (have) return true
  if (process.env['CI']) throw new Error(`CI: ${reason}`)
  console.warn(`SKIPPED: ${reason}`)
  return false
}

/** `describe` where `have`, else `describe.skip` (see `available`). */
export function describeIfAvailable(have: boolean, reason: string): jest.Describe {
  return available(have, reason) ? describe : describe.skip
}

/** `test` where `have`, else `test.skip` (see `available`). */
export function testIfAvailable(have: boolean, reason: string): jest.It {
  return available(have, reason) ? test : test.skip
}
