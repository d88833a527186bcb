import { parseValue } from '../krm/yaml/index.js'
import { findKptfile, ResourceList, runFunction } from '../krm/index.js'
import { pipelinePrependFunction } from './index.js'
import { generateFunctionName, isPackageVariantFunction } from './pipeline-prepend.js'
import { indent, source } from '../../test/support/source.js'

/** A ResourceList's results, as a test reads them. */
type Output = { results: unknown }

function resourceList(kptfile: string, pv: string): string {
  return `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- ${indent(kptfile, '  ')}
functionConfig:
  ${indent(pv, '  ')}
`
}

function pv(name: string, pipeline: string): string {
  return `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: ${name}\n  namespace: default\nspec:\n${pipeline ? `  pipeline:\n    ${indent(pipeline, '    ')}` : ''}`
}

/** Runs the function once and returns the Kptfile text and exit code. */
function run(kptfile: string, config: string): { kptfile: string; exitCode: number } {
  const out = runFunction(pipelinePrependFunction, resourceList(kptfile, config))
  const found = findKptfile(ResourceList.parse(out.output).items)
  return { kptfile: found.ok ? found.kptfile.object.toYaml() : '', exitCode: out.exitCode }
}

const header = 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n'

describe('generated names', () => {
  test.each([
    ['PackageVariant.my-pv.set-ns.0', 'my-pv', true],
    ['PackageVariant.my-pv..3', 'my-pv', true],
    ['PackageVariant.my.pv.set-ns.12', 'my.pv', true],
    ['PackageVariant.my.pv.set-ns.0', 'my', false],
    ['PackageVariant.other.set-ns.0', 'my-pv', false],
    ['PackageVariant.my-pv.set-ns.-1', 'my-pv', false],
    ['PackageVariant.my-pv.set.ns.0', 'my-pv', false],
    ['PackageVariant.my-pv.set-ns', 'my-pv', false],
    ['packagevariant.my-pv.set-ns.0', 'my-pv', false],
  ])('%s belongs to %s: %s', (name, pvName, want) => {
    expect(isPackageVariantFunction(name, pvName)).toBe(want)
  })

  test('empty function names leave an empty part, as in Porch', () => {
    expect(generateFunctionName('my-pv', '', 1)).toBe('PackageVariant.my-pv..1')
  })
})

