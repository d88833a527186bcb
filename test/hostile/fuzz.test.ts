/**
 * Fuzzing with fast-check over the SDK and every function: arbitrary YAML
 * items, arbitrary API objects as functionConfig, and valid lists with YAML
 * syntax characters spliced in. Whatever the input: no uncaught exception,
 * stdout one ResourceList that parses, exit 1 exactly on an error result,
 * and the same input always the same output.
 */
import fc from 'fast-check'
import { parseAllDocuments, stringify } from 'yaml'
import { configInjectionFunction } from '../../functions/config-injection/index.js'
import { dependencyCheckFunction } from '../../functions/dependency-check/index.js'
import { fanOutFunction } from '../../functions/fan-out/index.js'
import { ResourceList, runFunction } from '../../functions/krm/index.js'
import type { KrmFunction } from '../../functions/krm/index.js'
import { packageContextFunction } from '../../functions/package-context/index.js'
import { packageVariantFunction } from '../../functions/package-variant/index.js'
import { pipelinePrependFunction } from '../../functions/pipeline-prepend/index.js'
import { corpus, validConfig } from './corpus.js'
import { propertyRuns } from '../support/property-runs.js'

const functions: KrmFunction[] = [
  packageContextFunction,
  pipelinePrependFunction,
  configInjectionFunction,
  packageVariantFunction,
  fanOutFunction,
  dependencyCheckFunction,
]

function expectSoundRun(fn: KrmFunction, input: string): void {
  const first = runFunction(fn, input)
  expect(first.output).not.toBe('')
  const docs = parseAllDocuments(first.output, { uniqueKeys: false })
  expect(Array.isArray(docs) && docs.length === 1).toBe(true)
  const doc = (docs as unknown as { errors: unknown[]; toJS(o: object): unknown }[])[0]!
  expect(doc.errors).toEqual([])
  const out = doc.toJS({ maxAliasCount: 100 }) as {
    kind: string
    items: unknown
    results?: { severity: string; message: string }[]
  }
  expect(out.kind).toBe('ResourceList')
  expect(Array.isArray(out.items)).toBe(true)
  const errors = (out.results ?? []).filter((r) => r.severity === 'error')
  expect(first.exitCode).toBe(errors.length > 0 ? 1 : 0)
  for (const r of errors) expect(r.message).not.toMatch(/internal error/)
  expect(runFunction(fn, input).output).toBe(first.output)
}

const key = fc.oneof(
  fc.constantFrom(
    'apiVersion',
    'kind',
    'metadata',
    'name',
    'namespace',
    'labels',
    'annotations',
    'spec',
    'data',
    'upstream',
    'downstream',
    'targets',
    'injectors',
    'pipeline',
    'packageContext',
    'repo',
    'package',
    'revision',
    'workspaceName',
    'dependencies',
    'version',
    'packages',
    'template',
    'repositorySelector',
    'matchLabels',
    'matchExpressions',
    'key',
    'operator',
    'values',
    'valueExpr',
    'mutators',
    'image',
    'config.kubernetes.io/path',
    'internal.config.kubernetes.io/path',
    'kpt.dev/config-injection',
  ),
  fc.string({ maxLength: 8 }),
)
const scalar = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(
    'v1',
    'ConfigMap',
    'Kptfile',
    'kpt.dev/v1',
    'PackageVariant',
    'config.porch.kpt.dev/v1alpha1',
    'PackageVariantSet',
    'config.porch.kpt.dev/v1alpha2',
    'kptfile.kpt.dev',
    'required',
    'Exists',
    'In',
    "'a' + target.name",
    'true',
    '0755',
    '~',
  ),
)
const { value } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(key, tie('value'), { maxKeys: 4 }),
  ),
}))
/** An API-shaped object: a known apiVersion/kind, then any metadata and spec. */
const apiObject = fc.record(
  {
    apiVersion: fc.constantFrom(
      'v1',
      'kpt.dev/v1',
      'config.porch.kpt.dev/v1alpha1',
      'config.porch.kpt.dev/v1alpha2',
      'porch.kpt.dev/v1alpha1',
      'kpt-variants.dev/v1alpha1',
    ),
    kind: fc.constantFrom(
      'ConfigMap',
      'Kptfile',
      'PackageVariant',
      'PackageVariantSet',
      'Repository',
      'PackageRevision',
      'PackageManifest',
      'PackageCatalog',
      'DependencyCheck',
    ),
    metadata: fc.oneof(
      value,
      fc.record({ name: scalar, namespace: scalar, labels: value, annotations: value }, { requiredKeys: [] }),
    ),
    spec: value,
    data: value,
  },
  { requiredKeys: ['apiVersion', 'kind'] },
)

