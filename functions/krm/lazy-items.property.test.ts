/** Property: a lazily split ResourceList behaves exactly like a fully parsed one. */
import fc from 'fast-check'
import { KubeObject } from './kube-object.js'
import { scanHeader, splitItems } from './yaml/lazy-items.js'
import { ResourceList } from './resource-list.js'
import { setFastPathsOff } from './fast-paths.js'
import { propertyRuns } from '../../test/support/property-runs.js'

// This suite tests the fast path itself: on, whatever KPT_VARIANTS_NO_FAST_PATHS says (the oracle run).
beforeAll(() => setFastPathsOff([]))

const word = fc.stringMatching(/^[a-z][a-z0-9-]{0,6}$/)
const comment = fc.constantFrom('', ' # c', ' # kpt-merge: ns/x')
/** Scalar spellings, some the scanner reads and some it must hand to the parser. */
const value = fc.oneof(
  word,
  word.map((w) => `'${w}'`),
  word.map((w) => `"${w}"`),
  fc.constantFrom(
    "'0'",
    '0',
    'true',
    "'it''s'",
    '"a\\"b"',
    'a:b',
    'http://x.y/z',
    'null',
    '~',
    '""',
    "''",
    '0755',
    '{}',
    '[a]',
    '|',
    'a b',
  ),
)
const annotationKey = fc.constantFrom(
  'config.kubernetes.io/path',
  'internal.config.kubernetes.io/path',
  'internal.config.kubernetes.io/index',
  'kpt.dev/config-injection',
  'a',
  '"quoted/key"',
)
/** `key: value` lines; a block scalar's text is indented under its key, as kpt writes it. */
const mapLines = (indent: number, entries: [string, string][]) =>
  entries
    .map(([k, v]) => `${' '.repeat(indent)}${k}: ${v.startsWith('|') ? `|\n${' '.repeat(indent + 2)}text` : v}`)
    .join('\n')

const item = fc
  .record({
    head: fc.constantFrom('', '# head comment'),
    apiVersion: fc.constantFrom('v1', 'apps/v1', 'kpt.dev/v1', '"v1"'),
    kind: fc.constantFrom('ConfigMap', 'Deployment', 'Kptfile'),
    metaComment: comment,
    name: fc.option(value, { nil: undefined }),
    namespace: fc.option(value, { nil: undefined }),
    labels: fc.option(fc.array(fc.tuple(word, value), { maxLength: 3 }), { nil: undefined }),
    annotations: fc.option(fc.array(fc.tuple(annotationKey, value), { maxLength: 3 }), { nil: undefined }),
    finalizers: fc.boolean(),
    flowMetadata: fc.boolean(),
    spec: fc.array(fc.tuple(word, value), { maxLength: 3 }),
  })
  .map((r) => {
    const lines: string[] = []
    const first = r.head ? [`- ${r.head}`, `  apiVersion: ${r.apiVersion}`] : [`- apiVersion: ${r.apiVersion}`]
    lines.push(...first, `  kind: ${r.kind}`)
    if (r.flowMetadata) lines.push(`  metadata: {name: ${r.name ?? 'x'}}`)
    else {
      lines.push(`  metadata:${r.metaComment}`)
      if (r.name !== undefined) lines.push(mapLines(4, [['name', r.name]]))
      if (r.namespace !== undefined) lines.push(mapLines(4, [['namespace', r.namespace]]))
      if (r.finalizers) lines.push('    finalizers:', '    - a.b/c')
      if (r.labels) lines.push(r.labels.length ? `    labels:\n${mapLines(6, r.labels)}` : '    labels: {}')
      if (r.annotations)
        lines.push(r.annotations.length ? `    annotations:\n${mapLines(6, r.annotations)}` : '    annotations: {}')
    }
    if (r.spec.length) lines.push(`  spec:\n${mapLines(4, r.spec)}`)
    return `${lines.join('\n')}\n`
  })

const resourceList = fc
  .record({ items: fc.array(item, { maxLength: 5 }), functionConfig: fc.boolean() })
  .map(({ items, functionConfig }) => {
    const fc_ = functionConfig
      ? 'functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: function-input\n  data: {a: b}\n'
      : ''
    return `apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:${items.length ? `\n${items.join('')}` : ' []\n'}${fc_}`
  })
  .filter((text) => {
    try {
      ResourceList.parse(text, { lazy: false })
      return true
    } catch {
      return false // duplicate keys and the like: not a valid list to compare
    }
  })