describe('pipeline-prepend', () => {
  test.each([
    [
      'creates the pipeline at the end of the Kptfile',
      header + 'info:\n  description: d\n',
      pv(
        'my-pv',
        'mutators:\n- image: set-ns:v1\n  name: set-ns\n  configMap: {namespace: prod}\nvalidators:\n- image: kubeval\n',
      ),
      source`
        apiVersion: kpt.dev/v1
        kind: Kptfile
        metadata:
          name: pkg
        info:
          description: d
        pipeline:
          mutators:
          - name: PackageVariant.my-pv.set-ns.0
            image: set-ns:v1
            configMap:
              namespace: prod
          validators:
          - name: PackageVariant.my-pv..0
            image: kubeval
      `,
    ],
    [
      "keeps user and other PackageVariants' entries with comments after its own (a comment above the list stays first, as kpt would put it back there)",
      header +
        source`
          pipeline:
            mutators:
            # user's own
            - image: user-fn # stays
            - name: PackageVariant.other.x.0
              image: other
            - name: PackageVariant.my-pv.old.0
              image: old
      `,
      pv('my-pv', 'mutators:\n- image: new\n  name: new\n'),
      source`
        apiVersion: kpt.dev/v1
        kind: Kptfile
        metadata:
          name: pkg
        pipeline:
          mutators:
          # user's own
          - name: PackageVariant.my-pv.new.0
            image: new
          - image: user-fn # stays
          - name: PackageVariant.other.x.0
            image: other
      `,
    ],
    [
      'replaces an edited entry, keeping its comment, and moves it to the front',
      header +
        source`
          pipeline:
            mutators:
            - image: user-fn
            - name: PackageVariant.my-pv.a.0 # mine
              image: edited-downstream
              exec: extra
      `,
      pv('my-pv', 'mutators:\n- image: a:v2\n  name: a\n'),
      source`
        apiVersion: kpt.dev/v1
        kind: Kptfile
        metadata:
          name: pkg
        pipeline:
          mutators:
          - name: PackageVariant.my-pv.a.0 # mine
            image: a:v2
          - image: user-fn
      `,
    ],
    [
      'removes its entries, empty lists and the pipeline when spec.pipeline is gone',
      header + 'pipeline:\n  validators:\n  - name: PackageVariant.my-pv.v.0\n    image: v\n',
      pv('my-pv', ''),
      header,
    ],
    [
      'a dotted PackageVariant name is recognised (Porch would duplicate)',
      header + 'pipeline:\n  mutators:\n  - name: PackageVariant.edge.eu.fn.0\n    image: fn\n',
      pv('edge.eu', 'mutators:\n- image: fn\n  name: fn\n'),
      header + 'pipeline:\n  mutators:\n  - name: PackageVariant.edge.eu.fn.0\n    image: fn\n',
    ],
    [
      '`my` does not claim the functions of `my.pv`',
      header + 'pipeline:\n  mutators:\n  - name: PackageVariant.my.pv.fn.0\n    image: fn\n',
      pv('my', 'mutators:\n- image: mine\n'),
      header +
        'pipeline:\n  mutators:\n  - name: PackageVariant.my..0\n    image: mine\n  - name: PackageVariant.my.pv.fn.0\n    image: fn\n',
    ],
    [
      'copies an entry as written: nested keys in spec order, nested empty values kept; only top-level empties dropped',
      header,
      pv(
        'my-pv',
        source`
          mutators:
          - selectors: [{kind: Deployment, apiVersion: apps/v1, labels: {}}]
            exclude: [{annotations: {b: "2", a: "1"}}]
            image: fn
            configMap: {}
            name: fn
        `,
      ),
      header +
        source`
          pipeline:
            mutators:
            - name: PackageVariant.my-pv.fn.0
              image: fn
              exclude:
              - annotations:
                  b: "2"
                  a: "1"
              selectors:
              - kind: Deployment
                apiVersion: apps/v1
                labels: {}
        `,
    ],
  ])('%s', (_, kptfile, config, want) => {
    const first = run(kptfile, config)
    expect(first.exitCode).toBe(0)
    expect(first.kptfile).toBe(want)
    expect(run(first.kptfile, config).kptfile).toBe(want)
  })

  test.each([
    [
      'a function name with a dot',
      header,
      pv('p', 'mutators:\n- image: x\n  name: a.b\n'),
      "spec.pipeline.mutators[0].name must not contain '.'",
      'spec.pipeline.mutators[0].name',
    ],
    [
      'a function name that is not a string',
      header,
      pv('p', 'validators:\n- image: x\n  name: [a]\n'),
      '`spec.pipeline.validators[0].name` must be a string',
      'spec.pipeline.validators[0].name',
    ],
    [
      'mutators that are not a list',
      header,
      pv('p', 'mutators: {image: x}\n'),
      '`spec.pipeline.mutators` must be a list',
      'spec.pipeline.mutators',
    ],
    [
      'a Kptfile whose pipeline is not a map',
      header + 'pipeline: x\n',
      pv('p', ''),
      'malformed Kptfile: `pipeline` must be a map',
      'pipeline',
    ],
    [
      'a functionConfig of another kind',
      header,
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n',
      'unsupported functionConfig ConfigMap.v1: expected PackageVariant.config.porch.kpt.dev/v1alpha1',
      'kind',
    ],
  ])('rejects %s', (_, kptfile, config, message, field) => {
    const out = runFunction(pipelinePrependFunction, resourceList(kptfile, config))
    expect(out.exitCode).toBe(1)
    expect((parseValue(out.output) as Output).results).toMatchObject([
      { severity: 'error', message, field: { path: field } },
    ])
    expect(ResourceList.parse(out.output).items[0]!.toYaml()).toBe(kptfile)
  })

  test('drops fields kpt functions do not have, with a warning naming each (as Porch prunes them)', () => {
    const out = runFunction(
      pipelinePrependFunction,
      resourceList(header, pv('p', 'validators:\n- image: x\n  fooBar: 1\n  configmap: {a: b}\n')),
    )
    expect(out.exitCode).toBe(0)
    expect(ResourceList.parse(out.output).items[0]!.toYaml()).toBe(
      header + 'pipeline:\n  validators:\n  - name: PackageVariant.p..0\n    image: x\n',
    )
    const results = (parseValue(out.output) as Output).results as {
      severity: string
      field?: { path: string }
      message: string
    }[]
    expect(results.filter((r) => r.severity === 'warning')).toMatchObject([
      {
        field: { path: 'spec.pipeline.validators[0].fooBar' },
        message: expect.stringContaining('is not a field of a kpt function and is dropped'),
      },
      { field: { path: 'spec.pipeline.validators[0].configmap' } },
    ])
  })

  test('reports a missing Kptfile', () => {
    const out = runFunction(
      pipelinePrependFunction,
      `apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n  ${indent(pv('p', ''), '  ')}\n`,
    )
    expect(out.exitCode).toBe(1)
    expect((parseValue(out.output) as Output).results).toMatchObject([
      { severity: 'error', message: '"Kptfile" not found in the package' },
    ])
  })
})
