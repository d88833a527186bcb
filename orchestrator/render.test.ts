import { defaultThreads, sharesOf } from './render.js'

test('by default one render thread per CPU for a big fleet with no record of an earlier run, else one', () => {
  const big = 4 * 1024 * 1024
  expect(defaultThreads(big, false, 2)).toBe(2)
  expect(defaultThreads(big, false, 8)).toBe(8)
  expect(defaultThreads(big, false, 1)).toBe(1)
  expect(defaultThreads(big, true, 8)).toBe(1)
  expect(defaultThreads(200 * 1024, false, 8)).toBe(1)
})

test('a fleet is shared only between threads that each get a worthwhile share', () => {
  expect(sharesOf(10, 4)).toBe(1)
  expect(sharesOf(130, 4)).toBe(2)
  expect(sharesOf(10_000, 4)).toBe(4)
})
