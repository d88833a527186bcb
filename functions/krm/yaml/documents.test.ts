import { parseDocument } from 'yaml'
import { source } from '../../../test/support/source.js'
import { isAmbiguousString } from './ambiguous-string.js'
import { parseYamlDocument, parseYamlDocuments, stringifyYamlDocument } from './documents.js'
import { reconcileNode, toNode } from './nodes.js'

const roundTrip = (text: string) => stringifyYamlDocument(parseYamlDocument(text))

describe('round trip keeps kpt-written YAML byte for byte', () => {
  test.each([
    [
      'a head comment after a sequence dash',
      source`
      items:
      - # head comment for deploy.yaml
        apiVersion: apps/v1
        kind: Deployment
    `,
    ],
    [
      'a kpt-merge comment after a map key',
      source`
      metadata: # kpt-merge: ns1/web
        name: web # name comment
    `,
    ],
    [
      'a comment after a key holding a sequence',
      source`
      list: # items follow
      - a
      - b
    `,
    ],
    [
      'several comment lines after a dash',
      source`
      - # first
        # second
        key: v
    `,
    ],
    [
      'nested dash comments',
      source`
      spec:
        containers:
        - # nested
          name: a
          image: "nginx:1.25"
    `,
    ],
    [
      'scalar styles',
      source`
      plain: text
      single: 'it''s'
      double: "quoted"
      literal: |
        line one
        line two
      folded: >-
        folded text
      flow: {a: b, c: [d, e]}
      empty: []
    `,
    ],
    [
      'numbers in their original form',
      source`
      octal: 0755
      exp: 1e3
      hex: 0xFF
      frac: .5
      float: 1.50
      bool: TRUE
      tilde: ~
    `,
    ],
    [
      'kpt annotations',
      source`
      metadata:
        annotations:
          config.kubernetes.io/index: '0'
          config.kubernetes.io/path: 'deploy.yaml'
          internal.config.kubernetes.io/seqindent: 'compact'
    `,
    ],
    [
      'unicode and long lines',
      source`
      text: "héllo wörld ✓"
      long: ${'x'.repeat(300)}
    `,
    ],
  ])('%s', (_name, text) => {
    expect(roundTrip(text)).toBe(text)
  })
})

describe('comments print back as comments', () => {
  // The library starts a comment line after a line separator; YAML does not break there (fuzz seed -1958739682).
  test.each([
    ['a line separator first', 'm:\n  a: re  #\u2028gion: eu\n', 'm:\n  a: re # gion: eu\n'],
    ['a paragraph separator inside', 'b: 1 # x\u2029y\n', 'b: 1 # x y\n'],
    ['one before a key', '# a\u2028b\nc: d\n', '# a b\nc: d\n'],
  ])('%s', (_name, text, printed) => {
    const out = stringifyYamlDocument(parseYamlDocument(text, 'ResourceList'))
    expect(out).toBe(printed)
    expect(parseDocument(out).errors).toEqual([])
  })
})

describe('parse errors are reported, not thrown raw', () => {
  test.each([
    [
      'an unclosed flow sequence',
      'a: [b, c\n',
      /^ResourceList:2:1: Flow sequence in block collection must be sufficiently indented and end with a \]$/,
    ],
    ['a tab indentation', 'a:\n\tb: c\n', /ResourceList:\d+:\d+/],
    ['very deep nesting', `${'['.repeat(5000)}${']'.repeat(5000)}\n`, /ResourceList/],
  ])('%s', (_name, text, message) => {
    expect(() => parseYamlDocument(text, 'ResourceList')).toThrow(message)
  })

  test('multi-document streams report the failing file', () => {
    expect(() => parseYamlDocuments('a: b\n---\nc: [\n', 'cluster/cm.yaml')).toThrow(/^cluster\/cm.yaml:/)
  })
})

describe('isAmbiguousString', () => {
  test.each([
    'yes',
    'No',
    'on',
    'OFF',
    'y',
    '0755',
    '08',
    '1:20',
    '2001-12-14',
    '1e3',
    '.5',
    '~',
    'null',
    'true',
    '0x1F',
    '1_000',
    '+1',
    '',
    ' padded',
  ])('%j is quoted', (value) => expect(isAmbiguousString(value)).toBe(true))
  test.each(['us-east1', 'nginx:1.25', 'gold', 'a.b.c', 'hello world', 'v1.2.3', 'example.com/name'])(
    '%j stays plain',
    (value) => expect(isAmbiguousString(value)).toBe(false),
  )
})

describe('toNode and reconcileNode', () => {
  test('new strings that YAML 1.1 misreads are double-quoted', () => {
    const doc = parseDocument('{}')
    doc.contents = toNode({ enabled: 'yes', mode: '0755', region: 'us-east1', count: 3 }) as never
    expect(stringifyYamlDocument(doc)).toBe('enabled: "yes"\nmode: "0755"\nregion: us-east1\ncount: 3\n')
  })

  test('reconciling a map keeps existing keys, comments and order, appends new keys, drops missing ones', () => {
    const doc = parseYamlDocument(source`
      spec:
        b: 1 # keep me
        a: old
        gone: x
    `)
    const spec = doc.get('spec', true) as never
    reconcileNode(spec, { a: 'new', b: 1, c: 'yes' })
    expect(stringifyYamlDocument(doc)).toBe(source`
      spec:
        b: 1 # keep me
        a: new
        c: "yes"
    `)
  })

  test('a plain scalar that becomes ambiguous is quoted; a quoted one keeps its quotes', () => {
    const doc = parseYamlDocument("a: text\nb: 'text'\n")
    reconcileNode(doc.get('a', true) as never, 'on')
    reconcileNode(doc.get('b', true) as never, 'other')
    expect(stringifyYamlDocument(doc)).toBe('a: "on"\nb: \'other\'\n')
  })
})
