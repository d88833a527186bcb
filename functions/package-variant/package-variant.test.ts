import { parseValue } from '../krm/yaml/index.js'
import { configInjectionFunction } from '../config-injection/index.js'
import { parseObjects, ResourceList, runFunction } from '../krm/index.js'
import { packageContextFunction } from '../package-context/index.js'
import { pipelinePrependFunction } from '../pipeline-prepend/index.js'
import { packageVariantFunction } from './index.js'

const items = `- apiVersion: kpt.dev/v1
  kind: Kptfile
  metadata:
    name: nginx
    annotations:
      internal.config.kubernetes.io/path: Kptfile
  pipeline:
    mutators:
    - image: user-fn # the package's own
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: kptfile.kpt.dev
    annotations:
      internal.config.kubernetes.io/path: package-context.yaml
  data:
    name: nginx
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: endpoints
    annotations:
      kpt.dev/config-injection: required
      internal.config.kubernetes.io/path: endpoints.yaml
  data:
    api: placeholder`

const pvSpec = (spec: string) => `apiVersion: config.porch.kpt.dev/v1alpha1
  kind: PackageVariant
  metadata:
    name: nginx-us
    namespace: default
  spec:
    ${spec.trim().replace(/\n/g, '\n    ')}`

const valid = pvSpec(`
upstream: {repo: blueprints, package: nginx}
downstream: {repo: edge, package: nginx}
packageContext:
  data: {region: us-east1}
pipeline:
  mutators:
  - {image: set-labels, name: labels, configMap: {region: us-east1}}
injectors:
- name: us-endpoints
`)

const cluster = parseObjects(
  'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: us-endpoints, namespace: default}\ndata: {api: "https://us.example.com"}\n',
  'cluster.yaml',
)

const list = (fc: string, body = items) =>
  `apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n${body}\nfunctionConfig:\n  ${fc}\n`

/** The items of an output list, without results. */
function itemsOf(output: string): string {
  return ResourceList.parse(output)
    .items.map((i) => i.toYaml())
    .join('---\n')
}

describe('package-variant', () => {
  test('gives the same package as package-context, pipeline-prepend and config-injection one by one', () => {
    const once = runFunction(packageVariantFunction, list(valid), { sources: cluster })
    expect(once.exitCode).toBe(0)
    let text = list(valid)
    for (const fn of [packageContextFunction, pipelinePrependFunction, configInjectionFunction]) {
      const step = runFunction(fn, text, { sources: cluster })
      expect(step.exitCode).toBe(0)
      text = list(
        valid,
        ResourceList.parse(step.output)
          .items.map((i) => `- ${i.toYaml().trimEnd().replace(/\n/g, '\n  ')}`)
          .join('\n'),
      )
    }
    expect(itemsOf(once.output)).toBe(itemsOf(text))
    const out = itemsOf(once.output)
    expect(out).toContain('region: us-east1')
    expect(out).toContain('- name: PackageVariant.nginx-us.labels.0')
    expect(out).toContain('api: https://us.example.com')
    expect(out).toContain('reason: ConfigInjected')
  })

  test.each([
    [
      'Porch messages, in Porch order',
      pvSpec(`
adoptionPolicy: adoptAll
deletionPolicy: keep
packageContext:
  data: {name: x, package-path: y}
  removeKeys: [name]
injectors:
- kind: ConfigMap
`),
      [
        ['missing required field spec.upstream', 'spec.upstream'],
        ['missing required field spec.downstream', 'spec.downstream'],
        ['spec.adoptionPolicy field can only be "adoptNone" or "adoptExisting"', 'spec.adoptionPolicy'],
        ['spec.deletionPolicy can only be "orphan" or "delete"', 'spec.deletionPolicy'],
        [
          'spec.packageContext.data: Invalid value: {"name":"x","package-path":"y"}: must not contain the key "name"',
          'spec.packageContext.data',
        ],
        [
          'spec.packageContext.removeKeys: Invalid value: ["name"]: must not contain the key "name"',
          'spec.packageContext.removeKeys',
        ],
        [
          'spec.packageContext.data: Invalid value: {"name":"x","package-path":"y"}: must not contain the key "package-path"',
          'spec.packageContext.data',
        ],
        ['spec.injectors[0].name must not be empty', 'spec.injectors[0].name'],
      ],
    ],
    [
      'a dotted function name',
      pvSpec(`
upstream: {repo: r, package: p}
downstream: {repo: r, package: p}
pipeline:
  validators: [{image: x, name: a.b}]
`),
      [["spec.pipeline.validators[0].name must not contain '.'", 'spec.pipeline.validators[0].name']],
    ],
  ])('rejects an invalid PackageVariant: %s', (_, fc, want) => {
    const out = runFunction(packageVariantFunction, list(fc), { sources: cluster })
    expect(out.exitCode).toBe(1)
    expect((parseValue(out.output) as { results: unknown[] }).results).toEqual(
      want.map(([message, path]) => expect.objectContaining({ message, severity: 'error', field: { path } })),
    )
    expect(itemsOf(out.output)).toBe(itemsOf(list(fc)))
  })

  test('stops at the first failing step: a missing package context leaves the pipeline alone', () => {
    const body = items.split('\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: kptfile.kpt.dev')[0]!
    const out = runFunction(packageVariantFunction, list(valid, body), { sources: cluster })
    expect(out.exitCode).toBe(1)
    const results = (parseValue(out.output) as { results: { message: string }[] }).results
    expect(results).toHaveLength(1)
    expect(results[0]!.message).toMatch(/^"package-context.yaml" not found/)
  })
})
