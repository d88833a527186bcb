/**
 * Property: plain-block.ts's readPlainValue gives the library's `toJS()` of the same text, and
 * reads what its readPlainBlock reads (but a key given twice); and both readers
 * read version ranges such as `^1`, `~1.2`, `<2` or `=1.0` as the library does.
 */
import fc from 'fast-check'
import { Document, parseDocument } from 'yaml'
import { readPlainValue } from './plain-block.js'
import { readPlainDocument } from './documents.js'
import { setFastPathsOff } from '../fast-paths.js'
import { propertyRuns } from '../../../test/support/property-runs.js'

// This suite tests the fast path itself: on, whatever KPT_VARIANTS_NO_FAST_PATHS says (the oracle run).
beforeAll(() => setFastPathsOff([]))

type Tree =
  | { kind: 'scalar'; text: string }
  | { kind: 'map'; entries: { key: string; value: Tree }[] }
  | { kind: 'seq'; items: Tree[] }

const schema = new Document().schema
const key = fc.oneof(
  { weight: 10, arbitrary: fc.constantFrom('a', 'b', 'name', 'version', 'x.y/z') },
  fc.constantFrom("'q'", '"dq"', 'true', '__proto__', 'a b', '-x'),
)
const scalarText = fc.oneof(
  { weight: 5, arbitrary: fc.stringMatching(/^[a-z][a-z0-9.-]{0,6}$/) },
  { weight: 5, arbitrary: fc.stringMatching(/^[\^~<=(+$;0-9][0-9a-z.,|<>= *x-]{0,7}$/) },
  fc.constantFrom(
    '^1',
    '~1.2',
    '~',
    '+1',
    '+',
    '<2',
    '<=1.2',
    '=1.0.0',
    '>=1',
    '~0.0.0',
    '^1 || ^2',
    '$x',
    '(a)',
    ';x',
    '<<',
    '.inf',
    '0x1F',
    '1e3',
    '"a b"',
    "'s'",
    '{}',
    '[]',
    'true',
    'null',
    'a: b',
    'x #y',
  ),
)
const tree = fc.letrec<{ value: Tree; map: Tree; seq: Tree }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalarText.map((text) => ({ kind: 'scalar' as const, text })),
    tie('map'),
    tie('seq'),
  ),
  map: fc
    .array(fc.record({ key, value: tie('value') }), { minLength: 1, maxLength: 4 })
    .map((entries) => ({ kind: 'map' as const, entries })),
  seq: fc.array(tie('value'), { minLength: 1, maxLength: 3 }).map((items) => ({ kind: 'seq' as const, items })),
}))

function print(node: Tree, indent: number): string[] {
  const pad = ' '.repeat(indent)
  if (node.kind === 'scalar') return [`${pad}${node.text}`]
  if (node.kind === 'map') {
    return node.entries.flatMap(({ key: k, value }) =>
      value.kind === 'scalar'
        ? [`${pad}${k}: ${value.text}`]
        : [`${pad}${k}:`, ...print(value, value.kind === 'seq' ? indent : indent + 2)],
    )
  }
  return node.items.flatMap((item) => {
    if (item.kind === 'scalar') return [`${pad}- ${item.text}`]
    if (item.kind === 'seq') return [`${pad}-`, ...print(item, indent + 2)]
    const [first, ...rest] = print(item, indent + 2)
    return [`${pad}- ${first!.trimStart()}`, ...rest]
  })
}

function library(text: string): { ok: true; value: unknown; duplicate: boolean } | { ok: false } {
  const doc = parseDocument(text, { uniqueKeys: false })
  if (doc.errors.length > 0) return { ok: false }
  return { ok: true, value: doc.toJS(), duplicate: parseDocument(text).errors.length > 0 }
}

test('readPlainValue is the library’s value, or declines', () => {
  let read = 0
  const runs = propertyRuns(1000)
  fc.assert(
    fc.property(tree.value, (t) => {
      if (t.kind === 'scalar') return
      const text = `${print(t, 0).join('\n')}\n`
      const value = readPlainValue(text, schema)
      const nodes = readPlainDocument(text)
      const expected = library(text)
      if (nodes && expected.ok && !expected.duplicate && !text.includes('__proto__:')) expect(value).toBeDefined()
      if (value === undefined) return
      read++
      expect(expected.ok).toBe(true)
      if (!expected.ok) return
      expect(expected.duplicate).toBe(false)
      expect(value).toEqual(expected.value)
    }),
    { numRuns: runs },
  )
  expect(read).toBeGreaterThan(runs * 0.1)
})

test.each([
  ['^1', '^1'],
  ['~1.2', '~1.2'],
  ['<2', '<2'],
  ['=1.0.0', '=1.0.0'],
  ['(a)', '(a)'],
  ['~', null],
  ['+1', 1],
])('version: %s reads as the library reads it, by both readers', (text, value) => {
  const doc = `version: ${text}\n`
  expect(parseDocument(doc).toJS()).toEqual({ version: value })
  const nodes = readPlainDocument(doc)
  if (value === null || typeof value === 'number') {
    expect(readPlainValue(doc, schema)).toBeUndefined()
    expect(nodes).toBeUndefined()
  } else {
    expect(readPlainValue(doc, schema)).toEqual({ version: value })
    expect(nodes?.toJS()).toEqual({ version: value })
  }
})
