/**
 * The controller as deploy/ runs it, on a real node (test/support/node-cluster.ts): `kpt live apply`
 * of deploy/ (with the image built here) reconciles, two replicas run under the package's service
 * account in the restricted Pod Security Standard, one leads by the Lease and labels its pod, which
 * the webhook Service reaches; drafts go to a git server the pods reach (git daemon). A new target, a
 * relabel and a deleted PackageVariant each reach git; the leader's pod deleted, the other takes over
 * within the lease duration and nothing is lost or duplicated; a container killed is restarted and
 * the fleet converges.
 */
import { join } from 'node:path'
import { readdirSync, readFileSync } from 'node:fs'
import { repoRoot } from '../e2e/runner.js'
import { threeClusters } from '../support/fleet.js'
import { git } from '../support/git-repo.js'
import type { GitDaemon } from '../support/git-daemon.js'
import type { Json } from '../support/kube-client.js'
import type { NodeCluster } from '../support/node-cluster.js'
import { until } from '../support/node-cluster.js'
import {
  branches,
  deployForNode,
  documents,
  fleetObjects,
  isReady,
  liveApply,
  NodeFleet,
  repositoryObject,
  waitForPods,
} from '../support/node-fleet.js'
import { describeOnNode } from '../support/node-suite.js'
import { schemalessCrd } from '../support/schemaless-crd.js'

const timeout = 300_000
const namespace = 'kpt-variants'
const app = { 'app.kubernetes.io/name': 'kpt-variants-controller' }
const leaseDurationMs = 6_000
const suite = describeOnNode()

const workloadCluster = (name: string, region: string): Json => ({
  apiVersion: 'infra.nephio.org/v1alpha1',
  kind: 'WorkloadCluster',
  metadata: { name, namespace: 'default', labels: { 'nephio.org/site-type': 'edge', region } },
  spec: { clusterName: name },
})
const packageVariant = (name: string): Json => ({
  apiVersion: 'config.porch.kpt.dev/v1alpha1',
  kind: 'PackageVariant',
  metadata: { name, namespace: 'default' },
  spec: {
    upstream: { repo: 'blueprints', package: 'nginx', revision: 1 },
    downstream: { repo: 'edge-01', package: name },
    deletionPolicy: 'delete',
    injectors: [{ kind: 'ConfigMap', name: 'us-east1-endpoints' }],
  },
})

