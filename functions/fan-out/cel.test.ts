import { CelEngine, defaultCelBudget } from './cel.js'
import type { CelBindings } from './cel.js'

const labels = (entries: Record<string, string>) => new Map(Object.entries(entries))
const object = (name: string, l: Record<string, string> = {}) =>
  new Map<string, unknown>([
    ['name', name],
    ['namespace', 'default'],
    ['labels', labels(l)],
    ['annotations', new Map()],
  ])

const bindings: CelBindings = {
  repoDefault: 'edge-1',
  packageDefault: 'nginx',
  upstream: object('blueprints.nginx.v1'),
  target: object('cluster-1', { region: 'us-east1', tier: 'gold' }),
  repository: object('edge-1', { env: 'prod' }),
}

describe('CelEngine.evalString', () => {
  test.each([
    ['a variable', 'repoDefault', 'edge-1'],
    ['concatenation', "target.name + '-' + packageDefault", 'cluster-1-nginx'],
    ['map lookup', "target.labels['region']", 'us-east1'],
    ['ternary and has()', "has(target.labels.tier) ? target.labels.tier : 'none'", 'gold'],
    ['matches (RE2)', "target.name.matches('^cluster-[0-9]+$') ? 'yes' : 'no'", 'yes'],
    ['a macro', "target.labels.exists(k, k == 'tier') ? 'tiered' : 'flat'", 'tiered'],
    ['the repository', 'repository.labels.env', 'prod'],
  ])('%s', (_, expr, want) => {
    expect(new CelEngine().evalString(expr, bindings)).toEqual({ ok: true, value: want })
  })

  test.each([
    [
      'undeclared variable',
      'badvar',
      "ERROR: <input>:1:1: undeclared reference to 'badvar' (in container '')\n | badvar\n | ^",
    ],
    ['missing key', "target.labels['no-such-label']", 'no such key: no-such-label'],
    ['missing field', 'target.spec', 'no such key: spec'],
    ['int result', '1', "unsupported type conversion from 'int' to string"],
    ['bool result', 'true', "type conversion error from bool to 'string'"],
    ['null result', 'null', "type conversion error from 'null_type' to 'string'"],
    ['list result', "['a']", "type conversion error from 'list' to 'string'"],
    ['no extension functions', 'target.name.lowerAscii()', "undeclared reference to 'lowerAscii' (in container '')"],
  ])('%s', (_, expr, want) => {
    expect(new CelEngine().evalString(expr, bindings)).toEqual({ ok: false, error: want })
  })

  test('syntax errors say so, with position and caret', () => {
    const result = new CelEngine().evalString('/', bindings)
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.error).toMatch(/^ERROR: <input>:1:1: Syntax error: .*\n \| \/\n \| \^$/s)
  })

  test('repository is absent while repoExpr is evaluated', () => {
    const { repository: _, ...withoutRepository } = bindings
    expect(new CelEngine().evalString('repository.name', withoutRepository)).toEqual({
      ok: false,
      error: 'no such attribute(s): repository',
    })
  })

  test('each distinct expression is compiled once', () => {
    const engine = new CelEngine()
    for (let i = 0; i < 5; i++) {
      engine.evalString('target.name', bindings)
      engine.evalString('repoDefault', bindings)
    }
    expect(engine.compiledCount).toBe(2)
  })
})

describe('evaluation budget', () => {
  const list = (n: number) => `[${Array.from({ length: n }, (_, i) => i).join(',')}]`

  test('a statically huge expression is rejected before evaluation', () => {
    const expr = `${list(100)}.all(a, ${list(100)}.all(b, ${list(100)}.all(c, ${list(100)}.all(d, true)))) ? 'x' : 'y'`
    const result = new CelEngine().evalString(expr, bindings)
    expect(result).toEqual({ ok: false, error: expect.stringContaining('exceeds the budget of 1000000') })
  })

  test('nesting deeper than the budget allows is rejected', () => {
    const expr = "[1].all(a, [1].all(b, [1].all(c, [1].all(d, [1].all(e, true))))) ? 'x' : 'y'"
    expect(new CelEngine().evalString(expr, bindings)).toEqual({
      ok: false,
      error: 'comprehensions are nested 5 deep; the evaluation budget allows 4',
    })
  })

  test('iterations are counted at run time and stop the loop', () => {
    const engine = new CelEngine({ ...defaultCelBudget, maxStepsPerEvaluation: 50 })
    const expr = `${list(10)}.all(a, ${list(10)}.all(b, true)) ? 'x' : 'y'`
    expect(engine.evalString(expr, bindings)).toEqual({
      ok: false,
      error: 'evaluation cost exceeded the budget of 50 comprehension steps',
    })
    expect(engine.evalString(`${list(5)}.all(a, true) ? 'x' : 'y'`, bindings)).toEqual({ ok: true, value: 'x' })
  })

  test('a data-sized range that grows at run time is still bounded', () => {
    const many = object('t', Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`k${i}`, 'v'])))
    const engine = new CelEngine({ ...defaultCelBudget, maxStepsPerEvaluation: 10_000 })
    const expr = "target.labels.all(a, target.labels.all(b, true)) ? 'x' : 'y'"
    expect(engine.evalString(expr, { ...bindings, target: many })).toEqual({
      ok: false,
      error: 'evaluation cost exceeded the budget of 10000 comprehension steps',
    })
  })

  test('the whole run has a budget too', () => {
    const engine = new CelEngine({ ...defaultCelBudget, maxStepsPerRun: 25 })
    const expr = `${list(10)}.all(a, true) ? 'x' : 'y'`
    expect(engine.evalString(expr, bindings).ok).toBe(true)
    expect(engine.evalString(expr, bindings).ok).toBe(true)
    expect(engine.evalString(expr, bindings)).toEqual({
      ok: false,
      error: 'evaluation cost exceeded the budget of 25 comprehension steps for this run',
    })
  })
})