type Mutation =
  | { op: 'annotate'; item: number; key: string; value: string }
  | { op: 'set'; item: number; value: string }
  | { op: 'removeLabels'; item: number }
  | { op: 'drop'; item: number }
  | { op: 'add' }
  | { op: 'read'; item: number }
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({
    op: fc.constant('annotate' as const),
    item: fc.nat(5),
    key: fc.constantFrom('a', 'kpt.dev/x'),
    value: fc.constantFrom('v', 'yes', '0'),
  }),
  fc.record({ op: fc.constant('set' as const), item: fc.nat(5), value: fc.constantFrom('x', 'on') }),
  fc.record({ op: fc.constant('removeLabels' as const), item: fc.nat(5) }),
  fc.record({ op: fc.constant('drop' as const), item: fc.nat(5) }),
  fc.record({ op: fc.constant('add' as const) }),
  fc.record({ op: fc.constant('read' as const), item: fc.nat(5) }),
)

function apply(rl: ResourceList, mutations: readonly Mutation[]): void {
  for (const m of mutations) {
    if (m.op === 'add') {
      rl.items.push(KubeObject.fromObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'new' } }))
      continue
    }
    const target = rl.items[m.item % Math.max(rl.items.length, 1)]
    if (!target) continue
    if (m.op === 'annotate') target.setAnnotation(m.key, m.value)
    else if (m.op === 'set') target.set(['spec', 'touched'], m.value)
    else if (m.op === 'removeLabels') target.remove(['metadata', 'labels'])
    else if (m.op === 'drop') rl.items.splice(rl.items.indexOf(target), 1)
    else void target.get(['spec'])
  }
}

/** Every identity accessor's value, or the error it throws. */
function identity(object: KubeObject) {
  const read = (get: () => unknown) => {
    try {
      return get()
    } catch (err) {
      return `throws ${(err as Error).message}`
    }
  }
  return {
    apiVersion: read(() => object.apiVersion),
    kind: read(() => object.kind),
    name: read(() => object.name),
    namespace: read(() => object.namespace),
    labels: read(() => object.labels()),
    annotations: read(() => object.annotations()),
    path: read(() => object.path),
    index: read(() => object.index),
  }
}

describe('lazy items (property)', () => {
  test('identity, printing and edits agree with a full parse', () => {
    fc.assert(
      fc.property(resourceList, fc.array(mutation, { maxLength: 4 }), (text, mutations) => {
        const eager = ResourceList.parse(text, { lazy: false })
        const lazy = ResourceList.parse(text)
        expect(lazy.items.map(identity)).toEqual(eager.items.map(identity))
        expect(lazy.toString()).toBe(eager.toString())
        const applied = (rl: ResourceList) => {
          try {
            apply(rl, mutations)
            return rl.toString()
          } catch (err) {
            return `throws ${(err as Error).message}`
          }
        }
        expect(applied(lazy)).toBe(applied(eager))
      }),
      { numRuns: propertyRuns(300) },
    )
  })

  test('kpt-style lists are split, and untouched items print verbatim', () => {
    fc.assert(
      fc.property(resourceList, (text) => {
        const split = splitItems(text)
        if (text.includes('items:\n')) expect(split).toBeDefined()
        expect(ResourceList.parse(text).toString()).toBe(ResourceList.parse(text, { lazy: false }).toString())
      }),
      { numRuns: propertyRuns(120) },
    )
  })
})

describe('scanHeader', () => {
  test.each([
    [
      'a plain kpt item',
      "- apiVersion: v1\n  kind: ConfigMap\n  metadata: # kpt-merge: /a\n    name: a\n    annotations:\n      config.kubernetes.io/path: 'a.yaml'\n  data:\n    k: v\n",
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'a', annotations: { 'config.kubernetes.io/path': 'a.yaml' } },
    ],
    ['flow metadata', '- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n', undefined],
    [
      'a numeric annotation value',
      '- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    annotations:\n      a: 0\n',
      undefined,
    ],
    ['a block scalar annotation', '- kind: A\n  metadata:\n    annotations:\n      a: |\n        x\n', undefined],
    ['duplicate keys', '- kind: A\n  kind: B\n', undefined],
  ])('%s', (_name, chunk, want) => {
    expect(scanHeader(chunk)).toEqual(want)
  })
})
