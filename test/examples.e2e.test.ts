/** Every function example, through the real kpt binary, twice (see test/e2e/runner.ts). */
import { findCases, runCase } from './e2e/runner.js'

const cases = findCases().filter((c) => !c.config.skip)

describe('kpt e2e examples', () => {
  test('examples are found', () => {
    expect(cases.length).toBeGreaterThan(0)
  })

  test.each(cases.map((c) => [c.name, c] as const))(
    '%s',
    async (_name, testCase) => {
      await runCase(testCase)
    },
    120_000,
  )
})
