/** Property: a ResourceList's results print, straight to text, what the yaml library prints for them. */
import fc from 'fast-check'
import { Document, parseDocument, YAMLSeq } from 'yaml'
import { printOptions } from './yaml/print-options.js'
import { ResourceList } from './resource-list.js'
import type { Result } from './results.js'
import { toNode } from './yaml/nodes.js'
import { propertyRuns } from '../../test/support/property-runs.js'

const input =
  'apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n'

/** The list as the library prints it: parsed, the results as nodes, the whole printed. */
function libraryText(results: readonly Result[]): string {
  const doc = parseDocument(input) as Document
  const seq = new YAMLSeq()
  seq.items = results.map((r) => {
    const ordered: Record<string, unknown> = { message: r.message, severity: r.severity }
    if (r.resourceRef) ordered['resourceRef'] = r.resourceRef
    if (r.field) ordered['field'] = r.field
    if (r.file) ordered['file'] = r.file
    if (r.tags) ordered['tags'] = r.tags
    return toNode(ordered)
  })
  doc.set('results', seq)
  return doc.toString(printOptions)
}

const text = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom(
    'dependency a@1.0.0 -> b: install b@2.0.0',
    'say "hi"',
    "it's",
    'yes',
    '0o17',
    'spec.x[0].y',
    'a #b',
    'é',
  ),
)
const result = fc.record(
  {
    message: text,
    severity: fc.constantFrom('error', 'warning', 'info'),
    resourceRef: fc.record({ apiVersion: fc.constant('v1'), kind: fc.constant('ConfigMap'), name: text }),
    field: fc.record({ path: text }),
    file: fc.record({ path: text, index: fc.nat(3) }, { requiredKeys: ['path'] }),
    tags: fc.dictionary(fc.constantFrom('state', 'dependency', 'reason'), text, { maxKeys: 3 }),
  },
  { requiredKeys: ['message', 'severity'] },
) as fc.Arbitrary<Result>

test('results print as the library prints them', () => {
  fc.assert(
    fc.property(fc.array(result, { minLength: 1, maxLength: 4 }), (results) => {
      const rl = ResourceList.parse(input)
      rl.results.push(...results)
      expect(rl.toString()).toBe(libraryText(results))
    }),
    { numRuns: propertyRuns(400) },
  )
})

test('results sharing one reference and file (one object declares many) print as the library prints them', () => {
  fc.assert(
    fc.property(fc.array(result, { minLength: 2, maxLength: 4 }), (results) => {
      const [first] = results
      const shared = results.map((r) => ({ ...r, resourceRef: first!.resourceRef, file: first!.file }))
      const rl = ResourceList.parse(input)
      rl.results.push(...shared)
      expect(rl.toString()).toBe(libraryText(shared))
    }),
    { numRuns: propertyRuns(200) },
  )
})
