import { defaultThreads, sharesOf } from './render.js'

test('by default one render thread per CPU', () => {
  expect(defaultThreads(1)).toBe(1)
  expect(defaultThreads(2)).toBe(2)
  expect(defaultThreads(8)).toBe(8)
})

test('a fleet is shared only between threads that each get a worthwhile share', () => {
  expect(sharesOf(10, 4)).toBe(1)
  expect(sharesOf(130, 4)).toBe(2)
  expect(sharesOf(10_000, 4)).toBe(4)
})
