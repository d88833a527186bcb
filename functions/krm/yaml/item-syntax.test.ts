/**
 * The line check must be sound: whatever it accepts, the parser reads without
 * an error, a duplicate key or an alias. What it rejects is parsed in full.
 */
import fc from 'fast-check'
import { parseDocument } from 'yaml'
import { isPlainBlockItem } from './item-syntax.js'
import { checkNode } from './documents.js'
import { propertyRuns } from '../../../test/support/property-runs.js'

const kptItem = `- # workload
  apiVersion: apps/v1
  kind: Deployment
  metadata: # kpt-merge: default/app
    name: app
    annotations:
      config.kubernetes.io/path: 'app.yaml'
      internal.kpt.dev/upstream-identifier: 'apps|Deployment|default|app'
  spec:
    template:
      spec:
        containers:
        - name: app
          image: "registry.example.com/app:1.0.0" # pinned
          args:
          - --port=8080
          - -v
          env: []
          script: |
            echo "a: b" [ {
              # not a comment

        - name: b
  data:
    empty:
    url: http://x.y/z?a=b#frag
`

describe('isPlainBlockItem', () => {
  test('accepts what kpt writes', () => {
    expect(isPlainBlockItem(kptItem)).toBe(true)
    expect(parseDocument(kptItem).errors).toEqual([])
  })

  test.each([
    ['an unclosed flow map', '- kind: A\n  data: {a: 1\n'],
    ['a truncated quoted scalar', '- kind: A\n  data:\n    a: "abc\n'],
    ['a truncated single-quoted scalar', "- kind: A\n  a: 'abc\n"],
    ['an invalid escape', '- kind: A\n  a: "\\q"\n'],
    ['a key over 1,024 characters', `- kind: A\n  ${'k'.repeat(1100)}: 1\n`],
    ['an alias', '- kind: A\n  a: *x\n'],
    ['an anchor', '- kind: A\n  a: &x 1\n'],
    ['a tag', '- kind: A\n  a: !!binary eA==\n'],
    ['a duplicate key', '- kind: A\n  data:\n    a: 1\n    a: 2\n'],
    ['a duplicate top-level key', '- kind: A\n  kind: B\n'],
    ['a key indented under a scalar', '- kind: A\n  data: x\n    a: 1\n'],
    ['a dedent to no parent', '- kind: A\n  data:\n      a: 1\n     b: 2\n'],
    ['a sequence after a scalar value', '- kind: A\n  a: 1\n  - x\n'],
    ['a nested mapping in a compact one', '- kind: A\n  a: b: c\n'],
    ['a value ending in a colon', '- kind: A\n  a: b:\n'],
    ['a block scalar with an indentation indicator', '- kind: A\n  a: |2\n   x\n'],
    ['a control character', '- kind: A\n  a: b\u0001c\n'],
    ['a whitespace-only line', '- kind: A\n   \n  a: b\n'],
    ['a compact nested sequence', '- kind: A\n  a:\n  - - x\n'],
    ['a line separator (not YAML white space) before #', '- kind: A\n  a: b\u2028#  k: v\n'],
    ['a no-break space before #', '- kind: A\n  a: b\u00a0#k: v\n'],
    ['a byte order mark before #', '- kind: A\n  a: b\ufeff#k: v\n'],
  ])('hands %s to the parser', (_name, chunk) => {
    expect(isPlainBlockItem(chunk)).toBe(false)
  })
})

const key = fc.constantFrom('a', 'b', 'name', 'spec', 'x.y/z', 'k8s', 'a-b', '_')
const scalar = fc.constantFrom(
  'v',
  "'q'",
  "'it''s'",
  '"d"',
  '"a\\"b"',
  '"\\x41"',
  '"\\q"',
  '1',
  '-1',
  '-',
  'a:b',
  'a: b',
  'b:',
  '{}',
  '[]',
  '[a]',
  '{a: 1}',
  '*x',
  '&x v',
  '!t v',
  '|',
  '>-',
  '"open',
  "'open",
  'a #c',
  'x # c',
  '? a',
  ': a',
  '@x',
  '%x',
  'a\tb',
  'a\u2028#c: d',
  'a\u00a0#c: d',
  'a\u3000',
)
const line = fc
  .tuple(
    fc.integer({ min: 0, max: 8 }),
    fc.oneof(
      fc.tuple(key, scalar).map(([k, v]) => `${k}: ${v}`),
      key.map((k) => `${k}:`),
      scalar.map((v) => `- ${v}`),
      fc.tuple(key, scalar).map(([k, v]) => `- ${k}: ${v}`),
      key.map((k) => `- ${k}:`),
      fc.constantFrom('-', '# c', 'text', '- - x', ''),
    ),
  )
  .map(([indent, text]) => `${' '.repeat(indent)}${text}`)

test('property: an accepted item parses without errors, duplicate keys or aliases', () => {
  fc.assert(
    fc.property(fc.tuple(fc.tuple(key, scalar), fc.array(line, { maxLength: 12 })), ([[k, v], rest]) => {
      const chunk = `- ${k}: ${v}\n${rest.map((l) => `  ${l}`).join('\n')}\n`
      if (!isPlainBlockItem(chunk)) return
      const doc = parseDocument(chunk, { uniqueKeys: false })
      expect(doc.errors).toEqual([])
      const item = (doc.contents as { items: unknown[] }).items[0]
      expect(() => checkNode(item as never, doc, 'item')).not.toThrow()
    }),
    { numRuns: propertyRuns(1000) },
  )
})
