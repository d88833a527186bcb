/**
 * Targets that cannot be found fail the set with Porch's `NoMatchingTargets`, never select nothing: a one-letter typo
 * in a kind must not read as "no cluster wants this package any more" and delete every variant of the set.
 */
import { ResourceList } from '../krm/index.js'
import { source } from '../../test/support/source.js'
import { kindKey } from '../api/builtin-kinds.js'
import { runFanOut } from './fan-out.js'
import {
  clusterTargets,
  expectFailedSet,
  fleet,
  pvsWith,
  repo,
  resourceList,
  run,
  variants,
} from './fan-out.fixtures.js'

/** A PackageVariant the set made earlier, for edge-c1. */
const existing = source`
  apiVersion: config.porch.kpt.dev/v1alpha1
  kind: PackageVariant
  metadata:
    name: nginx-edge-c1-nginx-us-east1
    namespace: default
    labels: {config.porch.kpt.dev/packagevariantset: nginx}
    annotations: {internal.config.kubernetes.io/path: sets/nginx-edge-c1-nginx-us-east1.yaml}
  spec:
    upstream: {repo: blueprints, package: nginx, revision: 1}
    downstream: {repo: edge-c1, package: nginx-us-east1}
`

const workloadClusterCrd = source`
  apiVersion: apiextensions.k8s.io/v1
  kind: CustomResourceDefinition
  metadata: {name: workloadclusters.infra.nephio.org}
  spec:
    group: infra.nephio.org
    names: {kind: WorkloadCluster, plural: workloadclusters}
    scope: Namespaced
    versions:
    - {name: v1alpha1, served: true, storage: true}
`

const selecting = (kind: string, apiVersion = 'infra.nephio.org/v1alpha1') =>
  clusterTargets
    .replace('kind: WorkloadCluster', `kind: ${kind}`)
    .replace(/apiVersion: \S+/, `apiVersion: ${apiVersion}`)

describe('targets that cannot be found', () => {
  test('a kind nothing declares (a typo) fails the set with NoMatchingTargets; its PackageVariants are kept', () => {
    const input = resourceList(pvsWith(selecting('WorkloadClustr')), ...fleet, existing)
    const out = run(input)
    expect(out.exitCode).toBe(1)
    expect(out.results).toEqual([
      expect.objectContaining({
        severity: 'error',
        message:
          'spec.targets[0].objectSelector: no matches for kind "WorkloadClustr" in version "infra.nephio.org/v1alpha1"',
        field: { path: 'spec.targets[0].objectSelector.kind' },
        tags: { reason: 'NoMatchingTargets' },
      }),
    ])
    expectFailedSet(input, out.items, 'NoMatchingTargets', 'no matches for kind "WorkloadClustr"')
    expect(variants(out.items).map((v) => v['metadata']['name'])).toEqual(['nginx-edge-c1-nginx-us-east1'])
  })

  test('a known version of the group is not enough: the apiVersion must match too', () => {
    const out = run(resourceList(pvsWith(selecting('WorkloadCluster', 'infra.nephio.org/v1beta1')), ...fleet))
    expect(out.results[0]).toMatchObject({ tags: { reason: 'NoMatchingTargets' } })
    expect(out.results[0]!['message']).toContain('in version "infra.nephio.org/v1beta1"')
  })

  test('a kind a CustomResourceDefinition declares, with no object, is a real empty match: a warning, and deletion', () => {
    const noClusters = fleet.filter((f) => !f.includes('kind: WorkloadCluster'))
    const out = run(resourceList(pvsWith(clusterTargets), ...noClusters, workloadClusterCrd, existing))
    expect(out.exitCode).toBe(0)
    expect(out.results.filter((r) => r['severity'] === 'warning')).toEqual([
      expect.objectContaining({
        message:
          'spec.targets[0].objectSelector: no WorkloadCluster (infra.nephio.org/v1alpha1) matches the selector "region in (eu-west1,us-east1)"',
        field: { path: 'spec.targets[0].objectSelector' },
      }),
    ])
    expect(variants(out.items)).toEqual([])
  })

  test('a built-in kind needs no declaration', () => {
    const out = run(resourceList(pvsWith(selecting('ConfigMap', 'v1')), ...fleet))
    expect(out.exitCode).toBe(0)
    expect(out.results[0]!['message']).toBe(
      'spec.targets[0].objectSelector: no ConfigMap (v1) matches the selector "region in (eu-west1,us-east1)"',
    )
  })

  test('with the served kinds of an API server, only those are known, whatever the items hold', () => {
    const outcome = (served: string[]) => {
      const rl = ResourceList.parse(resourceList(pvsWith(clusterTargets), ...fleet))
      return { rl, ...runFanOut(rl, { sources: [] }, { servedKinds: new Set(served) }) }
    }
    const unserved = outcome([kindKey('v1', 'ConfigMap')])
    expect(unserved.failures).toEqual([
      {
        reason: 'NoMatchingTargets',
        message:
          'spec.targets[0].objectSelector: no matches for kind "WorkloadCluster" in version "infra.nephio.org/v1alpha1"',
      },
    ])
    const served = outcome([kindKey('infra.nephio.org/v1alpha1', 'WorkloadCluster')])
    expect(served.failures).toEqual([])
    expect(served.summary?.created).toHaveLength(2)
  })

  test('a repositorySelector with no Repository at all fails the set', () => {
    const input = resourceList(
      pvsWith('- repositorySelector: {matchLabels: {env: prod}}\n'),
      ...fleet.filter((f) => !f.includes('kind: Repository')),
    )
    const out = run(input)
    expect(out.results[0]).toMatchObject({
      message:
        'spec.targets[0].repositorySelector: there is no Repository (config.porch.kpt.dev/v1alpha1) at all to select from',
      tags: { reason: 'NoMatchingTargets' },
    })
    expectFailedSet(input, out.items, 'NoMatchingTargets', 'no Repository')
  })

  test('a repositorySelector that matches no Repository is an empty match', () => {
    const out = run(resourceList(pvsWith('- repositorySelector: {matchLabels: {env: prod}}\n'), ...fleet))
    expect(out.exitCode).toBe(0)
    expect(out.results[0]!['message']).toBe(
      'spec.targets[0].repositorySelector: no Repository (config.porch.kpt.dev/v1alpha1) matches the selector "env=prod"',
    )
  })

  test('a repositories entry naming no Repository fails the set, naming every missing one', () => {
    const input = resourceList(
      pvsWith('- repositories: [{name: edge-c1}, {name: edge-zz}, {name: edge-yy}]\n'),
      ...fleet,
      repo('edge-c2', '{env: prod}'),
      existing,
    )
    const out = run(input)
    expect(out.results).toEqual([
      expect.objectContaining({
        message:
          'Repositories "edge-zz", "edge-yy" of spec.targets[0].repositories not found: no Repository of that name in namespace "default"',
        field: { path: 'spec.targets[0].repositories[1].name' },
        tags: { reason: 'NoMatchingTargets' },
      }),
    ])
    expectFailedSet(input, out.items, 'NoMatchingTargets', 'not found')
  })
})
