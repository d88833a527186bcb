/** Property: stringValueText gives the bytes the yaml library prints for the same string value, or defers to it. */
import fc from 'fast-check'
import { Document, Scalar } from 'yaml'
import { stringValueText } from './string-style.js'
import { stringifyWithLibrary } from './documents.js'
import { propertyRuns } from '../../../test/support/property-runs.js'

/** The value as the library prints it in a block map nested in a sequence (a ResourceList item's field). */
function libraryText(value: string, doubleQuoted: boolean): string {
  const scalar = new Scalar(value)
  if (doubleQuoted) scalar.type = Scalar.QUOTE_DOUBLE
  const doc = new Document([{ a: { b: null } }])
  doc.setIn([0, 'a', 'b'], scalar)
  const text = stringifyWithLibrary(doc)
  const prefix = '- a:\n    b: '
  if (!text.startsWith(prefix) || !text.endsWith('\n')) throw new Error(`unexpected layout: ${JSON.stringify(text)}`)
  return text.slice(prefix.length, -1)
}

const schema = new Document().schema
const ascii = fc.string({
  unit: fc.constantFrom(...' !"#$%&\'()*+,-./0123456789:;<=>?@AZ[\\]^_`az{|}~'.split('')),
  maxLength: 12,
})
const samples = fc.constantFrom(
  'dependency check: RESOLVABLE; plan: install p0@1.0.0',
  'say "hi"',
  `it's "x"`,
  "it's",
  '0o17',
  '0x1F',
  '.inf',
  '1e3',
  'null',
  '~',
  '---',
  '...',
  '--- x',
  '%x',
  'a\\b',
  'a #b',
  'a# b',
  'a:',
  ': a',
  '- a',
  '-a',
  '?',
  'x ',
  ' x',
  '',
  'https://example.com/a?b=c#d',
  'p@1.0.0 -> q: install q@2.0.0',
)

describe('stringValueText (property)', () => {
  test('prints a plain or quoted value as the library does', () => {
    let rendered = 0
    const runs = propertyRuns(2000)
    fc.assert(
      fc.property(fc.oneof(ascii, samples), fc.boolean(), (value, doubleQuoted) => {
        const fast = stringValueText(value, schema, doubleQuoted)
        if (fast === undefined) return
        rendered++
        expect(fast).toBe(libraryText(value, doubleQuoted))
      }),
      { numRuns: runs },
    )
    expect(rendered).toBeGreaterThan(runs * 0.8)
  })

  test.each([
    ['dependency check: OK', '"dependency check: OK"'],
    ['say "hi": now', `'say "hi": now'`],
    ['a; b', 'a; b'],
    ['0o17', '"0o17"'],
  ])('%j prints as %s', (value, text) => {
    expect(stringValueText(value, schema, false)).toBe(text)
    expect(libraryText(value, false)).toBe(text)
  })
})
