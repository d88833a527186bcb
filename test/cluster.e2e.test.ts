/**
 * `kpt-variants render --cluster` end to end, as a real process, against a
 * real Kubernetes API server (test/support/kube-apiserver.ts) with Porch's
 * CRDs from deploy/crds, reached through a kubeconfig by the real
 * @kubernetes/client-node. The same objects written as a fleet directory
 * render byte for byte the same packages; status comes back through the
 * status subresource, and a write that meets another writer's change (409
 * Conflict) is retried from the object as it now is.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseValue } from '../functions/krm/yaml/index.js'
import { repoRoot } from './e2e/runner.js'
import { ApiProxy } from './support/api-proxy.js'
import { createBlueprints, fleetFiles, threeClusters } from './support/fleet.js'
import { git, readTreeWithModes, writeTree } from './support/git-repo.js'
import { KubeApiServer, kubeApiServerBuilt, kubeApiServerMissing } from './support/kube-apiserver.js'
import { describeIfAvailable } from './support/requires.js'
import { freePorts } from './support/ports.js'
import { schemalessCrd } from './support/schemaless-crd.js'
import type { Json } from './support/kube-client.js'
import { source } from './support/source.js'
import { runCli } from './support/cli-run.js'

const timeout = 120_000
const yamlFiles = (dir: string) =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => join(dir, f))
const documents = (file: string) => parseValue(readFileSync(file, 'utf8'), { stream: true }) as Json[]

const variant = (name: string, namespace: string, revision: number) => source`
  apiVersion: config.porch.kpt.dev/v1alpha1
  kind: PackageVariant
  metadata:
    name: ${name}
    namespace: ${namespace}
  spec:
    upstream: {repo: blueprints, package: nginx, revision: ${revision}}
    downstream: {repo: edge-01, package: ${name}}
    injectors:
    - {group: "", kind: ConfigMap, name: us-east1-endpoints}
`

/** A service account bound to a ClusterRole of `rules`, and its token. */
async function serviceAccount(server: KubeApiServer, name: string, rules: Json[]): Promise<string> {
  const subject = { kind: 'ServiceAccount', name, namespace: 'default' }
  await server.apply([
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: 'default' } },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name }, rules },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [subject],
    },
  ])
  const rule = rules[0]!
  const { group, resource, verb } = {
    group: rule['apiGroups'][0],
    resource: rule['resources'][0],
    verb: rule['verbs'][0],
  }
  await server.waitForAccess(`system:serviceaccount:default:${name}`, { verb, group, resource }, true)
  return server.token('default', name)
}

const fleetLists = {
  apiGroups: ['config.porch.kpt.dev', 'infra.nephio.org', '', 'kpt-variants.dev'],
  resources: [
    'repositories',
    'packagevariantsets',
    'packagevariants',
    'workloadclusters',
    'configmaps',
    'packagecatalogs',
    'installedpackages',
    'clusterapis',
    'dependencypolicies',
    'rollouts',
  ],
  verbs: ['list'],
}

const suite = describeIfAvailable(kubeApiServerBuilt(), kubeApiServerMissing)

