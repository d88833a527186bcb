/**
 * `kpt-variants render --cluster` against a real Kubernetes API server
 * (test/support/cluster-fleet.ts) when the server refuses or fails: a
 * forbidden list, an unreachable server and no kubeconfig are one line and
 * exit code 2; a status write that meets another writer's change (409
 * Conflict) is retried from the object as it now is, and a busy server
 * (429) asked again, each at most 5 times (the proxy of
 * test/support/api-proxy.ts makes those answers happen when they must).
 */
import { join } from 'node:path'
import { ApiProxy } from './support/api-proxy.js'
import { conditions, serviceAccount, timeout, useClusterFleet, variants } from './support/cluster-fleet.js'
import { kubeApiServerBuilt, kubeApiServerMissing } from './support/kube-apiserver.js'
import type { Json } from './support/kube-client.js'
import { freePorts } from './support/ports.js'
import { describeIfAvailable } from './support/requires.js'

const suite = describeIfAvailable(kubeApiServerBuilt(), kubeApiServerMissing)

suite('render --cluster when the API server refuses or fails', () => {
  const fleet = useClusterFleet()

  test(
    'a forbidden list, an unreachable fleet.server, no kubeconfig: one line and exit code 2',
    async () => {
      const token = await serviceAccount(fleet.server, 'repositories-only', [
        { apiGroups: ['config.porch.kpt.dev'], resources: ['repositories'], verbs: ['list'] },
      ])
      fleet.server.writeKubeconfig(join(fleet.dir, 'kubeconfig'), { token })
      const forbidden = await fleet.render('--cluster', '--git')
      expect(forbidden.exitCode).toBe(2)
      expect(forbidden.stderr).toBe(
        `kpt-variants: cannot list packagevariantsets.config.porch.kpt.dev in all namespaces on ${fleet.server.url}: forbidden: ` +
          'packagevariantsets.config.porch.kpt.dev is forbidden: User "system:serviceaccount:default:repositories-only" cannot list resource "packagevariantsets" in API group "config.porch.kpt.dev" at the cluster scope\n',
      )
      // A port nothing listens on.
      const [port] = await freePorts(1)
      fleet.server.writeKubeconfig(join(fleet.dir, 'kubeconfig'), { server: `https://127.0.0.1:${port}` })
      const unreachable = await fleet.render('--cluster', '--out', 'out')
      expect(unreachable.exitCode).toBe(2)
      expect(unreachable.stderr).toBe(
        `kpt-variants: cannot reach the Kubernetes API server https://127.0.0.1:${port} (to discover the resources of config.porch.kpt.dev/v1alpha1): ECONNREFUSED\n`,
      )
      const none = await fleet.render('--cluster', '--kubeconfig', 'nowhere.yaml', '--out', 'out')
      expect(none.exitCode).toBe(2)
      expect(none.stderr).toBe('kpt-variants: kubeconfig nowhere.yaml does not exist\n')
      const both = await fleet.render('fleet', '--cluster', '--out', 'out')
      expect(both.stderr).toBe('kpt-variants: give either a FLEET directory or --cluster, not both\n')
    },
    timeout,
  )

  test(
    "a status write that meets another writer's change (409 Conflict) is retried from the object as it now is, keeping the other writer's condition; at most 5 times",
    async () => {
      // The other writer acts just before the run's write reaches the server: between the run's list and its patch.
      const proxy = await new ApiProxy(fleet.server).start()
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
        const current = (await fleet.server.get(standalone))!
        const others = (current['status']?.['conditions'] ?? []).filter((c: Json) => c['type'] !== 'Approved')
        await fleet.server.ok('PUT', `${await fleet.server.path(standalone, 'status')}`, {
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
        fleet.server.writeKubeconfig(join(fleet.dir, 'kubeconfig'), { server: proxy.url })
        let writes = 0
        proxy.before = async (method, path) => {
          if (isWrite(method, path) && writes++ === 0) await anotherWriter()
        }
        const run = await fleet.render('--cluster', '--out', 'out')
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
        expect(conditions(await fleet.server.get(standalone))).toEqual([
          'Ready=True NoErrors: successfully ensured downstream package variant',
          expect.stringMatching(/^Approved=True ByAnotherController: written meanwhile \d+$/),
          'Stalled=False Valid: all validation checks passed',
        ])

        // Another writer before every write: the run gives up after 5 attempts, saying so.
        await fleet.server.ok(
          'PATCH',
          await fleet.server.path(standalone, 'status'),
          { status: null },
          { contentType: 'application/merge-patch+json' },
        )
        proxy.requests.length = 0
        proxy.before = async (method, path) => {
          if (isWrite(method, path)) await anotherWriter()
        }
        const stubborn = await fleet.render('--cluster', '--out', 'out')
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
      const proxy = await new ApiProxy(fleet.server).start()
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
        fleet.server.writeKubeconfig(join(fleet.dir, 'kubeconfig'), { server: proxy.url })
        let lists = 0
        proxy.before = (method, path) =>
          isList(method, path) && lists++ < 2 ? { status: 429, headers: { 'retry-after': '0' }, body: busy } : undefined
        const run = await fleet.render('--cluster', '--out', 'out', '--json')
        expect(run.stderr).not.toContain('cannot')
        expect(variants(run.stdout)).toContain('PackageVariant default/standalone created edge-01/standalone')
        expect(proxy.requests.filter((r) => isList(r.method, r.path)).map((r) => r.status)).toEqual([429, 429, 200])

        proxy.requests.length = 0
        proxy.before = (method, path) =>
          isList(method, path) ? { status: 429, headers: { 'retry-after': '0' }, body: busy } : undefined
        const gaveUp = await fleet.render('--cluster', '--out', 'out')
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
