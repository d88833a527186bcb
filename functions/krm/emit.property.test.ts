/** Property: the fast emitter prints exactly what the yaml library prints for the same value. */
import fc from 'fast-check'
import { Document, YAMLSeq } from 'yaml'
import { renderedHeader, renderItemText } from './yaml/emit.js'
import { KubeObject } from './kube-object.js'
import { scanHeader } from './yaml/lazy-items.js'
import { stringifyWithLibrary } from './yaml/documents.js'
import { toNode } from './yaml/nodes.js'
import { propertyRuns } from '../../test/support/property-runs.js'

function libraryText(value: Record<string, unknown>): string {
  const doc = new Document()
  const seq = new YAMLSeq()
  seq.items.push(toNode(value))
  doc.contents = seq
  return stringifyWithLibrary(doc)
}

const key = fc.oneof(
  fc.stringMatching(/^[a-zA-Z][a-zA-Z0-9./-]{0,12}$/),
  fc.constantFrom(
    'on',
    'yes',
    'y',
    '1',
    'null',
    'true',
    'a b',
    'config.porch.kpt.dev/packagevariantset',
    'k: v',
    '#x',
    '',
  ),
)
const text = fc.oneof(
  fc.stringMatching(/^[a-z0-9 ./:@+=()<>$~^,_-]{0,12}$/),
  fc.string({ maxLength: 8 }),
  fc.constantFrom(
    'us-east1',
    'https://api.example.com',
    'nginx:1.25',
    'yes',
    'on',
    '0755',
    '1e3',
    '',
    ' x',
    'x ',
    'a: b',
    'a #b',
    'é',
    'multi\nline',
    '"q"',
    "it's",
    '-x',
    '- x',
    '?x',
    '[a]',
    '{a}',
    '*a',
    '&a',
    '!a',
    '%a',
    '@a',
    '`a',
    '|',
    '>',
    'a,b',
    'a b c',
  ),
)
const scalar = fc.oneof(text, fc.integer(), fc.double(), fc.boolean(), fc.constant(null))
const value = fc.letrec<{ node: unknown; map: Record<string, unknown>; seq: unknown[] }>((tie) => ({
  node: fc.oneof({ depthSize: 'small' }, scalar, tie('map'), tie('seq')),
  map: fc.dictionary(key, tie('node'), { maxKeys: 4 }),
  seq: fc.array(tie('node'), { maxLength: 3 }),
}))

describe('renderItemText (property)', () => {
  test('prints the same bytes as the yaml library, or defers to it', () => {
    let rendered = 0
    const runs = propertyRuns(1000)
    fc.assert(
      fc.property(value.map, (v) => {
        const fast = renderItemText(v)
        if (fast !== undefined) {
          rendered++
          expect(fast).toBe(libraryText(v))
        }
      }),
      { numRuns: runs },
    )
    expect(rendered).toBeGreaterThan(runs * 0.1)
  })

  test('a generated PackageVariant takes the fast path', () => {
    const pv = {
      apiVersion: 'config.porch.kpt.dev/v1alpha1',
      kind: 'PackageVariant',
      metadata: {
        name: 'nginx-edge-c1-nginx',
        namespace: 'default',
        labels: { 'config.porch.kpt.dev/packagevariantset': 'nginx' },
        ownerReferences: [
          { apiVersion: 'config.porch.kpt.dev/v1alpha2', kind: 'PackageVariantSet', name: 'nginx', controller: true },
        ],
        finalizers: ['config.porch.kpt.dev/packagevariants'],
        annotations: {
          'internal.config.kubernetes.io/path': 'nginx-edge-c1-nginx.yaml',
          'internal.config.kubernetes.io/index': '0',
        },
      },
      spec: {
        upstream: { repo: 'blueprints', package: 'nginx', revision: 1 },
        downstream: { repo: 'edge-c1', package: 'nginx' },
        packageContext: { data: { region: 'us-east1', enabled: 'yes' } },
        injectors: [{ kind: 'ConfigMap', name: 'us-east1-endpoints' }],
        pipeline: { mutators: [{ image: 'set-namespace:v0.4.1', configMap: { namespace: 'edge' } }] },
      },
    }
    expect(renderItemText(pv)).toBe(libraryText(pv))
  })
})

describe('renderedHeader (property)', () => {
  const identityValue = fc.oneof(
    { weight: 20, arbitrary: text },
    fc.integer(),
    fc.constant(null),
    fc.constant(undefined),
    fc.constant({}),
    fc.constant(['x']),
  )
  const metadata = fc.record(
    {
      name: identityValue,
      namespace: identityValue,
      labels: fc.oneof(fc.dictionary(key, identityValue, { maxKeys: 3 }), identityValue),
      annotations: fc.oneof(fc.dictionary(key, identityValue, { maxKeys: 3 }), identityValue),
      finalizers: fc.constant(['x']),
    },
    { requiredKeys: [] },
  )
  const object = fc.record(
    {
      apiVersion: identityValue,
      kind: identityValue,
      metadata: fc.oneof(metadata, identityValue),
      spec: fc.option(value.map, { nil: undefined, freq: 2 }),
    },
    { requiredKeys: [] },
  )

  test("is what the line scanner reads from the rendered text, and the object reads as the parsed text's", () => {
    let known = 0
    const runs = propertyRuns(1200)
    fc.assert(
      fc.property(object, (v) => {
        const text = renderItemText(v)
        const header = renderedHeader(v)
        if (text === undefined || header === undefined) return
        known++
        const scanned = scanHeader(text)
        if (scanned) expect(header).toEqual(scanned)
        const generated = KubeObject.fromObject(v)
        const parsed = KubeObject.fromItemSource(text, 0)
        void parsed.node
        const identity = (o: KubeObject) => [o.apiVersion, o.kind, o.name, o.namespace, o.labels(), o.annotations()]
        expect(identity(generated)).toEqual(identity(parsed))
      }),
      { numRuns: runs },
    )
    expect(known).toBeGreaterThan(runs * 0.05)
  })
})

describe('KubeObject.fromObject with a placement', () => {
  test('prints as fromObject followed by setPath, and reads the same', () => {
    const metadata = fc.record(
      {
        name: fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/),
        annotations: fc.dictionary(fc.constantFrom('a', 'example.com/b', 'kpt.dev/config-injection'), text, {
          maxKeys: 2,
        }),
      },
      { requiredKeys: [] },
    )
    fc.assert(
      fc.property(
        metadata,
        fc.option(value.map, { nil: undefined }),
        fc.stringMatching(/^[a-z]{1,5}\.yaml$/),
        fc.nat(3),
        (meta, spec, path, index) => {
          const object = { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta, ...(spec ? { spec } : {}) }
          const placed = KubeObject.fromObject(object, { path, index })
          const slow = KubeObject.fromObject(object)
          slow.setPath(path, index)
          expect(placed.toItemText()).toBe(slow.toItemText())
          expect([placed.path, placed.index, placed.name]).toEqual([path, index, slow.name])
        },
      ),
      { numRuns: propertyRuns(200) },
    )
  })
})
