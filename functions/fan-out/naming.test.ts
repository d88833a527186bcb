import fc from 'fast-check'
import { nameErrors, packageVariantIdentifier, packageVariantName } from './naming.js'

describe('packageVariantName', () => {
  test.each([
    ['short ids are kept', 'my-pvs-dnrepo2-dnpkg2', 'my-pvs-dnrepo2-dnpkg2'],
    ['63 bytes is the boundary', `pvs-r-${'p'.repeat(57)}`, `pvs-r-${'p'.repeat(57)}`],
    [
      '64 bytes are cut and hashed',
      `pvs-r-${'p'.repeat(58)}`,
      'pvs-r-pppppppppppppppppppppppppppppppppppppppppppppppp-359048fb',
    ],
    [
      "Porch's unit test",
      'my-pvs-dnrepo4-supersupersuperloooooooooooooooooooooooooooooooooooooooooooooooooongpkgname',
      'my-pvs-dnrepo4-supersupersuperlooooooooooooooooooooooo-bec36506',
    ],
    [
      "the docs' example, with the real hash",
      'very-long-packagevariantset-name-very-long-repo-name-very-long-package-name',
      'very-long-packagevariantset-name-very-long-repo-name-v-967492f1',
    ],
    [
      'a cut at a hyphen gives a double hyphen',
      'abcdefghijklmnopqrstuvwxyz-abcdefghijklmnopqrstuvwxyz-ab-cdefghijklmnop',
      'abcdefghijklmnopqrstuvwxyz-abcdefghijklmnopqrstuvwxyz--0bce6e68',
    ],
  ])('%s', (_, id, want) => {
    expect(packageVariantName(id)).toBe(want)
  })

  test('the identifier joins set, repo and package with hyphens (collisions are possible)', () => {
    expect(packageVariantIdentifier('a', 'b-c', 'd')).toBe(packageVariantIdentifier('a', 'b', 'c-d'))
  })

  const segment = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,40}[a-z0-9])?$/)

  test('property: names are at most 63 characters and deterministic', () => {
    fc.assert(
      fc.property(segment, segment, segment, (pvs, repo, pkg) => {
        const id = packageVariantIdentifier(pvs, repo, pkg)
        const name = packageVariantName(id)
        expect(name.length).toBeLessThanOrEqual(63)
        expect(packageVariantName(id)).toBe(name)
        if (id.length <= 63) expect(name).toBe(id)
        else {
          expect(name).toHaveLength(63)
          expect(name.startsWith(id.slice(0, 54))).toBe(true)
          expect(name.slice(54)).toMatch(/^-[0-9a-f]{8}$/)
        }
      }),
    )
  })

  test('property: distinct long ids sharing a prefix get distinct names', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 54, maxLength: 54 }).map((s) => s.replace(/[^a-z]/g, 'a')),
        segment,
        segment,
        (prefix, a, b) => {
          fc.pre(a !== b)
          expect(packageVariantName(`${prefix}-${a}`)).not.toBe(packageVariantName(`${prefix}-${b}`))
        },
      ),
    )
  })

  test('property: names built from DNS-1123 labels are valid object names', () => {
    fc.assert(
      fc.property(segment, segment, segment, (pvs, repo, pkg) => {
        const name = packageVariantName(packageVariantIdentifier(pvs, repo, pkg))
        // A cut can end in '-' only before the hash, so the name still ends alphanumeric.
        expect(nameErrors(name)).toEqual([])
      }),
    )
  })

  test.each([['Nginx'], ['edge/nginx'], ['pvs-repo-pkg-']])('%s is not a valid name', (name) => {
    expect(nameErrors(name).length).toBeGreaterThan(0)
  })
})
