/** Property: a catalog read in one pass (catalog-value.ts) is what the typed reader reads, or left to it. */
import fc from 'fast-check'
import { Document, YAMLSeq } from '../krm/yaml/index.js'
import { KubeObject } from '../krm/index.js'
import { readCatalogValue } from './catalog-value.js'
import { installationTypes, readPackageCatalog, readPackageCatalogFields } from './dependencies.js'
import { propertyRuns } from '../../test/support/property-runs.js'

const odd = fc.constantFrom(null, 7, true, '', [], {}, 'x')
const maybe = <T>(arb: fc.Arbitrary<T>) =>
  fc.oneof(
    { weight: 8, arbitrary: arb },
    { weight: 1, arbitrary: odd },
    { weight: 1, arbitrary: fc.constant(undefined) },
  )
const name = fc.constantFrom('a', 'b', 'c', 'cert-manager')
const gvk = fc.record({
  apiVersion: maybe(fc.constantFrom('v1', 'x.io/v1')),
  kind: maybe(fc.constantFrom('ConfigMap', 'K')),
})
const packageDep = fc.record(
  { name: maybe(name), version: maybe(fc.constantFrom('^1', '', '>= 1, < 2')), optional: maybe(fc.boolean()) },
  { requiredKeys: ['name'] },
)
const gvkDep = fc.record({ gvk: maybe(gvk), optional: maybe(fc.boolean()) }, { requiredKeys: ['gvk'] })
const anyOfDep = fc.record(
  { anyOf: maybe(fc.array(fc.oneof(packageDep, gvkDep), { maxLength: 2 })), optional: maybe(fc.boolean()) },
  { requiredKeys: ['anyOf'] },
)
const dependency = fc.oneof(
  { weight: 6, arbitrary: packageDep },
  gvkDep,
  anyOfDep,
  fc.constant({ name: 'a', gvk: { apiVersion: 'v1', kind: 'K' } }),
  odd,
)
const version = fc.record(
  {
    version: maybe(fc.constantFrom('1.0.0', '2.0.0', 'v1.2.3+1')),
    provides: maybe(fc.array(maybe(gvk), { maxLength: 2 })),
    dependencies: maybe(fc.array(dependency, { maxLength: 3 })),
    installationType: maybe(fc.constantFrom(...installationTypes, 'Bogus')),
    source: maybe(
      fc.record(
        {
          repo: maybe(fc.constantFrom('blueprints', '')),
          package: maybe(fc.constantFrom('cert-manager', 'a/b')),
          revision: maybe(fc.constantFrom(1, 3, 0, -1, 1.5)),
          workspaceName: maybe(fc.constantFrom('v1', 'main')),
        },
        { requiredKeys: [] },
      ),
    ),
  },
  { requiredKeys: ['version'] },
)
const pkg = fc.record(
  {
    name: maybe(name),
    latestVersion: maybe(fc.constantFrom('1.0.0', '')),
    installationType: maybe(fc.constantFrom(...installationTypes)),
    path: maybe(fc.constantFrom('cert-manager', 'infra/cert-manager', 'Bad_Path', 'a//b')),
    deletionPolicy: maybe(fc.constantFrom('delete', 'orphan', 'keep')),
    versions: maybe(fc.array(maybe(version), { maxLength: 3 })),
  },
  { requiredKeys: ['name'] },
)
const catalog = fc.record({ spec: maybe(fc.record({ packages: maybe(fc.array(maybe(pkg), { maxLength: 4 })) })) })

/** The catalog as a ResourceList item, kept as text until read. */
function item(value: Record<string, unknown>): KubeObject {
  const doc = new Document()
  const seq = new YAMLSeq()
  seq.items.push(
    doc.createNode({
      apiVersion: 'kpt-variants.dev/v1alpha1',
      kind: 'PackageCatalog',
      metadata: { name: 'main' },
      ...value,
    }),
  )
  doc.contents = seq
  return KubeObject.fromItemSource(doc.toString(), 0)
}

/** What a read gives, or the error it throws (a field on the way of another type). */
function outcome(read: () => unknown): unknown {
  try {
    return read()
  } catch (err) {
    return { thrown: (err as Error).message }
  }
}

test('readPackageCatalog is the typed reader, field for field and error for error', () => {
  let fast = 0
  fc.assert(
    fc.property(catalog, (value) => {
      const object = item(JSON.parse(JSON.stringify(value)) as Record<string, unknown>)
      if (readCatalogValue(object, object.plainValue(), installationTypes)) fast++
      expect(outcome(() => readPackageCatalog(object))).toEqual(outcome(() => readPackageCatalogFields(object)))
    }),
    { numRuns: propertyRuns(600) },
  )
  expect(fast).toBeGreaterThan(100)
})