suite('render --cluster against a real API server', () => {
  let server: KubeApiServer
  let dir: string
  let objects: Json[]

  beforeAll(async () => {
    server = await KubeApiServer.start()
    await server.apply([
      ...yamlFiles(join(repoRoot, 'deploy', 'crds')).flatMap(documents),
      schemalessCrd('infra.nephio.org', 'WorkloadCluster'),
    ])
    await server.apply([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' } }])
  }, timeout)

  afterAll(async () => {
    await server?.stop()
  }, timeout)

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kpt-variants-cluster-e2e-'))
    await createBlueprints(join(dir, 'repos', 'blueprints'))
    const files = fleetFiles({
      clusters: [...threeClusters, { name: 'core-01', region: 'us-east1', siteType: 'core' }],
      extra: {
        // A standalone variant, one whose upstream revision does not exist, and one in another namespace.
        'variants.yaml': [
          variant('standalone', 'default', 2),
          variant('missing', 'default', 7),
          variant('lonely', 'other', 1),
        ].join('---\n'),
      },
    })
    // Absolute repository paths: a directory resolves relative ones against itself, a cluster against the working directory.
    for (const [name, text] of Object.entries(files))
      files[name] = text.replaceAll('repo: ../repos/', `repo: ${dir}/repos/`)
    writeTree(join(dir, 'fleet'), files)
    // The same objects, served; each PackageVariant with a status the snapshot must leave out.
    objects = Object.values(files).flatMap((text) => parseValue(text, { stream: true }) as Json[])
    for (const o of objects)
      if (o['kind'] === 'PackageVariant')
        o['status'] = {
          conditions: [
            {
              type: 'Ready',
              status: 'Unknown',
              reason: 'Pending',
              message: '',
              lastTransitionTime: '2026-01-01T00:00:00Z',
            },
          ],
        }
    await server.apply(objects)
    server.writeKubeconfig(join(dir, 'kubeconfig'))
  }, timeout)

  afterEach(async () => {
    await server.delete(objects)
    rmSync(dir, { recursive: true, force: true })
  }, timeout)

  async function render(...args: string[]): Promise<{ exitCode: number; stdout: string; stderr: string }> {
    return runCli(dir, ['render', ...args], {
      env: { XDG_CACHE_HOME: join(dir, 'cache'), KUBECONFIG: join(dir, 'kubeconfig') },
      keepFinalNewline: true,
    })
  }

  const stored = (kind: string, namespace: string, name: string) =>
    server.get({
      apiVersion: kind === 'PackageVariantSet' ? 'config.porch.kpt.dev/v1alpha2' : 'config.porch.kpt.dev/v1alpha1',
      kind,
      metadata: { name, namespace },
    })
  const conditions = (o: Json | undefined) =>
    (o?.['status']?.['conditions'] ?? []).map(
      (c: Json) => `${c['type']}=${c['status']} ${c['reason']}: ${c['message']}`,
    )
  const variants = (stdout: string) =>
    (JSON.parse(stdout) as { variants: Json[] }).variants.map(
      (v) => `${v['subject']} ${v['status']} ${v['path'] ?? ''}`,
    )
  const statusPatches = async (since: number) =>
    (await server.auditEvents(since)).filter((e) => e.verb === 'patch' && e.objectRef?.subresource === 'status')

  test(
    'the fleet served by the API server renders byte for byte as the same objects in a directory; status is written back',
    async () => {
      const fromDir = await render('fleet', '--out', 'from-dir', '--json')
      const before = (await server.auditEvents()).length
      const fromCluster = await render('--cluster', '--out', 'from-cluster', '--json')
      expect(fromCluster.exitCode).toBe(1)
      expect(fromDir.exitCode).toBe(1)
      const files = readTreeWithModes(join(dir, 'from-cluster'))
      expect([...files.keys()].filter((f) => f.endsWith('/Kptfile')).sort()).toEqual([
        'edge-01/nginx/Kptfile',
        'edge-01/standalone/Kptfile',
        'edge-02/nginx/Kptfile',
        'edge-03/nginx/Kptfile',
      ])
      expect(files).toEqual(readTreeWithModes(join(dir, 'from-dir')))
      expect(variants(fromCluster.stdout)).toEqual(variants(fromDir.stdout))
      expect(fromCluster.stderr).toContain(
        `status: 4 of 4 changed PackageVariant(s) and PackageVariantSet(s) written to ${server.url}`,
      )

      // The status subresource, as merge patches, as the server logged them.
      const patches = await statusPatches(before)
      expect(patches.map((e) => e.requestURI).sort()).toEqual([
        '/apis/config.porch.kpt.dev/v1alpha1/namespaces/default/packagevariants/missing/status',
        '/apis/config.porch.kpt.dev/v1alpha1/namespaces/default/packagevariants/standalone/status',
        '/apis/config.porch.kpt.dev/v1alpha1/namespaces/other/packagevariants/lonely/status',
        '/apis/config.porch.kpt.dev/v1alpha2/namespaces/default/packagevariantsets/nginx/status',
      ])
      expect(patches.map((e) => e.responseStatus?.code)).toEqual([200, 200, 200, 200])
      const standalone = await stored('PackageVariant', 'default', 'standalone')
      expect(conditions(standalone)).toEqual([
        'Ready=True NoErrors: successfully ensured downstream package variant',
        'Stalled=False Valid: all validation checks passed',
      ])
      expect(standalone!['status']['downstreamTargets']).toEqual([{ name: 'edge-01/standalone' }])
      expect(conditions(await stored('PackageVariant', 'default', 'missing'))).toEqual([
        'Ready=False Error: invalid packagevariant object',
        expect.stringMatching(/^Stalled=True ValidationError: could not find upstream package revision .*Revision:7/),
      ])
      expect(conditions(await stored('PackageVariantSet', 'default', 'nginx'))).toEqual([
        'Stalled=False Valid: all validation checks passed',
        'Ready=True Reconciled: package variants successfully reconciled',
      ])

      // Again: every package unchanged, no status changes, nothing written.
      const second = (await server.auditEvents()).length
      const again = await render('--cluster', '--out', 'from-cluster', '--json')
      expect(variants(again.stdout).filter((v) => v.includes(' created ') || v.includes(' updated '))).toEqual([])
      expect(await statusPatches(second)).toEqual([])
      expect(again.stderr).toContain('status: 0 of 0 changed')
    },
    timeout,
  )

  test(
    '--namespace reads one namespace; --dry-run writes no status; a status write RBAC refuses is reported and fails the run',
    async () => {
      const before = (await server.auditEvents()).length
      const dry = await render('--cluster', '-n', 'other', '--out', 'out', '--dry-run', '--json')
      expect(variants(dry.stdout)).toEqual(['PackageVariant other/lonely failed edge-01/lonely'])
      const events = await server.auditEvents(before)
      const lists = events.filter((e) => e.verb === 'list')
      // No set in `other`: no WorkloadClusters to list; its variant injects a ConfigMap; deploy/crds serves the dependency and rollout kinds.
      expect(lists.map((e) => e.objectRef?.resource).sort()).toEqual([
        'clusterapis',
        'configmaps',
        'dependencypolicies',
        'installedpackages',
        'packagecatalogs',
        'packagevariants',
        'packagevariantsets',
        'repositories',
        'rollouts',
      ])
      expect(lists.every((e) => e.objectRef?.namespace === 'other')).toBe(true)
      expect(events.filter((e) => e.verb === 'patch')).toEqual([])

      // Allowed to write the status of every PackageVariant but one (RBAC's resourceNames).
      const token = await serviceAccount(server, 'all-but-standalone', [
        fleetLists,
        {
          apiGroups: ['config.porch.kpt.dev'],
          resources: ['packagevariants/status'],
          resourceNames: ['missing', 'lonely'],
          verbs: ['patch'],
        },
        { apiGroups: ['config.porch.kpt.dev'], resources: ['packagevariantsets/status'], verbs: ['patch'] },
      ])
      server.writeKubeconfig(join(dir, 'kubeconfig'), { token })
      const run = await render('--cluster', '--namespace', 'default', '--out', 'out')
      expect(run.exitCode).toBe(1)
      expect(run.stderr).toContain(
        `kpt-variants: PackageVariant default/standalone: status not written: cannot patch /apis/config.porch.kpt.dev/v1alpha1/namespaces/default/packagevariants/standalone/status on ${server.url}: forbidden: ` +
          'packagevariants.config.porch.kpt.dev "standalone" is forbidden: User "system:serviceaccount:default:all-but-standalone" cannot patch resource "packagevariants/status" in API group "config.porch.kpt.dev" in the namespace "default"\n',
      )
      expect(readTreeWithModes(join(dir, 'out')).has('edge-01/standalone/Kptfile')).toBe(true)
      expect(conditions(await stored('PackageVariantSet', 'default', 'nginx'))).toContain(
        'Ready=True Reconciled: package variants successfully reconciled',
      )
    },
    timeout,
  )

  test(
    "a set whose target kind the server does not serve fails with Porch's NoMatchingTargets and keeps its packages; a package not ready leaves its PackageVariant not Ready",
    async () => {
      expect((await render('--cluster', '--out', 'out')).exitCode).toBe(1) // `missing` fails, as above
      const rendered = readTreeWithModes(join(dir, 'out'))
      // The region's endpoints gone from the cluster: the standalone variant's required injection point is unmet.
      const east = objects.find((o) => o['kind'] === 'ConfigMap' && o['metadata']['name'] === 'us-east1-endpoints')!
      await server.delete([east])
      // A typo in the set's kind: no such kind is served (discovery).
      const set = objects.find((o) => o['kind'] === 'PackageVariantSet')!
      const typo = structuredClone(set)
      typo['spec']['targets'][0]['objectSelector']['kind'] = 'WorkloadClustr'
      await server.apply([typo])
      try {
        const run = await render('--cluster', '--out', 'out', '--json')
        expect(run.exitCode).toBe(1)
        const message =
          'spec.targets[0].objectSelector: no matches for kind "WorkloadClustr" in version "infra.nephio.org/v1alpha1"'
        expect(run.stderr).toContain(`PackageVariantSet default/nginx: ${message}`)
        expect(conditions(await stored('PackageVariantSet', 'default', 'nginx'))).toEqual([
          `Stalled=True NoMatchingTargets: ${message}`,
          `Ready=False NoMatchingTargets: ${message}`,
        ])
        const notReady =
          'not ready: config.injection.ConfigMap.region-endpoints False: no resource matched any injection selector for this injection point'
        expect(conditions(await stored('PackageVariant', 'default', 'standalone'))).toEqual([
          `Ready=False NotReady: ${notReady}`,
          'Stalled=False Valid: all validation checks passed',
        ])
        // Nothing of the set was deleted: its three packages are as they were.
        const now = readTreeWithModes(join(dir, 'out'))
        for (const c of threeClusters)
          for (const [file, content] of rendered)
            if (file.startsWith(`${c.name}/nginx/`)) expect(now.get(file)).toEqual(content)
      } finally {
        await server.apply([set, east])
      }
    },
    timeout,
  )

  test(
    '--git: drafts in the downstream repositories; a relative repository path is relative to the working directory',
    async () => {
      for (const name of ['edge-01', 'edge-02', 'edge-03'])
        await git(dir, 'init', '-q', '--bare', '-b', 'main', `repos/${name}.git`)
      // Porch's CRD makes spec.git.repo immutable: the Repositories are made anew.
      const repositories = objects.filter((o) => o['kind'] === 'Repository')
      await server.delete(repositories)
      await server.apply(
        repositories.map((o) => ({
          ...o,
          spec: { ...o['spec'], git: { ...o['spec']['git'], repo: `repos/${o['metadata']['name']}` } },
        })),
      )
      const run = await render('--cluster', '--git', '--json')
      expect(run.exitCode).toBe(1)
      expect(variants(run.stdout).filter((v) => v.includes(' created '))).toEqual([
        'PackageVariant default/nginx-edge-01-nginx created edge-01/nginx',
        'PackageVariant default/standalone created edge-01/standalone',
        'PackageVariant default/nginx-edge-02-nginx created edge-02/nginx',
        'PackageVariant default/nginx-edge-03-nginx created edge-03/nginx',
      ])
      expect(
        (await git(join(dir, 'repos', 'edge-01.git'), 'branch', '--list', 'drafts/*'))
          .split('\n')
          .map((b) => b.trim())
          .filter(Boolean),
      ).toEqual(['drafts/nginx/packagevariant-1', 'drafts/standalone/packagevariant-1'])
    },
    timeout,
  )

  test(
    'a forbidden list, an unreachable server, no kubeconfig: one line and exit code 2',
    async () => {
      const token = await serviceAccount(server, 'repositories-only', [
        { apiGroups: ['config.porch.kpt.dev'], resources: ['repositories'], verbs: ['list'] },
      ])
      server.writeKubeconfig(join(dir, 'kubeconfig'), { token })
      const forbidden = await render('--cluster', '--git')
      expect(forbidden.exitCode).toBe(2)
      expect(forbidden.stderr).toBe(
        `kpt-variants: cannot list packagevariantsets.config.porch.kpt.dev in all namespaces on ${server.url}: forbidden: ` +
          'packagevariantsets.config.porch.kpt.dev is forbidden: User "system:serviceaccount:default:repositories-only" cannot list resource "packagevariantsets" in API group "config.porch.kpt.dev" at the cluster scope\n',
      )
      // A port nothing listens on.
      const [port] = await freePorts(1)
      server.writeKubeconfig(join(dir, 'kubeconfig'), { server: `https://127.0.0.1:${port}` })
      const unreachable = await render('--cluster', '--out', 'out')
      expect(unreachable.exitCode).toBe(2)
      expect(unreachable.stderr).toBe(
        `kpt-variants: cannot reach the Kubernetes API server https://127.0.0.1:${port} (to discover the resources of config.porch.kpt.dev/v1alpha1): ECONNREFUSED\n`,
      )
      const none = await render('--cluster', '--kubeconfig', 'nowhere.yaml', '--out', 'out')
      expect(none.exitCode).toBe(2)
      expect(none.stderr).toBe('kpt-variants: kubeconfig nowhere.yaml does not exist\n')
      const both = await render('fleet', '--cluster', '--out', 'out')
      expect(both.stderr).toBe('kpt-variants: give either a FLEET directory or --cluster, not both\n')
    },
    timeout,
  )

  test(
    "a status write that meets another writer's change (409 Conflict) is retried from the object as it now is, keeping the other writer's condition; at most 5 times",
    async () => {
      // The other writer acts just before the run's write reaches the server: between the run's list and its patch.
      const proxy = await new ApiProxy(server).start()
      const standalone = {
        apiVersion: 'config.porch.kpt.dev/v1alpha1',
        kind: 'PackageVariant',
        metadata: { name: 'standalone', namespace: 'default' },
      }
      const theirs = {
        type: 'Approved',
        status: 'True',
        reason: 'ByAnotherController',
        message: 'written meanwhile',
        lastTransitionTime: '2026-02-02T00:00:00Z',
      }
      const anotherWriter = async () => {
        const current = (await server.get(standalone))!
        const others = (current['status']?.['conditions'] ?? []).filter((c: Json) => c['type'] !== 'Approved')
        await server.ok('PUT', `${await server.path(standalone, 'status')}`, {
          ...current,
          status: {
            ...current['status'],
            conditions: [
              ...others,
              { ...theirs, message: `${theirs.message} ${current['metadata']['resourceVersion']}` },
            ],
          },
        })
      }
      const isWrite = (method: string, path: string) =>
        method === 'PATCH' && path.endsWith('/packagevariants/standalone/status')
      try {
        server.writeKubeconfig(join(dir, 'kubeconfig'), { server: proxy.url })
        let writes = 0
        proxy.before = async (method, path) => {
          if (isWrite(method, path) && writes++ === 0) await anotherWriter()
        }
        const run = await render('--cluster', '--out', 'out')
        expect(run.stderr).toContain(`written to ${proxy.url}`)
        expect(run.stderr).not.toContain('status not written')
        const ofStandalone = proxy.requests
          .filter((r) => r.path.includes('standalone'))
          .map((r) => `${r.method} ${r.path} ${r.status}`)
        expect(ofStandalone).toEqual([
          'PATCH /apis/config.porch.kpt.dev/v1alpha1/namespaces/default/packagevariants/standalone/status 409',
          'GET /apis/config.porch.kpt.dev/v1alpha1/namespaces/default/packagevariants?fieldSelector=metadata.name%3Dstandalone 200',
          'PATCH /apis/config.porch.kpt.dev/v1alpha1/namespaces/default/packagevariants/standalone/status 200',
        ])
        expect(conditions(await server.get(standalone))).toEqual([
          'Ready=True NoErrors: successfully ensured downstream package variant',
          expect.stringMatching(/^Approved=True ByAnotherController: written meanwhile \d+$/),
          'Stalled=False Valid: all validation checks passed',
        ])

        // Another writer before every write: the run gives up after 5 attempts, saying so.
        await server.ok(
          'PATCH',
          await server.path(standalone, 'status'),
          { status: null },
          { contentType: 'application/merge-patch+json' },
        )
        proxy.requests.length = 0
        proxy.before = async (method, path) => {
          if (isWrite(method, path)) await anotherWriter()
        }
        const stubborn = await render('--cluster', '--out', 'out')
        expect(stubborn.exitCode).toBe(1)
        expect(stubborn.stderr).toContain(
          `kpt-variants: PackageVariant default/standalone: status not written: cannot patch /apis/config.porch.kpt.dev/v1alpha1/namespaces/default/packagevariants/standalone/status on ${proxy.url}: conflict: ` +
            'Operation cannot be fulfilled on packagevariants.config.porch.kpt.dev "standalone": the object has been modified; please apply your changes to the latest version and try again (5 attempts, each after reading it again)\n',
        )
        expect(proxy.requests.filter((r) => isWrite(r.method, r.path)).map((r) => r.status)).toEqual([
          409, 409, 409, 409, 409,
        ])
      } finally {
        await proxy.stop()
      }
    },
    timeout,
  )

  test(
    'a busy server (429, as for a moment after a CRD is made) is asked again after the seconds it names, at most 5 times',
    async () => {
      const proxy = await new ApiProxy(server).start()
      const busy = {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        message: 'storage is (re)initializing',
        reason: 'TooManyRequests',
        code: 429,
      }
      const isList = (method: string, path: string) =>
        method === 'GET' && path.startsWith('/apis/config.porch.kpt.dev/v1alpha1/packagevariants?')
      try {
        server.writeKubeconfig(join(dir, 'kubeconfig'), { server: proxy.url })
        let lists = 0
        proxy.before = (method, path) =>
          isList(method, path) && lists++ < 2 ? { status: 429, headers: { 'retry-after': '0' }, body: busy } : undefined
        const run = await render('--cluster', '--out', 'out', '--json')
        expect(run.stderr).not.toContain('cannot')
        expect(variants(run.stdout)).toContain('PackageVariant default/standalone created edge-01/standalone')
        expect(proxy.requests.filter((r) => isList(r.method, r.path)).map((r) => r.status)).toEqual([429, 429, 200])

        proxy.requests.length = 0
        proxy.before = (method, path) =>
          isList(method, path) ? { status: 429, headers: { 'retry-after': '0' }, body: busy } : undefined
        const gaveUp = await render('--cluster', '--out', 'out')
        expect(gaveUp.exitCode).toBe(2)
        expect(gaveUp.stderr).toBe(
          `kpt-variants: cannot list packagevariants.config.porch.kpt.dev in all namespaces on ${proxy.url}: HTTP 429: storage is (re)initializing\n`,
        )
        expect(proxy.requests.filter((r) => isList(r.method, r.path))).toHaveLength(5)
      } finally {
        await proxy.stop()
      }
    },
    timeout,
  )
})
