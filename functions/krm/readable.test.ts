/**
 * Writers of package files outside a ResourceList (kpt-variants render) print
 * with the ResourceList's guarantee: text that parses, comments dropped with a
 * warning where it would not (readable.ts, yaml/read-back.ts).
 */
import fc from 'fast-check'
import { parseDocument } from 'yaml'
import { source } from '../../test/support/source.js'
import { KubeObject } from './kube-object.js'
import { readableDocument } from './readable.js'
import { parse, print, readsBack } from './yaml/index.js'
import { propertyRuns } from '../../test/support/property-runs.js'

const binding = source`
  # Bound per cluster.
  apiVersion: db.example.com/v1
  kind: DatabaseBinding
  metadata: # kpt-merge: shop/orders
    name: orders
    namespace: shop
  spec:
    hosts: # the primary first
    - localhost
    port: 5432 # the default
`
const emptied = source`
  apiVersion: db.example.com/v1
  kind: DatabaseBinding
  metadata: # kpt-merge: shop/orders
    name: orders
    namespace: shop
  spec:
    hosts: []
    port: 5432
`
const warning =
  'comments dropped from db/binding.yaml (DatabaseBinding/shop/orders): printed with them, the output would not parse as YAML'

/** The binding with `spec.hosts` set to an empty list: printed with its comments, it does not parse. */
function emptiedDoc() {
  const doc = parse(binding)
  new KubeObject(doc.contents as never, doc).set(['spec', 'hosts'], [])
  expect(parseDocument(print(doc)).errors).not.toEqual([])
  return doc
}

describe('readableDocument', () => {
  test('a document that would not parse loses its comments but kpt-merge, and the warning names file and object', () => {
    expect(readableDocument(emptiedDoc(), { file: 'db/binding.yaml' })).toEqual({ text: emptied, warning })
  })

  test('without a file, the warning names the object', () => {
    expect(readableDocument(emptiedDoc()).warning).toBe(
      'comments dropped from DatabaseBinding/shop/orders: printed with them, the output would not parse as YAML',
    )
  })

  test('a document that reads back keeps its comments, with no warning; text already printed is used as it is', () => {
    const doc = parse(binding)
    new KubeObject(doc.contents as never, doc).set(['spec', 'port'], 5433)
    const expected = binding.replace('5432', '5433')
    expect(readableDocument(doc, { file: 'db/binding.yaml' })).toEqual({ text: expected })
    expect(readableDocument(doc, { printed: expected })).toEqual({ text: expected })
  })

  test('text printed already that would not parse is printed again, without comments', () => {
    const doc = emptiedDoc()
    expect(readableDocument(doc, { file: 'db/binding.yaml', printed: print(doc) })).toEqual({
      text: emptied,
      warning,
    })
  })

  test('in wide style the same document reads back: its comments stay', () => {
    const { text, warning } = readableDocument(emptiedDoc(), { wide: true })
    expect(text).toBe(
      binding.replace('  hosts: # the primary first\n  - localhost\n', '  hosts: # the primary first\n    []\n'),
    )
    expect(warning).toBeUndefined()
  })
})

describe('KubeObject.toReadableYaml', () => {
  test('drops the comments (but kpt-merge) of an object that would not parse, and says so', () => {
    const object = new KubeObject(parse(binding).contents as never)
    object.set(['spec', 'hosts'], [])
    expect(object.toReadableYaml()).toEqual({ text: emptied, commentsDropped: true })
    // Dropped from the object itself.
    expect(object.toYaml()).toBe(emptied)
  })

  test('an object that reads back is printed as toYaml prints it', () => {
    const object = new KubeObject(parse(binding).contents as never)
    object.set(['spec', 'hosts'], ['a', 'b'])
    expect(object.toReadableYaml()).toEqual({ text: object.toYaml(), commentsDropped: false })
    expect(object.toYaml()).toContain('  hosts: # the primary first\n  - a\n  - b\n')
  })
})

describe('readsBack', () => {
  const head = 'apiVersion: v1\nkind: ConfigMap\nmetadata: # kpt-merge: shop/orders\n  name: orders\n'

  test.each([
    ['no comment', 'apiVersion: v1\nkind: ConfigMap\n', true],
    ["kpt's merge comment only", `${head}data:\n  a: b\n`, true],
    ['the merge comment with metadata left empty', 'kind: ConfigMap\nmetadata: # kpt-merge: /x\n  {}\n', true],
    ['the merge comment over a list at its own indentation', 'kind: ConfigMap\nmetadata: # kpt-merge: /x\n[]\n', false],
    ['the merge comment at the end of the text', 'kind: ConfigMap\nmetadata: # kpt-merge: /x', true],
    ['a comment elsewhere, which reads back', `${head}data: # filled in\n  a: b\n`, true],
    ["a commented key's empty list at the key's indentation", `${head}spec:\n  hosts: # c\n  []\n`, false],
    [
      'the same with a merge comment of another form',
      'metadata: # kpt-merge: a b\n  name: x\nspec:\n  h: # c\n  []\n',
      false,
    ],
    ['a # in a string only', `${head}data:\n  url: "http://x/#top"\n`, true],
  ])('%s', (_name, text, expected) => {
    expect(readsBack(text)).toBe(expected)
    expect(readsBack(text)).toBe(parseDocument(text, { uniqueKeys: false }).errors.length === 0)
  })
})

describe('property: readsBack says whether a printed document parses; readableDocument always prints one that does', () => {
  // Comments where an edit may make the printer stumble, and kpt's merge comment.
  const spec = fc.record({
    merge: fc.constantFrom('', ' # kpt-merge: ns/n'),
    top: fc.constantFrom('', '# a resource\n'),
    specComment: fc.constantFrom('', ' # on spec'),
    aComment: fc.constantFrom('', ' # on a'),
    cComment: fc.constantFrom('', ' # on c'),
    tail: fc.constantFrom('', '\n  # after d'),
  })
  const edit = fc.record({
    path: fc.constantFrom(['spec'], ['spec', 'a'], ['spec', 'c'], ['spec', 'd'], ['spec', 'a', 'b']),
    value: fc.constantFrom<unknown>([], {}, 'v', ['y'], { k: 'v' }, [[]], [{}], null, 'a # b'),
  })

  test('compact and wide', () => {
    fc.assert(
      fc.property(spec, fc.array(edit, { maxLength: 3 }), fc.boolean(), (s, edits, wide) => {
        const text = `${s.top}apiVersion: v1\nkind: ConfigMap\nmetadata:${s.merge}\n  name: n\nspec:${s.specComment}\n  a:${s.aComment}\n    b: 1\n  c:${s.cComment}\n  - x\n  d: 1${s.tail}\n`
        const doc = parse(text)
        const object = new KubeObject(doc.contents as never, doc)
        for (const e of edits) object.set(e.path, e.value)
        const printed = print(doc, { wide })
        expect(readsBack(printed)).toBe(parseDocument(printed, { uniqueKeys: false }).errors.length === 0)
        const written = readableDocument(doc, { wide, file: 'f.yaml' })
        expect(parseDocument(written.text).errors).toEqual([])
        expect(written.warning !== undefined).toBe(written.text !== printed)
      }),
      { numRuns: propertyRuns(200) },
    )
  })
})