const list = (items: unknown[], functionConfig?: unknown) =>
  stringify(
    {
      apiVersion: 'config.kubernetes.io/v1',
      kind: 'ResourceList',
      items,
      ...(functionConfig === undefined ? {} : { functionConfig }),
    },
    { indentSeq: false, lineWidth: 0 },
  )

describe.each(functions)('$name', (fn) => {
  test('fuzz: arbitrary YAML items', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(value, apiObject), { maxLength: 4 }), (items) => expectSoundRun(fn, list(items))),
      { numRuns: propertyRuns(20) },
    )
  })

  test('fuzz: arbitrary API objects as items and functionConfig', () => {
    fc.assert(
      fc.property(fc.array(apiObject, { maxLength: 4 }), apiObject, (items, config) =>
        expectSoundRun(fn, list(items, config)),
      ),
      { numRuns: propertyRuns(20) },
    )
  })

  // Seed 1497382505 once found a comment the printer put where the parser then misread it (now dropped, see resource-list.ts);
  // seed -596056864 a U+2028 before `#` that the line check took for white space (see item-syntax.ts);
  // seed 1215680869 an alias to no anchor in the list's own apiVersion, which made printing the output throw;
  // seed -1958739682 a comment starting with U+2028, which the library printed as part of the value (comment-placement.ts).
  test.each([undefined, 1497382505, -596056864, 1215680869, -1958739682])(
    'fuzz: YAML syntax characters spliced into a valid list (seed %s)',
    (seed) => {
      const base = corpus[0]!.input(fn.name) as string
      const valid =
        base.slice(0, base.indexOf('- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: bad')) +
        validConfig(fn.name)
      const splice = fc.tuple(
        fc.nat({ max: valid.length }),
        fc.nat({ max: 3 }),
        fc.string({
          unit: fc.constantFrom(
            '[',
            ']',
            '{',
            '}',
            ':',
            ',',
            '-',
            '#',
            '&a ',
            '*a',
            '!',
            '|',
            '>',
            "'",
            '"',
            '%',
            '@',
            ' ',
            '  ',
            '\n',
            '\t',
            '\\',
            '?',
            '\u2028',
            'x',
          ),
          maxLength: 4,
        }),
      )
      fc.assert(
        fc.property(fc.array(splice, { minLength: 1, maxLength: 3 }), (edits) => {
          let text = valid
          for (const [at, remove, insert] of edits)
            text = text.slice(0, at % (text.length + 1)) + insert + text.slice((at % (text.length + 1)) + remove)
          expectSoundRun(fn, text)
        }),
        // A replayed seed tries the inputs it once failed on; without one, the gate's share of new inputs.
        seed === undefined ? { numRuns: propertyRuns(50) } : { numRuns: 100, seed },
      )
    },
  )
})

test('fuzz: the SDK round-trips any list it accepts, lazily or not', () => {
  fc.assert(
    fc.property(fc.array(fc.oneof(value, apiObject), { maxLength: 4 }), (items) => {
      const text = list(items)
      let lazy: string
      try {
        lazy = ResourceList.parse(text).toString()
      } catch (err) {
        expect((err as Error).name).toBe('ResourceListError')
        return
      }
      expect(lazy).toBe(ResourceList.parse(text, { lazy: false }).toString())
    }),
    { numRuns: propertyRuns(100) },
  )
})
