import fc from 'fast-check'
import { parse } from '../../functions/krm/yaml/index.js'
import { decodeKptfile, encodeKptfile, kptfileValue } from './kptfile-struct.js'
import type { KptfileStruct } from './kptfile-struct.js'
import { propertyRuns } from '../../test/support/property-runs.js'

/** Strings YAML would read as something else unless quoted: the encoder must keep them strings. */
const text = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom('', 'true', '1', '0x1F', '1e3', 'null', '~', '- a', 'a: b', '#x', "'q'", ' lead', 'v1.2.3'),
)
const stringMap = fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), text, { maxKeys: 3 })
const selector = fc.record({ kind: text, name: text, labels: stringMap }, { requiredKeys: [] })
const fn = fc.record(
  {
    image: text,
    exec: text,
    configPath: text,
    configMap: stringMap,
    name: text,
    selectors: fc.array(selector, { maxLength: 2 }),
  },
  { requiredKeys: [] },
)
const kptfile: fc.Arbitrary<KptfileStruct> = fc.record(
  {
    apiVersion: text,
    kind: text,
    metadata: fc.record(
      { name: text, namespace: text, labels: stringMap, annotations: stringMap },
      { requiredKeys: [] },
    ),
    upstream: fc.record(
      {
        type: text,
        git: fc.record({ repo: text, directory: text, ref: text }, { requiredKeys: [] }),
        updateStrategy: text,
      },
      { requiredKeys: [] },
    ),
    upstreamLock: fc.record(
      { type: text, git: fc.record({ repo: text, commit: text }, { requiredKeys: [] }) },
      { requiredKeys: [] },
    ),
    info: fc.record(
      {
        description: text,
        keywords: fc.array(text, { maxLength: 3 }),
        readinessGates: fc.array(fc.record({ conditionType: text }), { maxLength: 2 }),
      },
      { requiredKeys: [] },
    ),
    pipeline: fc.record(
      { mutators: fc.array(fn, { maxLength: 2 }), validators: fc.array(fn, { maxLength: 2 }) },
      { requiredKeys: [] },
    ),
    status: fc.record({
      conditions: fc.array(fc.record({ type: text, status: text, reason: text, message: text }), { maxLength: 2 }),
    }),
  },
  { requiredKeys: [] },
)

describe('Kptfile struct', () => {
  test('kptfileValue is what parsing encodeKptfile gives back, fields in the same order', () => {
    fc.assert(
      fc.property(kptfile, (k) => {
        const parsed = parse(encodeKptfile(k), { source: 'Kptfile' }).toJSON() as unknown
        expect(kptfileValue(k)).toEqual(parsed)
        expect(JSON.stringify(kptfileValue(k))).toBe(JSON.stringify(parsed))
      }),
      { numRuns: propertyRuns(100) },
    )
  })

  test('an encoded Kptfile decodes to the value it was encoded from', () => {
    fc.assert(
      fc.property(kptfile, (k) => {
        const decoded = decodeKptfile(encodeKptfile(k))
        expect(decoded.ok).toBe(true)
        expect(decoded.ok && kptfileValue(decoded.value)).toEqual(kptfileValue(k))
      }),
      { numRuns: propertyRuns(80) },
    )
  })
})
