import { KubeObject, parseObjects } from '../krm/index.js'
import {
  crdProvides,
  defaultDependencyPolicy,
  readClusterAPIs,
  readDependencyCheck,
  readInstalledPackage,
  readPackageCatalog,
  readPackageManifest,
} from './dependencies.js'

const one = (text: string): KubeObject => parseObjects(text, 'test.yaml')[0]!

describe('readPackageCatalog', () => {
  test('reads packages, versions, provides and every dependency form', () => {
    const read = readPackageCatalog(
      one(`apiVersion: kpt-variants.dev/v1alpha1
kind: PackageCatalog
metadata: {name: main}
spec:
  packages:
  - name: keptn
    latestVersion: v1.2.0
    installationType: OnePerCluster
    versions:
    - version: v1.2.0
      provides: [{apiVersion: lifecycle.keptn.sh/v1, kind: KeptnApp}]
      dependencies:
      - {name: cert-manager, version: ">= v1.13.0, < 2"}
      - gvk: {apiVersion: gateway.networking.k8s.io/v1, kind: Gateway}
      - anyOf: [{name: ingress-nginx, version: "^4"}, {name: traefik}]
      - {name: prom, optional: true}
`),
    )
    if (!read.ok) throw new Error(JSON.stringify(read.errors))
    const [pkg] = read.value.packages
    expect(pkg).toMatchObject({ name: 'keptn', latestVersion: 'v1.2.0', installationType: 'OnePerCluster' })
    const deps = pkg!.versions[0]!.dependencies
    expect(deps.map((d) => d.type)).toEqual(['Package', 'GVK', 'AnyOf', 'Package'])
    expect(deps[0]).toMatchObject({ name: 'cert-manager', version: '>= v1.13.0, < 2', optional: false })
    expect(deps[0]!.declaredAt!.field).toBe('spec.packages[0].versions[0].dependencies[0]')
    expect(deps[2]).toMatchObject({
      anyOf: [
        { name: 'ingress-nginx', version: '^4' },
        { name: 'traefik', version: '' },
      ],
    })
    expect(deps[3]).toMatchObject({ optional: true, version: '' })
  })

  test.each([
    [
      'missing name',
      `spec: {packages: [{versions: []}]}`,
      'spec.packages[0].name',
      '`spec.packages[0].name` is required',
    ],
    [
      'duplicate package',
      `spec: {packages: [{name: a}, {name: a}]}`,
      'spec.packages[1].name',
      'duplicates `spec.packages[0].name` "a"',
    ],
    [
      'duplicate version',
      `spec: {packages: [{name: a, versions: [{version: 1.0.0}, {version: 1.0.0}]}]}`,
      'spec.packages[0].versions[1].version',
      'duplicates',
    ],
    [
      'numeric version',
      `spec: {packages: [{name: a, versions: [{version: 1}]}]}`,
      'spec.packages[0].versions[0].version',
      'must be a string',
    ],
    [
      'two dependency forms',
      `spec: {packages: [{name: a, versions: [{version: 1.0.0, dependencies: [{name: b, gvk: {apiVersion: v1, kind: X}}]}]}]}`,
      'spec.packages[0].versions[0].dependencies[0]',
      'only one of',
    ],
    [
      'no dependency form',
      `spec: {packages: [{name: a, versions: [{version: 1.0.0, dependencies: [{version: ^1}]}]}]}`,
      'spec.packages[0].versions[0].dependencies[0]',
      'one of `name`, `gvk` or `anyOf`',
    ],
    [
      'nested anyOf',
      `spec: {packages: [{name: a, versions: [{version: 1.0.0, dependencies: [{anyOf: [{anyOf: [{name: b}]}]}]}]}]}`,
      'spec.packages[0].versions[0].dependencies[0].anyOf[0].anyOf',
      'must not be nested',
    ],
    [
      'gvk without kind',
      `spec: {packages: [{name: a, versions: [{version: 1.0.0, dependencies: [{gvk: {apiVersion: v1}}]}]}]}`,
      'spec.packages[0].versions[0].dependencies[0].gvk.kind',
      'is required',
    ],
    [
      'bad installationType',
      `spec: {packages: [{name: a, installationType: OnePerGalaxy}]}`,
      'spec.packages[0].installationType',
      'must be one of OnePerCluster',
    ],
    [
      'optional not a boolean',
      `spec: {packages: [{name: a, versions: [{version: 1.0.0, dependencies: [{name: b, optional: "yes"}]}]}]}`,
      'spec.packages[0].versions[0].dependencies[0].optional',
      'must be a boolean',
    ],
    ['packages not a list', `spec: {packages: {a: 1}}`, 'spec.packages', 'must be a list'],
  ])('%s: error on the field', (_name, spec, field, message) => {
    const read = readPackageCatalog(
      one(`apiVersion: kpt-variants.dev/v1alpha1\nkind: PackageCatalog\nmetadata: {name: c}\n${spec}\n`),
    )
    expect(read.ok).toBe(false)
    if (read.ok) return
    expect(read.errors).toContainEqual({ field, message: expect.stringContaining(message) })
  })
})

