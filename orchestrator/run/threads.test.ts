import { setFastPathsOff } from '../../functions/krm/fast-paths.js'
import { sharesOf } from './render-share.js'
import { defaultThreads } from './threads.js'

// This suite tests the fast path itself: on, whatever KPT_VARIANTS_NO_FAST_PATHS says (the oracle run).
beforeAll(() => setFastPathsOff([]))

test('by default one render thread per CPU for a big fleet with no record of an earlier run, else one', () => {
  const big = { fleetBytes: 4 * 1024 * 1024, recorded: false, writesAll: false }
  expect(defaultThreads(big, 2)).toBe(2)
  expect(defaultThreads(big, 8)).toBe(8)
  expect(defaultThreads(big, 1)).toBe(1)
  expect(defaultThreads({ ...big, recorded: true }, 8)).toBe(1)
  expect(defaultThreads({ ...big, fleetBytes: 200 * 1024 }, 8)).toBe(1)
  // 7,000 variants of the bench's fleet: where two threads did not beat one on 2 CPUs.
  expect(defaultThreads({ ...big, fleetBytes: 2.8 * 1000 * 1000 }, 2)).toBe(1)
})

test('a first render into an empty directory takes one render thread per two CPUs: each has a staging thread writing', () => {
  const first = { fleetBytes: 4 * 1024 * 1024, recorded: false, writesAll: true }
  expect(defaultThreads(first, 2)).toBe(1)
  expect(defaultThreads(first, 8)).toBe(4)
  expect(defaultThreads(first, 1)).toBe(1)
  expect(defaultThreads({ ...first, fleetBytes: 200 * 1024 }, 8)).toBe(1)
})

test('a fleet is shared only between threads that each get a worthwhile share', () => {
  expect(sharesOf(10, 4)).toBe(1)
  expect(sharesOf(130, 4)).toBe(2)
  expect(sharesOf(10_000, 4)).toBe(4)
})
