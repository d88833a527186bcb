/**
 * The cluster source against an API server the test runs (test/support/fake-apiserver.ts),
 * through the real @kubernetes/client-node and a kubeconfig file. The fake, not the real
 * server (test/cluster.e2e.test.ts): these run with the unit tests, without Go, see every
 * request's exact path and query, and page lists below the client's 500 objects a page,
 * which a real server does only past 500 objects.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FakeApiServer } from '../../test/support/fake-apiserver.js'
import type { Json } from '../../test/support/fake-apiserver.js'
import { ClusterError, readCluster } from './cluster.js'
import type { ClusterOptions } from './cluster.js'
import { loadFleetDirectory } from './load.js'

const repo = (name: string, namespace: string): Json => ({
  apiVersion: 'config.porch.kpt.dev/v1alpha1',
  kind: 'Repository',
  metadata: { name, namespace },
  spec: { type: 'git', git: { repo: `/repos/${name}`, branch: 'main' } },
})
const cluster = (name: string, namespace: string): Json => ({
  apiVersion: 'infra.nephio.org/v1alpha1',
  kind: 'WorkloadCluster',
  metadata: { name, namespace, labels: { 'nephio.org/site-type': 'edge' } },
  spec: { clusterName: name },
})
const configMap = (name: string, namespace: string): Json => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace },
  data: { A: name },
})
const set = (namespace: string): Json => ({
  apiVersion: 'config.porch.kpt.dev/v1alpha2',
  kind: 'PackageVariantSet',
  metadata: { name: 'nginx', namespace, uid: 'uid-1' },
  spec: {
    upstream: { repo: 'blueprints', package: 'nginx', revision: 1 },
    targets: [
      {
        objectSelector: {
          apiVersion: 'infra.nephio.org/v1alpha1',
          kind: 'WorkloadCluster',
          matchLabels: { 'nephio.org/site-type': 'edge' },
        },
        template: {
          downstream: { repoExpr: 'target.name' },
          injectors: [{ kind: 'ConfigMap', nameExpr: "'x'" }, { name: 'anything' }],
        },
      },
    ],
  },
  status: {
    conditions: [
      { type: 'Ready', status: 'True', reason: 'Reconciled', message: 'm', lastTransitionTime: '2026-01-01T00:00:00Z' },
    ],
  },
})
const variant = (name: string, namespace: string): Json => ({
  apiVersion: 'config.porch.kpt.dev/v1alpha1',
  kind: 'PackageVariant',
  metadata: { name, namespace },
  spec: {
    upstream: { repo: 'blueprints', package: 'nginx', revision: 1 },
    downstream: { repo: 'edge-01', package: name },
  },
  status: { conditions: [] },
})
const fleet = (): Json[] => [
  repo('blueprints', 'a'),
  repo('edge-01', 'a'),
  repo('blueprints', 'b'),
  cluster('edge-01', 'a'),
  cluster('edge-02', 'b'),
  configMap('x', 'a'),
  configMap('y', 'b'),
  set('a'),
  variant('pv-1', 'a'),
  variant('pv-2', 'b'),
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' } },
]

let server: FakeApiServer
let dir: string
let kubeconfig: string

beforeEach(async () => {
  server = await new FakeApiServer(fleet()).start()
  dir = mkdtempSync(join(tmpdir(), 'kpt-variants-cluster-'))
  kubeconfig = join(dir, 'kubeconfig')
  server.writeKubeconfig(kubeconfig)
})

afterEach(async () => {
  await server.stop()
  rmSync(dir, { recursive: true, force: true })
})

const options = (more: Partial<ClusterOptions> = {}): ClusterOptions => ({
  kubeconfig,
  cacheDir: join(dir, 'cache'),
  cwd: dir,
  env: {},
  ...more,
})
const identities = (snapshot: string) =>
  loadFleetDirectory(snapshot).objects.map((o) => `${o.apiVersion} ${o.kind} ${o.namespace}/${o.name}`)

test('lists the fleet kinds, the kinds sets select and injectors name, page by page, into a snapshot without server fields', async () => {
  const read = await readCluster(options())
  try {
    expect(readdirSync(read.dir).sort()).toEqual([
      'configmaps.core.yaml',
      'packagevariants.config.porch.kpt.dev.yaml',
      'packagevariantsets.config.porch.kpt.dev.yaml',
      'repositories.config.porch.kpt.dev.yaml',
      'workloadclusters.infra.nephio.org.yaml',
    ])
    expect(identities(read.dir)).toEqual([
      'v1 ConfigMap a/x',
      'v1 ConfigMap b/y',
      'config.porch.kpt.dev/v1alpha1 PackageVariant a/pv-1',
      'config.porch.kpt.dev/v1alpha1 PackageVariant b/pv-2',
      'config.porch.kpt.dev/v1alpha2 PackageVariantSet a/nginx',
      'config.porch.kpt.dev/v1alpha1 Repository a/blueprints',
      'config.porch.kpt.dev/v1alpha1 Repository a/edge-01',
      'config.porch.kpt.dev/v1alpha1 Repository b/blueprints',
      'infra.nephio.org/v1alpha1 WorkloadCluster a/edge-01',
      'infra.nephio.org/v1alpha1 WorkloadCluster b/edge-02',
    ])
    // Stripped: what the server changes on every write, kubectl's copy, and the status this run writes.
    expect(readFileSync(join(read.dir, 'packagevariantsets.config.porch.kpt.dev.yaml'), 'utf8')).toBe(
      [
        'apiVersion: config.porch.kpt.dev/v1alpha2',
        'kind: PackageVariantSet',
        'metadata:',
        '  name: nginx',
        '  namespace: a',
        '  uid: uid-1',
        'spec:',
        '  upstream:',
        '    repo: blueprints',
        '    package: nginx',
        '    revision: 1',
        '  targets:',
        '    - objectSelector:',
        '        apiVersion: infra.nephio.org/v1alpha1',
        '        kind: WorkloadCluster',
        '        matchLabels:',
        '          nephio.org/site-type: edge',
        '      template:',
        '        downstream:',
        '          repoExpr: target.name',
        '        injectors:',
        '          - kind: ConfigMap',
        `            nameExpr: "'x'"`,
        '          - name: anything',
        '',
      ].join('\n'),
    )
    expect(read.warnings).toEqual([
      'PackageVariantSet a/nginx: spec.targets[0].template.injectors[1] names no kind: with --cluster only the kinds injectors name are read, so it can inject only objects of those kinds',
    ])
    // Lists across namespaces, two objects a page (the fake's page size), each continued.
    const lists = server.requests.filter((r) => r.method === 'GET' && /\/(repositories|configmaps)$/.test(r.path))
    expect(lists.map((r) => `${r.path} ${r.query['continue'] ?? ''}`)).toEqual([
      '/apis/config.porch.kpt.dev/v1alpha1/repositories ',
      '/apis/config.porch.kpt.dev/v1alpha1/repositories 2',
      '/api/v1/configmaps ',
    ])
    expect(read.variants.map((v) => [v.apiVersion, v.object['status']])).toEqual([
      ['config.porch.kpt.dev/v1alpha1', { conditions: [] }],
      ['config.porch.kpt.dev/v1alpha1', { conditions: [] }],
    ])
    expect(read.id).toBe(`cluster ${server.url} *`)
  } finally {
    read.close()
  }
  expect(readdirSync(join(dir, 'cache', 'cluster'))).toEqual([])
})

test('--namespace reads only that namespace', async () => {
  const read = await readCluster(options({ namespace: 'b' }))
  try {
    expect(identities(read.dir)).toEqual([
      'config.porch.kpt.dev/v1alpha1 PackageVariant b/pv-2',
      'config.porch.kpt.dev/v1alpha1 Repository b/blueprints',
    ])
    const lists = server.requests.filter((r) => r.method === 'GET' && !/^\/apis?(\/[^/]+){0,2}$/.test(r.path))
    expect(lists.map((r) => r.path)).toEqual([
      '/apis/config.porch.kpt.dev/v1alpha1/namespaces/b/repositories',
      '/apis/config.porch.kpt.dev/v1alpha2/namespaces/b/packagevariantsets',
      '/apis/config.porch.kpt.dev/v1alpha1/namespaces/b/packagevariants',
    ])
  } finally {
    read.close()
  }
})

test('status goes through the status subresource as a merge patch; a refused write is reported, not thrown', async () => {
  const read = await readCluster(options())
  read.close()
  server.refuse = (r) => (r.method === 'PATCH' && r.path.includes('/namespaces/b/') ? 403 : undefined)
  const conditions = [
    { type: 'Ready', status: 'True', lastTransitionTime: '2026-02-02T00:00:00Z', reason: 'NoErrors', message: 'ok' },
  ]
  const result = await read.writeStatus([
    {
      apiVersion: 'config.porch.kpt.dev/v1alpha1',
      kind: 'PackageVariant',
      namespace: 'a',
      name: 'pv-1',
      subject: 'PackageVariant a/pv-1',
      status: { conditions },
      wanted: { conditions: [], extra: {}, now: '' },
    },
    {
      apiVersion: 'config.porch.kpt.dev/v1alpha1',
      kind: 'PackageVariant',
      namespace: 'b',
      name: 'pv-2',
      subject: 'PackageVariant b/pv-2',
      status: { conditions },
      wanted: { conditions: [], extra: {}, now: '' },
    },
  ])
  expect(result.written).toBe(1)
  expect(result.failures).toEqual([
    `PackageVariant b/pv-2: status not written: cannot patch /apis/config.porch.kpt.dev/v1alpha1/namespaces/b/packagevariants/pv-2/status on ${server.url}: forbidden: ` +
      '/apis/config.porch.kpt.dev/v1alpha1/namespaces/b/packagevariants/pv-2/status is refused (403): User "tester" cannot patch it',
  ])
  const patches = server.requests.filter((r) => r.method === 'PATCH')
  expect(patches.map((r) => [r.path, r.contentType, r.body])).toContainEqual([
    '/apis/config.porch.kpt.dev/v1alpha1/namespaces/a/packagevariants/pv-1/status',
    'application/merge-patch+json',
    { status: { conditions } },
  ])
  expect(server.object('PackageVariant', 'a', 'pv-1')!['status']).toEqual({ conditions })
})

test('a forbidden list is one line naming the resource and the server', async () => {
  server.refuse = (r) => (r.path.endsWith('/packagevariants') ? 403 : undefined)
  await expect(readCluster(options())).rejects.toThrow(
    new ClusterError(
      `cannot list packagevariants.config.porch.kpt.dev in all namespaces on ${server.url}: forbidden: /apis/config.porch.kpt.dev/v1alpha1/packagevariants is refused (403): User "tester" cannot list it`,
    ),
  )
  // Nothing is written before every list has succeeded.
  expect(existsSync(join(dir, 'cache', 'cluster'))).toBe(false)
})

test('an unreachable server, a missing kubeconfig, context or CRD: one line each', async () => {
  const url = server.url
  await server.stop()
  await expect(readCluster(options())).rejects.toThrow(
    new ClusterError(
      `cannot reach the Kubernetes API server ${url} (to discover the resources of config.porch.kpt.dev/v1alpha1): ECONNREFUSED`,
    ),
  )
  await expect(readCluster(options({ kubeconfig: undefined, env: { HOME: dir } }))).rejects.toThrow(
    'no kubeconfig: give --kubeconfig PATH, set KUBECONFIG, or create ~/.kube/config (in a pod, its service account is used)',
  )
  await expect(readCluster(options({ kubeconfig: 'nowhere' }))).rejects.toThrow('kubeconfig nowhere does not exist')
  await expect(readCluster(options({ context: 'prod' }))).rejects.toThrow('no context "prod" in the kubeconfig')

  server = await new FakeApiServer(fleet(), []).start()
  server.writeKubeconfig(kubeconfig)
  await expect(
    readCluster(options({ kubeconfig: undefined, env: { KUBECONFIG: `${join(dir, 'missing')}:${kubeconfig}` } })),
  ).rejects.toThrow(
    `the API server ${server.url} does not serve config.porch.kpt.dev/v1alpha1 Repository: are Porch's CRDs installed? (see docs/cluster.md)`,
  )
})
