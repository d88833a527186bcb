/**
 * Property: isAmbiguousString's fast paths agree with what it stands for: an
 * empty or space-padded text, or one YAML 1.1 reads as no string.
 */
import fc from 'fast-check'
import { parse } from 'yaml'
import { isAmbiguousString } from './ambiguous-string.js'
import { propertyRuns } from '../../../test/support/property-runs.js'

function readsAsOtherType(value: string): boolean {
  if (value === '' || /^\s|\s$/.test(value)) return true
  try {
    return typeof parse(value, { version: '1.1', uniqueKeys: false, logLevel: 'error' }) !== 'string'
  } catch {
    return true
  }
}

const ascii = fc.string({
  unit: fc.constantFrom(...' !"#$%&\'()*+,-./0123456789:;<=>?@AZaz[\\]^_`{|}~'.split('')),
  maxLength: 10,
})
const letterFirst = fc
  .tuple(fc.constantFrom('a', 'y', 'n', 'o', 'N', 'T', 'f', 'x'), ascii)
  .map(([first, rest]) => first + rest)
const words = fc.constantFrom(
  'yes',
  'No',
  'on',
  'OFF',
  'null',
  'True',
  'y',
  'n',
  'spec.packages[0].versions[1].dependencies[0]',
  'a: b',
  'a #b',
  'a:',
  'a ',
  'a,b',
  'a]',
  'it\'s "x"',
)

test('isAmbiguousString is YAML 1.1 reading the text as another type', () => {
  fc.assert(
    fc.property(fc.oneof(letterFirst, words, ascii), (value) => {
      expect(isAmbiguousString(value)).toBe(readsAsOtherType(value))
    }),
    { numRuns: propertyRuns(2000) },
  )
})
