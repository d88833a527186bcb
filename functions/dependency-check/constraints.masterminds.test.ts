/**
 * The translated ranges against Masterminds' semantics: a model of
 * Masterminds/semver v3.5.0's `Check` with `IncludePrerelease` (a port of its
 * constraint functions), held to a table the real library produced
 * (testdata/masterminds-v3.5.0.tsv), then compared with `satisfies` over
 * generated constraints and versions. Where this project reads a constraint
 * differently on purpose (README "Differences"), the model says so.
 */
import { readFileSync } from 'node:fs'
import fc from 'fast-check'
import semver from 'semver'
import { parseConstraint, satisfies } from './constraints.js'
import { parseVersion } from './versions.js'
import { propertyRuns } from '../../test/support/property-runs.js'

interface Comparator {
  op: string
  /** The version with its missing parts zero, prerelease kept (Masterminds' `con`). */
  con: semver.SemVer
  minorDirty: boolean
  patchDirty: boolean
  dirty: boolean
}

const cv = 'v?([0-9xX*]+)(\\.[0-9xX*]+)?(\\.[0-9xX*]+)?(-[0-9A-Za-z.-]+)?(\\+[0-9A-Za-z.-]+)?'
const findComparator = new RegExp(`(!=|=>|=<|>=|<=|~>|=|>|<|~|\\^)?\\s*(${cv})`, 'g')
const hyphen = new RegExp(`^\\s*(${cv})\\s+-\\s+(${cv})\\s*$`)
const isX = (s: string | undefined) => s === 'x' || s === 'X' || s === '*'

function parseComparator(op: string, text: string): Comparator {
  const m = new RegExp(`^${cv}$`).exec(text)!
  const [major, minor, patch] = [m[1]!, m[2]?.slice(1), m[3]?.slice(1)]
  const pre = m[4] ?? ''
  let version = `${major}.${minor ?? 0}.${patch ?? 0}${pre}`
  let flags = { minorDirty: false, patchDirty: false, dirty: false }
  if (isX(major)) {
    version = `0.0.0${pre}`
    flags = { minorDirty: false, patchDirty: false, dirty: true }
  } else if (minor === undefined || isX(minor)) {
    version = `${major}.0.0${pre}`
    flags = { minorDirty: true, patchDirty: false, dirty: true }
  } else if (patch === undefined || isX(patch)) {
    version = `${major}.${minor}.0${pre}`
    flags = { minorDirty: false, patchDirty: true, dirty: true }
  }
  return { op, con: new semver.SemVer(version), ...flags }
}

/** Masterminds' parse: `||` groups of comparators, a hyphen range as `>= A, <= B`. */
function parseMasterminds(text: string): Comparator[][] {
  return text.split('||').map((group) => {
    const range = hyphen.exec(group)
    if (range) return [parseComparator('>=', range[1]!), parseComparator('<=', range[7]!)]
    return [...group.matchAll(findComparator)].map((m) => parseComparator(m[1] ?? '', m[2]!))
  })
}

/**
 * Masterminds' check of one comparator with prereleases included, or, with
 * `asHere`, this project's reading where it differs on purpose: `<` with a
 * partial version ends before that line's first prerelease (`<2` is `<2.0.0-0`,
 * npm's reading), and so `!=` with a partial version excludes the whole line.
 */
function check(v: semver.SemVer, c: Comparator, asHere: boolean): boolean {
  const cmp = v.compare(c.con)
  const { major, minor, patch } = c.con
  switch (c.op) {
    case '':
    case '=':
      return c.dirty ? tilde(v, c) : cmp === 0
    case '!=':
      if (c.dirty && asHere) return !(v.major === major && (c.minorDirty || v.minor === minor))
      if (c.dirty) {
        if (v.major !== major) return true
        if (v.minor !== minor && !c.minorDirty) return true
        if (c.minorDirty) return false
        if (v.patch !== patch && !c.patchDirty) return true
        if (c.patchDirty) return v.prerelease.join('.') !== c.con.prerelease.join('.')
      }
      return cmp !== 0
    case '>':
      if (!c.dirty) return cmp > 0
      if (v.major !== major) return v.major > major
      if (c.minorDirty) return false
      if (c.patchDirty) return v.minor > minor
      return cmp > 0
    case '<':
      if (c.dirty && asHere) return v.compare(`${major}.${minor}.0-0`) < 0
      return cmp < 0
    case '>=':
    case '=>':
      return cmp >= 0
    case '<=':
    case '=<':
      if (!c.dirty) return cmp <= 0
      return !(v.major > major || (v.major === major && v.minor > minor && !c.minorDirty))
    case '~':
    case '~>':
      return tilde(v, c)
    default: // '^'
      if (cmp < 0) return false
      if (major > 0 || c.minorDirty) return v.major === major
      if (v.major > 0) return false
      if (minor > 0 || c.patchDirty) return v.minor === minor
      if (v.minor > 0) return false
      return v.patch === patch
  }
}

function tilde(v: semver.SemVer, c: Comparator): boolean {
  if (v.compare(c.con) < 0) return false
  const { major, minor, patch } = c.con
  if (major === 0 && minor === 0 && patch === 0 && !c.minorDirty && !c.patchDirty) return true
  return v.major === major && (c.minorDirty || v.minor === minor)
}

