/** Platform constraints: where a cluster's Kubernetes version is read, and a package's range against it. */
import { KubeObject } from '../../functions/krm/index.js'
import type { PlanCatalog } from '../../functions/dependency-check/index.js'
import { clusterVersionOf, platformCheck, runnableCatalogs } from './platform.js'

const object = (kind: string, name: string, labels: Record<string, string>, spec: Record<string, unknown> = {}) =>
  KubeObject.fromObject({ apiVersion: 'v1', kind, metadata: { name, labels }, spec })

describe('clusterVersionOf', () => {
  const cluster = object(
    'WorkloadCluster',
    'edge-05',
    { 'kpt-variants.dev/kubernetes-version': '1.28.3' },
    {
      topology: { version: 'v1.29.1' },
    },
  )
  const repo = {
    object: object('Repository', 'edge-05', { 'kpt-variants.dev/kubernetes-version': '1.27.0', k8s: '1.30.0' }),
  }

  test('the label on the target object, else on the downstream Repository; the source says where', () => {
    expect(clusterVersionOf({ label: 'kpt-variants.dev/kubernetes-version' }, cluster, repo)).toEqual({
      version: '1.28.3',
      source: 'WorkloadCluster edge-05 (label kpt-variants.dev/kubernetes-version)',
    })
    expect(clusterVersionOf({ label: 'k8s' }, cluster, repo)).toEqual({
      version: '1.30.0',
      source: 'Repository edge-05 (label k8s)',
    })
    expect(
      clusterVersionOf({ field: ['spec', 'topology', 'version'], path: 'spec.topology.version' }, cluster, repo),
    ).toEqual({
      version: 'v1.29.1',
      source: 'WorkloadCluster edge-05 (field spec.topology.version)',
    })
    expect(clusterVersionOf({ label: 'nothing' }, cluster, repo)).toEqual({
      source: 'WorkloadCluster edge-05 or Repository edge-05 (label nothing)',
    })
  })
})

describe('platformCheck', () => {
  const at = (version?: string) => ({ ...(version ? { version } : {}), source: 'WorkloadCluster edge-05 (label k)' })
  test('fails with both versions, passes in range, warns when unknown or unreadable', () => {
    expect(platformCheck('nginx v2.0.0', '>=1.29', at('1.28.3'))).toEqual({
      error: 'nginx v2.0.0 needs Kubernetes >=1.29, and WorkloadCluster edge-05 (label k) runs 1.28.3',
    })
    expect(platformCheck('nginx v2.0.0', '>=1.29', at('v1.29.1+k3s1'))).toBeUndefined()
    expect(platformCheck('nginx v2.0.0', '>=1.29', at())).toEqual({
      warning:
        "nginx v2.0.0 needs Kubernetes >=1.29; the cluster's version is unknown (nothing at WorkloadCluster edge-05 (label k)), so it is not checked",
    })
    expect(platformCheck('nginx', '>=1.29', at('latest'))).toMatchObject({
      warning: expect.stringContaining('"latest", which is not a version'),
    })
    expect(platformCheck('nginx', 'one', at('1.29.0'))).toEqual({
      error: 'nginx: spec.kubernetesVersion improper constraint: one',
    })
  })
})

describe('runnableCatalogs', () => {
  const catalogs: PlanCatalog[] = [
    {
      name: 'c',
      packages: [
        {
          name: 'cert-manager',
          versions: [
            { version: 'v1.12.0', provides: [], dependencies: [] },
            { version: 'v1.14.0', provides: [], dependencies: [], kubernetesVersion: '>=1.29' },
          ],
        },
      ],
    },
  ]
  test('versions the cluster does not run are left out; an unknown version filters nothing', () => {
    const versions = (c: readonly PlanCatalog[]) => c[0]!.packages[0]!.versions.map((v) => v.version)
    expect(versions(runnableCatalogs(catalogs, { version: '1.28.0', source: '' }))).toEqual(['v1.12.0'])
    expect(versions(runnableCatalogs(catalogs, { version: '1.29.0', source: '' }))).toEqual(['v1.12.0', 'v1.14.0'])
    expect(runnableCatalogs(catalogs, { source: '' })).toBe(catalogs)
  })
})
