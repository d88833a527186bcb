import { parseValue } from '../krm/yaml/index.js'
import { parseObjects, runFunction } from '../krm/index.js'
import { dependencyCheckFunction } from './index.js'

const manifest = `  - apiVersion: kpt-variants.dev/v1alpha1
    kind: PackageManifest
    metadata:
      name: keptn
      annotations:
        config.kubernetes.io/local-config: "true"
        internal.config.kubernetes.io/path: package.yaml
    spec:
      version: v1.2.0
      dependencies:
      - name: cert-manager
        version: ">= v1.13.0, < 2"
`
const list = (items: string, functionConfig = '') => `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
${items}${functionConfig}`

const sources = (installedVersion: string, catalogExtra = '') =>
  parseObjects(
    `apiVersion: kpt-variants.dev/v1alpha1
kind: PackageCatalog
metadata: {name: main}
spec:
  packages:
  - name: cert-manager
    versions: [{version: v1.16.3}, {version: v2.1.0}]
${catalogExtra}---
apiVersion: kpt-variants.dev/v1alpha1
kind: InstalledPackage
metadata: {name: cert-manager}
spec: {version: ${installedVersion}}
`,
    'cluster/state.yaml',
  )

type Out = {
  items: {
    kind: string
    metadata: { name: string; annotations?: Record<string, string> }
    status?: Record<string, unknown>
  }[]
  results?: { message: string; severity: string; field?: { path: string }; file?: { path: string } }[]
}
const run = (input: string, src = sources('v1.16.3')) => {
  const out = runFunction(dependencyCheckFunction, input, { sources: src })
  return { ...out, parsed: parseValue(out.output) as Out }
}

describe('dependency-check transform', () => {
  test('met dependencies: exit 0, a DependencyCheckResult with a path, info results', () => {
    const { exitCode, parsed } = run(list(manifest))
    expect(exitCode).toBe(0)
    const result = parsed.items.find((i) => i.kind === 'DependencyCheckResult')!
    expect(result.metadata).toMatchObject({
      name: 'dependency-check',
      annotations: {
        'config.kubernetes.io/local-config': 'true',
        'internal.config.kubernetes.io/path': 'dependency-check-result.yaml',
      },
    })
    expect(result.status).toMatchObject({ result: 'OK', conditions: [{ type: 'Resolved', status: 'True' }] })
    expect(parsed.results![0]).toMatchObject({
      severity: 'info',
      message: 'dependency keptn@v1.2.0 -> cert-manager: fulfilled by cert-manager@v1.16.3',
      field: { path: 'spec.dependencies[0]' },
      file: { path: 'package.yaml' },
    })
  })

  test('a conflict: exit 1, items unchanged, an error naming the manifest field', () => {
    const { exitCode, parsed } = run(list(manifest), sources('v2.1.0'))
    expect(exitCode).toBe(1)
    expect(parsed.items.map((i) => i.kind)).toEqual(['PackageManifest'])
    expect(parsed.results).toContainEqual(
      expect.objectContaining({
        severity: 'error',
        message: expect.stringMatching(
          /^unmet dependency keptn@v1.2.0 -> cert-manager: cert-manager \(required: >=1.13.0 <2, actual: v2.1.0\)/,
        ),
        field: { path: 'spec.dependencies[0]' },
      }),
    )
  })

  test('a re-run updates the existing result object instead of adding one', () => {
    const first = run(list(manifest))
    const items = first.output.slice(first.output.indexOf('items:\n') + 'items:\n'.length)
    const second = run(`apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n${items}`)
    expect(second.parsed.items.filter((i) => i.kind === 'DependencyCheckResult')).toHaveLength(1)
    expect(second.parsed.items).toEqual(first.parsed.items)
  })

  test('an invalid catalog is an error on its field and file', () => {
    const { exitCode, parsed } = run(
      list(manifest),
      sources('v1.16.3', '  - name: broken\n    installationType: Sometimes\n'),
    )
    expect(exitCode).toBe(1)
    expect(parsed.results![0]).toMatchObject({
      severity: 'error',
      message: expect.stringContaining('`spec.packages[1].installationType` must be one of'),
      field: { path: 'spec.packages[1].installationType' },
      file: { path: 'cluster/state.yaml' },
    })
  })

  test('functionConfig of another kind is an error naming the expected kind', () => {
    const { exitCode, parsed } = run(
      list(manifest, 'functionConfig:\n  apiVersion: v1\n  kind: Secret\n  metadata: {name: x}\n'),
    )
    expect(exitCode).toBe(1)
    expect(parsed.results![0]!.message).toBe(
      'unsupported functionConfig Secret.v1: expected DependencyCheck.kpt-variants.dev/v1alpha1 (or no functionConfig)',
    )
  })

  test('an improper target constraint is an error on that field', () => {
    const fc =
      'functionConfig:\n  apiVersion: kpt-variants.dev/v1alpha1\n  kind: DependencyCheck\n  metadata: {name: c}\n  spec: {targets: [{package: keptn, constraint: "1.2-1.4.5"}]}\n'
    const { parsed } = run(list(manifest, fc))
    expect(parsed.results![0]).toMatchObject({
      message: '`spec.targets[0].constraint` improper constraint: 1.2-1.4.5',
      field: { path: 'spec.targets[0].constraint' },
    })
  })

  test('no manifest and no targets: nothing to check', () => {
    const { exitCode, parsed } = run(list('  - {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n'))
    expect(exitCode).toBe(0)
    expect(parsed.results).toEqual([
      { severity: 'info', message: 'no PackageManifest among the items and no `spec.targets`: nothing to check' },
    ])
  })

  test('CRDs in the package provide GVKs to its own manifest', () => {
    const items = `${manifest.replace('      - name: cert-manager\n        version: ">= v1.13.0, < 2"\n', '      - gvk: {apiVersion: example.com/v1, kind: Widget}\n')}  - apiVersion: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    metadata: {name: widgets.example.com}
    spec: {group: example.com, names: {kind: Widget}, versions: [{name: v1}]}
`
    const { exitCode, parsed } = run(list(items))
    expect(exitCode).toBe(0)
    expect(parsed.results![0]!.message).toBe(
      'dependency keptn@v1.2.0 -> example.com/v1/Widget: example.com/v1/Widget is provided by keptn@v1.2.0',
    )
  })
})
