import fc from 'fast-check'
import semver from 'semver'
import { candidateAdmitted, direction, parseConstraint, satisfies, translateConstraint } from './constraints.js'
import { parseVersion } from './versions.js'
import type { Version } from './versions.js'

const v = (raw: string): Version => parseVersion(raw, { coerce: true })!
const c = (raw: string) => {
  const parsed = parseConstraint(raw)
  if (!parsed.ok) throw new Error(parsed.error)
  return parsed.constraint
}

describe('translateConstraint', () => {
  test.each([
    ['commas and v prefixes', '>= v1.13.0, < 2', ['>=1.13.0 <2'], '>=1.13.0 <2'],
    ['caret kept', '^1.2.3', ['^1.2.3'], '^1.2.3'],
    [
      '!= distributes',
      '>=1.0.0, !=1.5.0, <2.0.0',
      ['>=1.0.0 <2.0.0 <1.5.0', '>=1.0.0 <2.0.0 >1.5.0'],
      '>=1.0.0 !=1.5.0 <2.0.0',
    ],
    ['blang ! alone', '!4.2.1', ['<4.2.1', '>4.2.1'], '!4.2.1'],
    ['=> alias', '=> 1.0', ['>=1.0'], '>=1.0'],
    ['=< alias', '=<2', ['<=2'], '<=2'],
    ['~> alias', '~>1.2', ['~1.2'], '~1.2'],
    ['== alias', '==1.2.3', ['=1.2.3'], '=1.2.3'],
    ['hyphen range', '1.2 - 1.4.5', ['1.2 - 1.4.5'], '1.2 - 1.4.5'],
    ['or with wildcard', '1.x || >=3', ['1.x', '>=3'], '1.x || >=3'],
    ['or with caret', '^1.0.0 || 2.0.0', ['^1.0.0', '2.0.0'], '^1.0.0 || 2.0.0'],
    ['empty is any', '', ['*'], ''],
    ['star is any', '*', ['*'], '*'],
    ['bare v version', 'v1.0.0', ['1.0.0'], '1.0.0'],
  ])('%s: %j', (_name, raw, branches, display) => {
    expect(translateConstraint(raw)).toEqual({ ok: true, branches, display })
  })

  test.each([['garbage'], ['1.2-1.4.5'], ['1.0 || '], ['>=1.0.0 garbage'], ['sha256:abc'], ['>= 1 ||| 2']])(
    'improper: %j',
    (raw) => {
      expect(translateConstraint(raw)).toEqual({ ok: false, error: `improper constraint: ${raw}` })
    },
  )

  test('digests are kept as exact pins', () => {
    const digest = `sha256:${'a'.repeat(64)}`
    expect(satisfies(v(digest), c(digest))).toBe(true)
    expect(satisfies(v(`sha256:${'b'.repeat(64)}`), c(digest))).toBe(false)
    expect(satisfies(v('1.0.0'), c(digest))).toBe(false)
  })
})

describe('satisfies', () => {
  test.each([
    ['1.14.0', '>= v1.13.0, < 2', true],
    ['2.0.0', '>= v1.13.0, < 2', false],
    ['1.5.0', '>=1.0.0, !=1.5.0, <2.0.0', false],
    ['1.5.1', '>=1.0.0, !=1.5.0, <2.0.0', true],
    ['v1.2.4+3', '^1.2.3', true],
    ['1.0.0+2', '>= 1.0.0+3', true], // build metadata is ignored (Glasskube issue #405)
    ['2.0.0-rc.1', '<2.0.0', true], // ranges admit prereleases; the candidate filter decides
    ['2.0.0-rc.1', '^1', false],
    ['0.16.0-feat.0', '>=v0.14.36', true], // Crossplane #6769 does not bite an installed version
    ['v1', '>=1.0.0', true],
  ])('%s satisfies %j: %s', (version, range, want) => {
    expect(satisfies(v(version), c(range))).toBe(want)
  })
})

describe('prerelease candidates', () => {
  test.each([
    ['release always admitted', '1.0.0', 'Exclude', [], true],
    ['excluded by default', '2.0.0-rc.1', 'Exclude', ['>=1.0.0'], false],
    ['included', '2.0.0-rc.1', 'Include', [], true],
    ['listed identifier', '2.0.0-rc.1', { identifiers: ['rc'] }, [], true],
    ['unlisted identifier', '2.0.0-beta.1', { identifiers: ['rc'] }, [], false],
    ['range names a prerelease', '2.0.0-beta.1', 'Exclude', ['>=1.0.0-0'], true],
    ['exact prerelease pin', '2.0.0-beta.1', 'Exclude', ['2.0.0-beta.1'], true],
  ] as const)('%s', (_name, version, policy, ranges, want) => {
    expect(candidateAdmitted(v(version), policy as never, ranges.map(c))).toBe(want)
  })
})

describe('direction', () => {
  test.each([
    ['2.1.0', '>=1.13.0 <2', 'Above'],
    ['1.2.1', '^1.2.3', 'Below'],
    ['2.5.0', '^1.0.0 || ^3.0.0', 'Gap'],
    [`sha256:${'a'.repeat(64)}`, '^1', 'Digest'],
  ])('%s vs %j is %s', (version, range, want) => {
    expect(direction(v(version), c(range))).toBe(want)
  })
})

describe('properties', () => {
  const version = fc
    .tuple(fc.nat(5), fc.nat(5), fc.nat(5), fc.option(fc.constantFrom('alpha', 'rc.1', 'beta.2'), { nil: undefined }))
    .map(([a, b, p, pre]) => `${a}.${b}.${p}${pre ? `-${pre}` : ''}`)
  const op = fc.constantFrom('>=', '<=', '>', '<', '=', '^', '~', '')
  const comparator = fc.tuple(op, version).map(([o, ver]) => `${o}${ver}`)

  // What the ranges mean is held to Masterminds in constraints.masterminds.test.ts; here, that the spelling does not matter.
  test('a Masterminds comma list with v prefixes agrees with the space list', () => {
    fc.assert(
      fc.property(
        fc.array(comparator, { minLength: 1, maxLength: 3 }),
        fc.boolean(),
        version,
        (parts, vPrefix, candidate) => {
          const masterminds = parts.map((p) => (vPrefix ? p.replace(/(\d)/, 'v$1') : p)).join(', ')
          const spaced = parts.join(' ')
          expect(satisfies(v(candidate), c(masterminds))).toBe(satisfies(v(candidate), c(spaced)))
        },
      ),
    )
  })

  test('!=X agrees with "not equal" over the rest of the range', () => {
    fc.assert(
      fc.property(comparator, version, version, (base, excluded, candidate) => {
        const got = satisfies(v(candidate), c(`${base}, !=${excluded}`))
        const want = satisfies(v(candidate), c(base)) && semver.neq(candidate, excluded)
        expect(got).toBe(want)
      }),
    )
  })

  test('OR is the union of its branches', () => {
    fc.assert(
      fc.property(comparator, comparator, version, (a, b, candidate) => {
        const got = satisfies(v(candidate), c(`${a} || ${b}`))
        expect(got).toBe(satisfies(v(candidate), c(a)) || satisfies(v(candidate), c(b)))
      }),
    )
  })
})
