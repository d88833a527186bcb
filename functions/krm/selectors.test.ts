import fc from 'fast-check'
import {
  compileLabelSelector,
  dns1123LabelErrors,
  dns1123SubdomainErrors,
  formatLabelSelector,
  matchesLabelSelector,
} from './selectors.js'
import type { LabelSelector } from './selectors.js'

const labels = { region: 'us-east1', tier: 'gold', env: '' }

describe('label selector matching', () => {
  test.each<[string, LabelSelector, boolean]>([
    ['an empty selector matches everything', {}, true],
    ['matchLabels equal', { matchLabels: { region: 'us-east1' } }, true],
    ['matchLabels different', { matchLabels: { region: 'eu-west1' } }, false],
    ['matchLabels with an empty value', { matchLabels: { env: '' } }, true],
    ['In', { matchExpressions: [{ key: 'tier', operator: 'In', values: ['gold', 'silver'] }] }, true],
    ['In, key absent', { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }, false],
    ['NotIn', { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['gold'] }] }, false],
    ['NotIn, key absent', { matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }, true],
    ['Exists', { matchExpressions: [{ key: 'region', operator: 'Exists' }] }, true],
    ['DoesNotExist', { matchExpressions: [{ key: 'region', operator: 'DoesNotExist' }] }, false],
    [
      'requirements are ANDed',
      { matchLabels: { tier: 'gold' }, matchExpressions: [{ key: 'region', operator: 'In', values: ['x'] }] },
      false,
    ],
  ])('%s', (_name, selector, want) => {
    expect(matchesLabelSelector(selector, labels)).toBe(want)
  })
})

describe('label selector validation (apimachinery messages)', () => {
  test.each<[string, LabelSelector, string]>([
    [
      'unknown operator',
      { matchExpressions: [{ key: 'a', operator: 'in', values: ['x'] }] },
      '"in" is not a valid label selector operator',
    ],
    [
      'In without values',
      { matchExpressions: [{ key: 'a', operator: 'In' }] },
      "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty",
    ],
    [
      'Exists with values',
      { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] },
      'values: Invalid value: ["x"]: values set must be empty for exists and does not exist',
    ],
    [
      'an invalid key',
      { matchLabels: { 'bad key': 'x' } },
      "key: Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ],
    [
      'an invalid value',
      { matchLabels: { a: 'x y' } },
      "values[0][a]: Invalid value: \"x y\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    ],
    [
      'an empty prefix',
      { matchExpressions: [{ key: '/a', operator: 'Exists' }] },
      'key: Invalid value: "/a": prefix part must be non-empty',
    ],
  ])('%s', (_name, selector, message) => {
    const compiled = compileLabelSelector(selector)
    expect(compiled).toEqual({ ok: false, error: message })
  })

  test('several problems in one requirement are aggregated', () => {
    const compiled = compileLabelSelector({ matchExpressions: [{ key: 'bad key', operator: 'In' }] })
    expect(compiled.ok).toBe(false)
    expect(!compiled.ok && compiled.error).toMatch(
      /^\[key: Invalid value: "bad key": .*, values: Invalid value: null: .*\]$/,
    )
  })
})

describe('label selector properties', () => {
  const key = fc.stringMatching(/^[a-z][a-z0-9]{0,5}$/)
  const labelSet = fc.dictionary(key, fc.stringMatching(/^[a-z0-9]{0,4}$/), { maxKeys: 5 })

  test('matchLabels of a subset of the labels always match; NotIn is the negation of In', () => {
    fc.assert(
      fc.property(
        labelSet,
        key,
        fc.array(fc.stringMatching(/^[a-z0-9]{1,3}$/), { minLength: 1, maxLength: 3 }),
        (set, k, values) => {
          const subset = Object.fromEntries(Object.entries(set).slice(0, 2))
          expect(matchesLabelSelector({ matchLabels: subset }, set)).toBe(true)
          const inSel = matchesLabelSelector({ matchExpressions: [{ key: k, operator: 'In', values }] }, set)
          const notIn = matchesLabelSelector({ matchExpressions: [{ key: k, operator: 'NotIn', values }] }, set)
          expect(notIn).toBe(!inSel)
          const exists = matchesLabelSelector({ matchExpressions: [{ key: k, operator: 'Exists' }] }, set)
          expect(matchesLabelSelector({ matchExpressions: [{ key: k, operator: 'DoesNotExist' }] }, set)).toBe(!exists)
        },
      ),
    )
  })
})

describe('DNS-1123 subdomain names', () => {
  test.each(['a', 'my-pvs-edge1-nginx', 'a.b-c', '0abc'])('%j is valid', (name) =>
    expect(dns1123SubdomainErrors(name)).toEqual([]),
  )
  test.each(['', 'Upper', 'a/b', '-a', 'a-', 'a_b', 'x'.repeat(254)])('%j is invalid', (name) =>
    expect(dns1123SubdomainErrors(name).length).toBeGreaterThan(0),
  )
})

describe('DNS-1123 labels', () => {
  test.each(['a', 'edge-01', '0abc', 'x'.repeat(63)])('%j is valid', (name) =>
    expect(dns1123LabelErrors(name)).toEqual([]),
  )
  test.each(['', 'a.b', '..', 'Edge', 'a/b', '-a', 'a-', 'x'.repeat(64)])('%j is invalid', (name) =>
    expect(dns1123LabelErrors(name).length).toBeGreaterThan(0),
  )
  test('says what a label must be, as apimachinery does', () =>
    expect(dns1123LabelErrors('Edge_01')).toEqual([
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ]))
})

describe('formatLabelSelector', () => {
  test("writes kubectl's syntax, requirements by key, values sorted", () => {
    expect(
      formatLabelSelector({
        matchLabels: { tier: 'edge', env: 'prod' },
        matchExpressions: [
          { key: 'region', operator: 'NotIn', values: ['us', 'eu'] },
          { key: 'canary', operator: 'DoesNotExist' },
          { key: 'zone', operator: 'Exists' },
          { key: 'app', operator: 'In', values: ['web'] },
        ],
      }),
    ).toBe('app in (web),!canary,env=prod,region notin (eu,us),tier=edge,zone')
    expect(formatLabelSelector({})).toBe('')
  })
})
