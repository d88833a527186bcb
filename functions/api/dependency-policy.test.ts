import { parseObjects } from '../krm/index.js'
import { readDependencyPolicy } from './dependency-policy.js'

const read = (spec: string) =>
  readDependencyPolicy(
    parseObjects(
      `apiVersion: kpt-variants.dev/v1alpha1\nkind: DependencyPolicy\nmetadata: {name: p, namespace: default}\nspec:\n${spec}`,
      'p.yaml',
    )[0]!,
  )

describe('readDependencyPolicy', () => {
  test('every field, read as render uses it', () => {
    const policy = read(`  repositorySelector: {matchLabels: {env: prod}}
  upgrades: Deny
  downgrades: Allow
  prereleases: {identifiers: [rc, beta]}
  install: false
  autoUpgrade: true
  pins: [{package: cert-manager, version: "~1.14"}]
  clusterVersion: {field: spec.topology.version}
  dependencies:
  - package: cert-manager
    packageContext: {data: {a: b}, dataExprs: [{key: c, valueExpr: target.name}]}
    injectors: [{kind: ConfigMap, nameExpr: "'x'"}]
    pipeline: {mutators: [{image: set-labels:v0.2}]}
`)
    expect(policy.ok).toBe(true)
    if (!policy.ok) return
    expect(policy.value).toMatchObject({
      name: 'p',
      namespace: 'default',
      repositorySelector: { matchLabels: { env: 'prod' } },
      upgrades: 'Deny',
      downgrades: 'Allow',
      prereleases: { identifiers: ['rc', 'beta'] },
      install: false,
      autoUpgrade: true,
      pins: [{ package: 'cert-manager', version: '~1.14', field: 'spec.pins[0]' }],
      clusterVersion: { field: ['spec', 'topology', 'version'], path: 'spec.topology.version' },
      dependencies: [
        {
          package: 'cert-manager',
          field: 'spec.dependencies[0]',
          template: {
            packageContext: { data: { a: 'b' }, dataExprs: [{ key: 'c', valueExpr: 'target.name' }] },
            injectors: [{ kind: 'ConfigMap', nameExpr: "'x'" }],
            pipeline: { mutators: [{ fields: { image: 'set-labels:v0.2' }, image: 'set-labels:v0.2' }] },
          },
        },
      ],
    })
    expect(policy.value).not.toHaveProperty('repositories')
  })

  test('type errors and bad values name the field', () => {
    const bad = read(`  repositories: [Edge_01]
  repositorySelector: {matchExpressions: [{key: env, operator: Near}]}
  install: "no"
  dependencies: [{package: x, injectors: [{kind: ConfigMap}]}]
  clusterVersion: {field: spec..version}
`)
    expect(bad.ok).toBe(false)
    if (bad.ok) return
    expect(bad.errors.map((e) => e.field)).toEqual([
      'spec.repositories[0]',
      'spec.repositorySelector',
      'spec.repositorySelector',
      'spec.install',
      'spec.dependencies[0].injectors[0]',
      'spec.clusterVersion.field',
    ])
    expect(bad.errors[1]!.message).toBe(
      '`spec.repositorySelector` is not a valid label selector: "Near" is not a valid label selector operator',
    )
  })
})