suite('the controller as pods on a real node', () => {
  let cluster: NodeCluster
  let daemon: GitDaemon
  let dir: string
  let applied: { exitCode?: number; stdout: string; stderr: string }
  const node = new NodeFleet()

  const lease = async () =>
    (
      await cluster.api.ok('GET', `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/kpt-variants-controller`)
    )['spec']
  /** The region endpoints of `repo`'s nginx draft, as git shows them. */
  const endpoints = (repo: string) =>
    git(join(dir, 'repos', `${repo}.git`), 'show', 'drafts/nginx/packagevariant-1:nginx/region-endpoints.yaml')
  /** Waits until git shows the change: `repo`'s region endpoints include `text`. */
  const untilShown = (repo: string, text: string, what: string) =>
    until(async () => (await endpoints(repo)).includes(text), `${repo}: ${what}`, 120_000)
  /** Waits until `repo`'s draft branches satisfy `check`; resolves with them. */
  const draftsOf = async (repo: string, check: (drafts: string[]) => boolean, what: string) => {
    let found: string[] = []
    await until(async () => check((found = await branches(dir, repo))), `${repo}: ${what}`, 120_000).catch(
      (err: Error) => {
        throw new Error(
          `${err.message} (drafts: ${found.join(', ')})\n${cluster.podLogs(namespace, 'kpt-variants-controller')}`,
        )
      },
    )
    return found
  }
  /** The one Running, Ready pod labelled leader, and the Lease naming it. */
  const leader = async (): Promise<Json> => {
    const [pod] = await waitForPods(
      cluster,
      namespace,
      { ...app, 'kpt-variants.dev/leader': 'true' },
      (found) => found.length === 1 && isReady(found[0]!) && !found[0]!['metadata']['deletionTimestamp'],
      'one ready pod labelled leader',
    )
    expect((await lease())['holderIdentity']).toBe(pod!['metadata']['name'])
    return pod!
  }

  beforeAll(async () => {
    const repos = ['edge-01', 'edge-02', 'edge-03', 'edge-04']
    ;({ cluster, daemon, dir } = await node.start('kpt-variants-node-controller-', repos))
    const run = await liveApply(cluster, dir, deployForNode(dir))
    applied = { exitCode: run.exitCode, stdout: String(run.stdout), stderr: String(run.stderr) }
    await cluster.api.apply([schemalessCrd('infra.nephio.org', 'WorkloadCluster')])
    await cluster.api.apply(fleetObjects(daemon, threeClusters))
  }, timeout)

  afterAll(() => node.stop(), timeout)

  test(
    '`kpt live apply deploy/` reconciles: two replicas Ready under the service account, restricted, one leading',
    async () => {
      const objects = [
        ...readdirSync(join(repoRoot, 'deploy')).filter((f) => f.endsWith('.yaml')),
        ...readdirSync(join(repoRoot, 'deploy', 'crds')).map((f) => `crds/${f}`),
      ].flatMap((f) => documents(readFileSync(join(repoRoot, 'deploy', f), 'utf8')))
      expect(applied.stdout).toContain(
        `reconcile result: ${objects.length} attempted, ${objects.length} successful, 0 skipped, 0 failed, 0 timed out`,
      )
      expect(applied.exitCode).toBe(0)
      const running = await waitForPods(
        cluster,
        namespace,
        app,
        (found) => found.length === 2 && found.every(isReady),
        'two ready replicas',
      )
      for (const pod of running) {
        expect(pod['spec']['serviceAccountName']).toBe('kpt-variants')
        expect(pod['metadata']['annotations']?.['pod-security.kubernetes.io/enforce'] ?? 'restricted').toBe(
          'restricted',
        )
      }
      const ns = await cluster.api.ok('GET', `/api/v1/namespaces/${namespace}`)
      expect(ns['metadata']['labels']['pod-security.kubernetes.io/enforce']).toBe('restricted')
      await leader()
    },
    timeout,
  )

  test(
    'the leader renders the fleet into draft branches of the git server, and the webhook Service reaches it',
    async () => {
      for (const repo of ['edge-01', 'edge-02', 'edge-03'])
        expect(await draftsOf(repo, (d) => d.length === 1, 'one draft')).toEqual(['drafts/nginx/packagevariant-1'])
      expect(await endpoints('edge-02')).toContain('https://api.us-west1.example.com')
      // Through the API server's service proxy: the Service's one endpoint is the leader's pod.
      const proxy = `/api/v1/namespaces/${namespace}/services/kpt-variants-webhook:http/proxy`
      const ready = await cluster.api.request('GET', `${proxy}/readyz`)
      expect([ready.status, String(ready.body).trim()]).toEqual([200, 'leading'])
      const pushed = await cluster.api.request('POST', `${proxy}/webhook`, '{"ref":"refs/heads/main"}')
      expect(pushed.status).toBe(202)
    },
    timeout,
  )

  test(
    'a new target, a relabel and a deleted PackageVariant each reach git',
    async () => {
      await cluster.api.apply([repositoryObject(daemon, 'edge-04'), workloadCluster('edge-04', 'eu-west1')])
      await draftsOf('edge-04', (d) => d.length === 1, 'the new target draft')
      expect(await endpoints('edge-04')).toContain('https://api.eu-west1.example.com')

      await cluster.api.apply([workloadCluster('edge-02', 'eu-west1')])
      await untilShown('edge-02', 'api.eu-west1', 'the relabel not rendered')

      await cluster.api.apply([packageVariant('extra')])
      await draftsOf('edge-01', (d) => d.some((b) => b.startsWith('drafts/extra/')), 'the PackageVariant draft')
      await cluster.api.delete([packageVariant('extra')])
      // Never published, its draft goes with it.
      expect(
        await draftsOf('edge-01', (d) => !d.some((b) => b.startsWith('drafts/extra/')), 'the draft removed'),
      ).toEqual(['drafts/nginx/packagevariant-1'])
    },
    timeout,
  )

  test(
    'the leader pod deleted, the other replica leads within the lease duration; nothing lost or duplicated',
    async () => {
      const old = await leader()
      const name = old['metadata']['name'] as string
      const before = await lease()
      const deleted = Date.now()
      await cluster.api.ok('DELETE', `/api/v1/namespaces/${namespace}/pods/${name}`)
      // The old leader renews until it has finished the cycle under way, then releases the Lease (no holder): the
      // handover is timed from its last write, which the Lease shows until another replica takes it.
      let after: Json = before
      let lastWrite = Date.parse(before['renewTime'])
      let released = false
      await until(
        async () => {
          after = await lease()
          const holder = after['holderIdentity']
          if (![undefined, '', name].includes(holder)) return true
          lastWrite = Math.max(lastWrite, Date.parse(after['renewTime']))
          released ||= holder === '' || holder === undefined
          return false
        },
        'no new leader',
        leaseDurationMs * 3,
      )
      const acquired = Date.parse(after['acquireTime'])
      const gap = acquired - lastWrite
      console.log(
        `node: the leader's pod deleted, ${after['holderIdentity']} acquired the lease ${acquired - deleted} ms later, ${gap} ms after the old leader's last write (${released ? 'its release' : 'a renewal: no release seen'})`,
      )
      // By the Lease's own record: the new holder acquired it within a lease duration of the old one's last write.
      if (gap > after['leaseDurationSeconds'] * 1000)
        throw new Error(
          `the lease taken ${gap} ms after the old leader's last write (lease duration ${after['leaseDurationSeconds']} s)\n${cluster.podLogs(namespace, name)}`,
        )
      // SIGTERM ends the old leader: its pod goes well within its grace period (120 s), not killed at its end.
      await waitForPods(
        cluster,
        namespace,
        app,
        (found) => !found.some((p) => p['metadata']['name'] === name),
        `${name} still terminating`,
        60_000,
      ).catch((err: Error) => {
        throw new Error(`${err.message}\n${cluster.podLogs(namespace, name)}`)
      })
      await leader()
      await cluster.api.apply([workloadCluster('edge-03', 'us-west1')])
      await untilShown('edge-03', 'api.us-west1', 'the change after the hand-over not rendered')
      for (const repo of ['edge-01', 'edge-02', 'edge-03', 'edge-04'])
        expect(await branches(dir, repo)).toEqual(['drafts/nginx/packagevariant-1'])
      await waitForPods(
        cluster,
        namespace,
        app,
        (found) => found.filter(isReady).length === 2,
        'the replacement replica ready',
      )
    },
    timeout,
  )

  test(
    'the leader container killed: the kubelet restarts it and the fleet converges',
    async () => {
      const old = await leader()
      const container = old['status']['containerStatuses'][0]
      const id = String(container['containerID']).replace(/^containerd:\/\//, '')
      const pid = Number(
        (await cluster.ctr(['tasks', 'ls']))
          .split('\n')
          .find((l) => l.startsWith(id))!
          .split(/\s+/)[1],
      )
      process.kill(pid, 'SIGKILL')
      const [restarted] = await waitForPods(
        cluster,
        namespace,
        app,
        (found) =>
          found.some(
            (p) =>
              p['metadata']['name'] === old['metadata']['name'] &&
              p['status']['containerStatuses'][0]['restartCount'] > container['restartCount'] &&
              isReady(p),
          ),
        'the killed container restarted',
      ).then((found) => found.filter((p) => p['metadata']['name'] === old['metadata']['name']))
      expect(restarted!['status']['containerStatuses'][0]['restartCount']).toBe(container['restartCount'] + 1)
      await leader()
      await cluster.api.apply([workloadCluster('edge-01', 'eu-west1')])
      await untilShown('edge-01', 'api.eu-west1', 'the change after the restart not rendered')
      for (const repo of ['edge-01', 'edge-02', 'edge-03', 'edge-04'])
        expect(await branches(dir, repo)).toEqual(['drafts/nginx/packagevariant-1'])
    },
    timeout,
  )
})
