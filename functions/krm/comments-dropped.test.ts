/**
 * Output that would not parse with its comments loses them, and says so: a
 * warning result per item whose comments were dropped, naming its file
 * (yaml/read-back.ts). The trigger: a comment after a key whose value is set
 * to an empty list, which the yaml library prints as `data: # note` with `[]`
 * on the next line at the key's indentation, which does not parse.
 */
import fc from 'fast-check'
import { parseDocument } from 'yaml'
import { source } from '../../test/support/source.js'
import { ResourceList } from './resource-list.js'
import { runFunction } from './run.js'
import type { KrmFunction } from './run.js'
import { propertyRuns } from '../../test/support/property-runs.js'

const list = source`
  apiVersion: config.kubernetes.io/v1
  kind: ResourceList
  items:
  - apiVersion: v1
    kind: ConfigMap
    metadata:
      name: hosts
      annotations:
        config.kubernetes.io/path: 'hosts.yaml'
        internal.config.kubernetes.io/path: 'hosts.yaml'
    data: # filled in per cluster
      primary: localhost
  - apiVersion: v1
    kind: ConfigMap
    metadata:
      name: other # an unrelated comment
      annotations:
        internal.config.kubernetes.io/path: 'other.yaml'
    data:
      a: b
`

/** Sets `data` of the items named `hosts` to an empty list. */
const emptier: KrmFunction = {
  name: 'emptier',
  description: 'empties data',
  usage: '',
  transform(rl) {
    for (const item of rl.items) if (item.name === 'hosts') item.set(['data'], [])
  },
}

type Output = { items: { metadata: { name: string }; data?: unknown }[]; results?: Record<string, unknown>[] }

/** The printed list, which must parse. */
function read(text: string): Output {
  const doc = parseDocument(text, { uniqueKeys: false })
  expect(doc.errors).toEqual([])
  return doc.toJS() as Output
}

const warning = {
  message: 'comments dropped from hosts.yaml (ConfigMap/hosts): printed with them, the output would not parse as YAML',
  severity: 'warning',
  resourceRef: { apiVersion: 'v1', kind: 'ConfigMap', name: 'hosts' },
  file: { path: 'hosts.yaml' },
}

describe.each([
  ['lazily kept items (kpt layout)', true],
  ['a fully parsed list', false],
])('%s', (_name, lazy) => {
  test('an item that would not read back loses its own comments, with a warning naming its file', () => {
    const rl = ResourceList.parse(list, { lazy })
    rl.items[0]!.set(['data'], [])
    rl.results.info('done')
    const text = rl.toString()
    const out = read(text)
    expect(out.items[0]!.data).toEqual([])
    expect(text).not.toContain('# filled in per cluster')
    // Only that item's: the other keeps its comment.
    expect(text).toContain('name: other # an unrelated comment\n')
    expect(out.results).toEqual([{ message: 'done', severity: 'info' }, warning])
  })

  test('every print warns again', () => {
    const rl = ResourceList.parse(list, { lazy })
    rl.items[0]!.set(['data'], [])
    const first = rl.toString()
    expect(rl.toString()).toBe(first)
    expect(read(first).results).toEqual([warning])
  })

  test('no warning when nothing is dropped', () => {
    const rl = ResourceList.parse(list, { lazy })
    rl.items[0]!.set(['data'], { primary: 'db.internal' })
    const text = rl.toString()
    expect(text).toContain('data: # filled in per cluster\n')
    expect(read(text).results).toBeUndefined()
  })

  test('an item removed after its comments were dropped is no longer warned of', () => {
    const rl = ResourceList.parse(list, { lazy })
    rl.items[0]!.set(['data'], [])
    rl.toString()
    rl.items.shift()
    expect(read(rl.toString()).results).toBeUndefined()
  })
})

test.each([true, false])(
  'the functionConfig loses its comments alone, without a warning: kpt writes back only the items (lazy: %s)',
  (lazy) => {
    const text = source`
      apiVersion: config.kubernetes.io/v1
      kind: ResourceList
      items:
      - apiVersion: v1
        kind: ConfigMap
        metadata:
          name: hosts # kept
      functionConfig:
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: config # the function's
        data: # settings
          a: b
    `
    const rl = ResourceList.parse(text, { lazy })
    rl.functionConfig!.set(['data'], [])
    const out = rl.toString()
    expect(read(out)).toMatchObject({ items: [{ metadata: { name: 'hosts' } }], functionConfig: { data: [] } })
    expect(out).toContain('name: hosts # kept\n')
    expect(out).not.toContain("# the function's")
    expect(read(out).results).toBeUndefined()
  },
)

test('runFunction: the warning reaches the output of every function, which exits 0', () => {
  const run = runFunction(emptier, list)
  expect(run.exitCode).toBe(0)
  expect(run.stderr).toEqual([])
  const out = read(run.output)
  expect(out.items.map((item) => item.data)).toEqual([[], { a: 'b' }])
  expect(out.results).toEqual([warning])
})

describe('property: comments are lost only with a warning, and a warning only when they are', () => {
  // Each item carries `# keep-<i>` on a line no edit touches, and comments where an edit may make the printer stumble.
  const spec = fc.record({
    specComment: fc.constantFrom('', ' # on spec'),
    aComment: fc.constantFrom('', ' # on a'),
    cComment: fc.constantFrom('', ' # on c'),
    tail: fc.constantFrom('', '\n    # after d'),
  })
  const itemText = (i: number, s: { specComment: string; aComment: string; cComment: string; tail: string }) =>
    [
      '- apiVersion: v1',
      '  kind: ConfigMap',
      '  metadata:',
      `    name: n${i} # keep-${i}`,
      '    annotations:',
      `      internal.config.kubernetes.io/path: 'f${i}.yaml'`,
      `  spec:${s.specComment}`,
      `    a:${s.aComment}`,
      '      b: 1',
      `    c:${s.cComment}`,
      '    - x',
      `    d: 1${s.tail}`,
    ].join('\n')
  const edit = fc.record({
    item: fc.nat(),
    path: fc.constantFrom(['spec'], ['spec', 'a'], ['spec', 'c'], ['spec', 'd'], ['spec', 'a', 'b']),
    value: fc.constantFrom<unknown>([], {}, 'v', ['y'], { k: 'v' }, [[]], [{}], null),
  })

  test.each([true, false])('lazy: %s', (lazy) => {
    fc.assert(
      fc.property(fc.array(spec, { minLength: 1, maxLength: 3 }), fc.array(edit, { maxLength: 4 }), (specs, edits) => {
        const text = `apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n${specs.map((s, i) => itemText(i, s)).join('\n')}\n`
        const rl = ResourceList.parse(text, { lazy })
        for (const e of edits) rl.items[e.item % rl.items.length]!.set(e.path, e.value)
        const out = read(rl.toString())
        const warned = new Set((out.results ?? []).map((r) => (r['file'] as { path: string }).path))
        const printed = rl.toString()
        specs.forEach((_, i) => expect(warned.has(`f${i}.yaml`)).toBe(!printed.includes(`# keep-${i}\n`)))
        expect((out.results ?? []).every((r) => r['severity'] === 'warning')).toBe(true)
      }),
      { numRuns: propertyRuns(150) },
    )
  })
})
