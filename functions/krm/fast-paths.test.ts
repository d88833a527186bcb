import { fastPathNames, parseFastPathsOff } from './fast-paths.js'

test('all turns every fast path off, a list those named, nothing none', () => {
  expect([...parseFastPathsOff('all')]).toEqual([...fastPathNames])
  expect([...parseFastPathsOff('spawner, memo')]).toEqual(['spawner', 'memo'])
  expect(parseFastPathsOff(undefined).size).toBe(0)
  expect(parseFastPathsOff('').size).toBe(0)
})

test('an unknown name is an error naming the variable and the known names, not a path silently left on', () => {
  expect(() => parseFastPathsOff('spawner,memmo')).toThrow(
    'KPT_VARIANTS_NO_FAST_PATHS: unknown fast path "memmo" (known: all, yaml, threads,',
  )
})
