import fc from 'fast-check'
import semver from 'semver'
import { compareVersions, parseVersion, sameVersion, sortVersions } from './versions.js'

describe('parseVersion', () => {
  test.each([
    ['v1.2.3', true, '1.2.3', false],
    ['1.2.3-rc.1+b', true, '1.2.3-rc.1', false],
    ['v1', true, '1.0.0', true],
    ['1.2', true, '1.2.0', true],
    ['v1', false, undefined, false],
    ['1.2.3.4', true, undefined, false],
    ['latest', true, undefined, false],
  ])('%s (coerce %s)', (raw, coerce, want, coerced) => {
    const v = parseVersion(raw, { coerce })
    expect(v?.semver?.version).toBe(want)
    if (v) expect(v.coerced).toBe(coerced)
  })

  test('digests parse as digests', () => {
    const digest = `sha256:${'0'.repeat(64)}`
    expect(parseVersion(digest, { coerce: false })).toEqual({ raw: digest, digest, coerced: false })
  })
})

describe('compareVersions', () => {
  test.each([
    ['1.0.0', '1.0.0+1', -1],
    ['1.0.0+10', '1.0.0+9', 1],
    ['1.0.0+a', '1.0.0+1', 1],
    ['1.17.0+2', 'v1.17.1+1', -1],
    ['2.0.0-alpha.1', '1.1.7', 1],
    ['v1.0.0', '1.0.0', 1], // equal releases: the raw text decides, so the order is total
  ])('%s vs %s', (a, b, want) => {
    expect(Math.sign(compareVersions(parseVersion(a, { coerce: true })!, parseVersion(b, { coerce: true })!))).toBe(
      want,
    )
  })

  const versionText = fc
    .tuple(
      fc.boolean(),
      fc.nat(3),
      fc.nat(3),
      fc.nat(3),
      fc.option(fc.constantFrom('alpha', 'rc.1', 'rc.2'), { nil: undefined }),
      fc.option(fc.constantFrom('1', '2', '10', 'a'), { nil: undefined }),
    )
    .map(
      ([v, a, b, c, pre, build]) => `${v ? 'v' : ''}${a}.${b}.${c}${pre ? `-${pre}` : ''}${build ? `+${build}` : ''}`,
    )

  test('agrees with semver.compareBuild and is a total order', () => {
    fc.assert(
      fc.property(versionText, versionText, (a, b) => {
        const va = parseVersion(a, { coerce: false })!
        const vb = parseVersion(b, { coerce: false })!
        const npm = semver.compareBuild(a, b)
        const ours = compareVersions(va, vb)
        if (npm !== 0) expect(Math.sign(ours)).toBe(npm)
        expect(Math.sign(compareVersions(vb, va)) + 0).toBe(-Math.sign(ours) + 0)
        expect(ours === 0).toBe(a === b)
        expect(sameVersion(va, vb)).toBe(npm === 0)
      }),
    )
  })

  test('sorting does not depend on input order', () => {
    fc.assert(
      fc.property(fc.array(versionText, { maxLength: 12 }), (texts) => {
        const parsed = texts.map((t) => parseVersion(t, { coerce: false })!)
        const forward = sortVersions(parsed).map((v) => v.raw)
        const backward = sortVersions([...parsed].reverse()).map((v) => v.raw)
        expect(backward).toEqual(forward)
      }),
    )
  })
})
