/** The made-up PackageVariant of a dependency step, and the configuration a DependencyPolicy gives it. */
import { readDependencyPolicy } from '../../functions/api/dependency-policy.js'
import { readRepository } from '../../functions/api/repository.js'
import { KubeObject } from '../../functions/krm/index.js'
import type { PackageRevision } from '../upstream/revisions.js'
import type { DependencyStep } from './steps.js'
import { dependencyVariant } from './step-variant.js'

const repo = (name: string, labels: Record<string, string> = {}) => {
  const read = readRepository(
    KubeObject.fromObject({
      apiVersion: 'config.porch.kpt.dev/v1alpha1',
      kind: 'Repository',
      metadata: { name, namespace: 'default', labels },
      spec: { git: { repo: `../repos/${name}` } },
    }),
  )
  if (!read.ok) throw new Error('bad repository')
  return read.value
}
const catalog = repo('catalog')
const edge = repo('edge-05', { region: 'us-west1' })
const revision: PackageRevision = {
  kind: 'published',
  repository: 'catalog',
  namespace: 'default',
  packageName: 'cert-manager',
  revision: 2,
  workspaceName: 'v2',
  ref: 'cert-manager/v2',
  commit: 'c2',
  directory: 'cert-manager',
}
const step = (asDependency = true): DependencyStep => ({
  action: 'install',
  package: 'cert-manager',
  namespace: '',
  version: 'v1.14.4',
  pkg: 'cert-manager',
  source: { repo: 'catalog', package: 'cert-manager', revision: 2 },
  asDependency,
  deletionPolicy: 'delete',
  requiredBy: [],
  neededBy: [],
  requires: [],
})
const policy = (dependency: Record<string, unknown>) => {
  const read = readDependencyPolicy(
    KubeObject.fromObject({
      apiVersion: 'kpt-variants.dev/v1alpha1',
      kind: 'DependencyPolicy',
      metadata: { name: 'edge', namespace: 'default' },
      spec: { dependencies: [{ package: 'cert-manager', ...dependency }] },
    }),
  )
  if (!read.ok) throw new Error(read.errors.map((e) => e.message).join('; '))
  return { dependency: read.value.dependencies[0]!, from: 'DependencyPolicy default/edge' }
}
const target = KubeObject.fromObject({
  apiVersion: 'infra.nephio.org/v1alpha1',
  kind: 'WorkloadCluster',
  metadata: { name: 'edge-05', namespace: 'default', labels: { region: 'eu-west1' } },
})
const make = (options: Parameters<typeof dependencyVariant>[4], asDependency = true) =>
  dependencyVariant(
    step(asDependency),
    edge,
    { repositories: [catalog, edge] },
    new Map([['default|catalog|cert-manager', [revision]]]),
    options,
  )

describe('dependencyVariant', () => {
  test('without a configuration: only the upstream and the downstream', () => {
    const made = make({})
    expect(made.ok && made.variant.pv.spec).toEqual({
      upstream: { repo: 'catalog', package: 'cert-manager', revision: 2 },
      downstream: { repo: 'edge-05', package: 'cert-manager' },
    })
    expect(made.ok && made.variant.dependency).toEqual({ asDependency: true, deletionPolicy: 'delete' })
  })

  test("a configuration is rendered as a set's template: CEL over the target, the repository and the upstream", () => {
    const configured = policy({
      packageContext: {
        data: { team: 'platform' },
        dataExprs: [
          { key: 'cluster-issuer', valueExpr: "'letsencrypt-' + target.labels.region" },
          { key: 'repo', valueExpr: 'repository.name' },
          { key: 'from', valueExpr: 'upstream.name' },
        ],
      },
      injectors: [{ kind: 'ConfigMap', nameExpr: "target.labels.region + '-endpoints'" }],
      pipeline: { mutators: [{ image: 'set-labels:v0.2', configMap: { tier: 'platform' } }] },
    })
    const made = make({ configured, target })
    if (!made.ok) throw new Error(made.message)
    expect(made.variant.pv.spec).toEqual({
      upstream: { repo: 'catalog', package: 'cert-manager', revision: 2 },
      downstream: { repo: 'edge-05', package: 'cert-manager' },
      packageContext: {
        data: {
          'cluster-issuer': 'letsencrypt-eu-west1',
          from: 'catalog.cert-manager.v2',
          repo: 'edge-05',
          team: 'platform',
        },
      },
      injectors: [{ kind: 'ConfigMap', name: 'eu-west1-endpoints' }],
      pipeline: { mutators: [{ image: 'set-labels:v0.2', configMap: { tier: 'platform' } }] },
    })
    expect(made.variant.dependency?.configured).toBe('DependencyPolicy default/edge')
    // The PackageVariant object carries the configuration: a change of it is a change of the render's inputs.
    expect(made.variant.pv.object.get(['spec', 'packageContext', 'data', 'cluster-issuer'])).toBe(
      'letsencrypt-eu-west1',
    )
    // Without a target, `target` is the Repository.
    const bare = make({ configured })
    expect(bare.ok && bare.variant.pv.spec.packageContext?.data?.['cluster-issuer']).toBe('letsencrypt-us-west1')
  })

  test('a package someone installed on purpose is not configured; an expression that fails names the policy and field', () => {
    const configured = policy({ packageContext: { dataExprs: [{ key: 'x', valueExpr: 'target.labels.zone' }] } })
    const mine = make({ configured, target }, false)
    expect(mine.ok && mine.variant.pv.spec.packageContext).toBeUndefined()
    const failed = make({ configured, target })
    expect(failed).toEqual({
      ok: false,
      message: expect.stringMatching(
        /^its configuration \(DependencyPolicy default\/edge spec.dependencies\[0\]\) cannot be rendered: spec.dependencies\[0\].packageContext.dataExprs\[0\].valueExpr: /,
      ),
    })
  })
})