function masterminds(constraint: string, version: string, asHere = false): boolean {
  const v = new semver.SemVer(version)
  return parseMasterminds(constraint).some((group) => group.every((c) => check(v, c, asHere)))
}

function ours(constraint: string, version: string): boolean {
  const parsed = parseConstraint(constraint)
  if (!parsed.ok) throw new Error(parsed.error)
  return satisfies(parseVersion(version, { coerce: false })!, parsed.constraint)
}

const table = readFileSync(new URL('./testdata/masterminds-v3.5.0.tsv', import.meta.url), 'utf8')
  .trimEnd()
  .split('\n')
  .map((line) => {
    const [constraint, version, result] = line.split('\t') as [string, string, string]
    return { constraint, version, accepted: result === '1' }
  })

describe('the model of Masterminds', () => {
  test('agrees with Masterminds v3.5.0 on every row of its table', () => {
    const disagreements = table.filter((row) => masterminds(row.constraint, row.version) !== row.accepted)
    expect(disagreements).toEqual([])
    expect(table.length).toBeGreaterThan(1000)
  })
})

describe('translated ranges', () => {
  test('agree with Masterminds on its table, but for the differences this project makes on purpose', () => {
    const disagreements = table.filter(
      (row) => ours(row.constraint, row.version) !== masterminds(row.constraint, row.version, true),
    )
    expect(disagreements).toEqual([])
  })

  test.each([
    ['~1.2', '1.2.0-rc.1'],
    ['1.2.x', '1.2.0-rc.1'],
    ['^1', '1.0.0-rc.1'],
    ['1.x', '1.0.0-rc.1'],
    ['~1.2.0', '1.2.0-rc.1'],
    ['>=2', '2.0.0-rc.1'],
    ['^0', '0.0.0-rc.1'],
    ['1.2 - 1.4', '1.2.0-rc.1'],
  ])('%j does not accept %s, a prerelease below its lower bound (as in Masterminds)', (constraint, version) => {
    expect(masterminds(constraint, version)).toBe(false)
    expect(ours(constraint, version)).toBe(false)
  })

  test.each([
    ['~1.2', '1.2.1-rc.1', true],
    ['>1.2', '1.3.0-rc.1', true],
    ['^1', '2.0.0-rc.1', false],
    ['<=1.2', '1.2.9-rc.1', true],
    ['~0.0.0', '1.2.3', true],
    ['~0.0.0', '0.1.0', true],
    ['~0.0.0', '0.0.0-rc.1', false],
    ['~>0.0.0', '3.0.0', true],
    ['~0.0', '0.1.0', false],
    ['^0.0', '0.1.0', false],
  ])('%j on %s is %s, as in Masterminds', (constraint, version, want) => {
    expect(masterminds(constraint, version)).toBe(want)
    expect(ours(constraint, version)).toBe(want)
  })

  test.each([
    ['<2', '2.0.0-rc.1'],
    ['<1.2', '1.2.0-rc.1'],
    ['!=1.2', '1.2.5-rc.1'],
  ])(
    'differs on purpose: %j rejects %s, which Masterminds accepts once prereleases are allowed',
    (constraint, version) => {
      expect(masterminds(constraint, version)).toBe(true)
      expect(ours(constraint, version)).toBe(false)
    },
  )

  test('agree with the model over generated constraints and versions', () => {
    const digit = fc.constantFrom('0', '0', '1', '2', '3')
    const pre = fc.constantFrom('', '', '-rc.1', '-alpha', '-0', '-beta.2')
    const x = fc.constantFrom('x', 'X', '*')
    const partial = fc.oneof(
      digit,
      fc.tuple(digit, digit).map(([a, b]) => `${a}.${b}`),
      fc.tuple(digit, digit, digit, pre).map(([a, b, c, p]) => `${a}.${b}.${c}${p}`),
      fc.tuple(digit, x).map(([a, w]) => `${a}.${w}`),
      fc.tuple(digit, digit, x).map(([a, b, w]) => `${a}.${b}.${w}`),
    )
    const op = fc.constantFrom('', '=', '!=', '>', '<', '>=', '<=', '~', '~>', '^', '=>', '=<')
    const comparator = fc
      .tuple(op, fc.constantFrom('', ' '), fc.constantFrom('', 'v'), partial)
      .map(([o, space, v, p]) => `${o}${o ? space : ''}${v}${p}`)
    const group = fc.oneof(
      {
        weight: 9,
        arbitrary: fc
          .tuple(fc.array(comparator, { minLength: 1, maxLength: 3 }), fc.constantFrom(', ', ' ', ','))
          .map(([cs, sep]) => cs.join(sep)),
      },
      { weight: 1, arbitrary: fc.tuple(partial, partial).map(([a, b]) => `${a} - ${b}`) },
    )
    const constraint = fc.array(group, { minLength: 1, maxLength: 2 }).map((groups) => groups.join(' || '))
    const version = fc.tuple(digit, digit, digit, pre).map(([a, b, c, p]) => `${a}.${b}.${c}${p}`)
    fc.assert(
      fc.property(constraint, version, (c, v) => {
        expect(ours(c, v)).toBe(masterminds(c, v, true))
      }),
      { numRuns: propertyRuns(800) },
    )
  })
})