describe('other kinds', () => {
  test('PackageManifest: name from metadata, optional version', () => {
    const read = readPackageManifest(
      one(
        `apiVersion: kpt-variants.dev/v1alpha1\nkind: PackageManifest\nmetadata: {name: shop}\nspec: {dependencies: [{name: db}]}\n`,
      ),
    )
    expect(read).toMatchObject({ ok: true, value: { name: 'shop', namespace: '', dependencies: [{ name: 'db' }] } })
    expect(read.ok && 'version' in read.value).toBe(false)
  })

  test('InstalledPackage: package defaults to the name; dependencies only when listed', () => {
    const read = readInstalledPackage(
      one(
        `apiVersion: kpt-variants.dev/v1alpha1\nkind: InstalledPackage\nmetadata: {name: cm}\nspec: {version: v1.16.3+1, installedAsDependency: true}\n`,
      ),
    )
    expect(read).toMatchObject({
      ok: true,
      value: { name: 'cm', package: 'cm', version: 'v1.16.3+1', installedAsDependency: true, deleting: false },
    })
    expect(read.ok && 'dependencies' in read.value).toBe(false)
    const bad = readInstalledPackage(
      one(`apiVersion: kpt-variants.dev/v1alpha1\nkind: InstalledPackage\nmetadata: {name: cm}\nspec: {}\n`),
    )
    expect(bad).toEqual({ ok: false, errors: [{ field: 'spec.version', message: '`spec.version` is required' }] })
  })

  test('ClusterAPIs and CRDs', () => {
    expect(
      readClusterAPIs(
        one(
          `apiVersion: kpt-variants.dev/v1alpha1\nkind: ClusterAPIs\nmetadata: {name: c}\nspec: {gvks: [{apiVersion: v1, kind: ConfigMap}]}\n`,
        ),
      ),
    ).toMatchObject({
      ok: true,
      value: { gvks: [{ apiVersion: 'v1', kind: 'ConfigMap' }] },
    })
    const crd = one(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: xs.example.com}
spec:
  group: example.com
  names: {kind: X}
  versions: [{name: v1}, {name: v2, served: false}, {name: v3, served: true}]
`)
    expect(crdProvides(crd)).toEqual([
      { apiVersion: 'example.com/v1', kind: 'X' },
      { apiVersion: 'example.com/v3', kind: 'X' },
    ])
  })

  test('DependencyCheck: defaults, targets, policy enums', () => {
    const read = readDependencyCheck(
      one(
        `apiVersion: kpt-variants.dev/v1alpha1\nkind: DependencyCheck\nmetadata: {name: c}\nspec:\n  targets: [{package: keptn, constraint: "^1"}]\n  policy: {upgrades: Deny, prereleases: {identifiers: [rc]}}\n`,
      ),
    )
    expect(read).toMatchObject({
      ok: true,
      value: {
        name: 'c',
        targets: [{ package: 'keptn', constraint: '^1', namespace: '' }],
        policy: { ...defaultDependencyPolicy, upgrades: 'Deny', prereleases: { identifiers: ['rc'] } },
      },
    })
    const bad = readDependencyCheck(
      one(
        `apiVersion: kpt-variants.dev/v1alpha1\nkind: DependencyCheck\nmetadata: {name: c}\nspec:\n  targets: [{package: a, version: 1.0.0, constraint: "^1"}]\n  policy: {downgrades: Sometimes, prereleases: 3}\n`,
      ),
    )
    expect(bad.ok).toBe(false)
    if (bad.ok) return
    expect(bad.errors.map((e) => e.field)).toEqual([
      'spec.targets[0].constraint',
      'spec.policy.downgrades',
      'spec.policy.prereleases',
    ])
  })
})
