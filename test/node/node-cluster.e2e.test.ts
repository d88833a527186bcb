/**
 * The test node itself (test/support/node-cluster.ts) and deploy/'s RBAC from inside its pods.
 * The node starts from the programs scripts/build-cluster.sh builds and runs pods of the project's
 * image under the `restricted` Pod Security Standard, reaching the API server as their service
 * account through the `kubernetes` Service. deploy/'s RBAC is minimal (test/support/node-rbac.ts):
 * the render and the controller run with every rule, and without each rule in turn, when they
 * fail with the server's "forbidden" naming the rule's resource; a write neither needs (a Secret)
 * is refused. Stopped, the node leaves nothing behind.
 */
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { repoRoot } from '../e2e/runner.js'
import { threeClusters } from '../support/fleet.js'
import type { GitDaemon } from '../support/git-daemon.js'
import type { Json } from '../support/kube-client.js'
import { bridgeName, until } from '../support/node-cluster.js'
import type { NodeCluster } from '../support/node-cluster.js'
import { fleetObjects, NodeFleet } from '../support/node-fleet.js'
import { leftovers } from '../support/node-host-state.js'
import { caseObjects, casePod, cases, inPodRequest, manifests, namespace, pod, roles } from '../support/node-rbac.js'
import type { Case } from '../support/node-rbac.js'
import { describeOnNode } from '../support/node-suite.js'
import { schemalessCrd } from '../support/schemaless-crd.js'

const timeout = 600_000
const suite = describeOnNode()

/** A pod's end: its phase and its container's termination message. */
async function ended(cluster: NodeCluster, name: string): Promise<[string, string]> {
  const done = await cluster.api.waitFor(
    { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace } },
    (p) => ['Succeeded', 'Failed'].includes(p['status']?.['phase']),
    120_000,
  )
  return [done['status']['phase'], done['status']['containerStatuses'][0]['state']['terminated']['message']]
}

suite('a single-node cluster of real Kubernetes programs, and deploy/ RBAC from inside its pods', () => {
  let cluster: NodeCluster | undefined
  let daemon: GitDaemon
  const node = new NodeFleet()

  beforeAll(async () => {
    ;({ cluster, daemon } = await node.start('kpt-variants-node-rbac-', ['edge-01', 'edge-02', 'edge-03']))
    const crds = readdirSync(join(repoRoot, 'deploy', 'crds')).flatMap((f) => manifests(`crds/${f}`))
    await cluster.api.apply([...manifests('namespace.yaml'), ...manifests('rbac.yaml'), ...crds])
    await cluster.api.apply([schemalessCrd('infra.nephio.org', 'WorkloadCluster')])
    await cluster.api.apply(fleetObjects(daemon, threeClusters))
    await cluster.api.apply(cases.flatMap(caseObjects))
    for (const c of cases) await cluster.waitForServiceAccount(namespace, c.id)
    await cluster.waitForServiceAccount(namespace, 'kpt-variants')
  }, timeout)

  afterAll(() => node.stop(), timeout)

  test(
    "a pod of the project's image runs under the restricted standard and reaches the API server as its service account",
    async () => {
      const review = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }
      const program = inPodRequest('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', review, [
        'status',
        'userInfo',
        'username',
      ])
      const whoAmI = pod('who-am-i', 'kpt-variants', [], ['node', '-e', program])
      // The namespace enforces the standard: the same pod allowed to run as root is refused.
      const root: Json = {
        ...whoAmI,
        metadata: { ...whoAmI['metadata'], name: 'as-root' },
        spec: { ...whoAmI['spec'], securityContext: {} },
      }
      const refused = await cluster!.api.request('POST', `/api/v1/namespaces/${namespace}/pods`, root)
      expect(refused.status).toBe(403)
      expect(String(refused.body.message)).toContain('violates PodSecurity "restricted:latest"')
      await cluster!.api.ok('POST', `/api/v1/namespaces/${namespace}/pods`, whoAmI)
      expect(await ended(cluster!, 'who-am-i')).toEqual([
        'Succeeded',
        `system:serviceaccount:${namespace}:kpt-variants`,
      ])
    },
    timeout,
  )

  test(
    'each rule is needed: without it the render or the controller fails, forbidden, naming its resource',
    async () => {
      const api = cluster!.api
      expect(cases.filter((c) => c.without).length).toBe(roles.reduce((n, r) => n + r.role['rules'].length, 0))
      for (const c of cases) await api.ok('POST', `/api/v1/namespaces/${namespace}/pods`, casePod(c))

      /** What a case's pod came to: its exit and message once it ended, else its log once it says enough. */
      const outcome = async (c: Case): Promise<{ exitCode?: number; text: string }> => {
        let result: { exitCode?: number; text: string } | undefined
        await until(
          async () => {
            const stored = await api.ok('GET', `/api/v1/namespaces/${namespace}/pods/${c.id}`)
            const terminated = stored['status']?.['containerStatuses']?.[0]?.['state']?.['terminated']
            if (terminated) result = { exitCode: terminated['exitCode'], text: terminated['message'] ?? '' }
            const log = cluster!.podLogs(namespace, `${c.id}_`, 200)
            // A controller runs on: it has said enough once a cycle rendered or a request was forbidden.
            if (!result && c.program === 'controller' && /forbidden|cycle 1 \(start\): all [1-9]/.test(log))
              result = { text: log }
            return result !== undefined
          },
          `${c.id}: no outcome`,
          240_000,
        )
        return result!
      }
      const verdict = (c: Case, o: { exitCode?: number; text: string }): string => {
        const forbidden = /forbidden/i.test(o.text)
        const failed = o.exitCode !== undefined ? o.exitCode !== 0 : forbidden
        if (!c.without) return failed ? `FAILED: ${o.text.slice(-400)}` : 'ok'
        const named = (c.without.rule['resources'] as string[]).some((r) => o.text.includes(r.split('/')[0]!))
        return failed && forbidden && named ? 'forbidden, named' : `NOT refused: ${o.text.slice(-400)}`
      }
      const label = (c: Case) =>
        `${c.id} ${c.without ? `without ${c.without.role}#${c.without.index}` : 'with every rule'}`
      const outcomes = await Promise.all(cases.map(async (c) => `${label(c)}: ${verdict(c, await outcome(c))}`))
      expect(outcomes).toEqual(cases.map((c) => `${label(c)}: ${c.without ? 'forbidden, named' : 'ok'}`))
    },
    timeout,
  )

  test(
    'a write the package never needs (a Secret) is refused to its service account',
    async () => {
      const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'planted' }, stringData: { a: 'b' } }
      const program = inPodRequest('POST', `/api/v1/namespaces/${namespace}/secrets`, secret, 'status')
      const json: Json = pod('write-secret', 'kpt-variants', [], ['node', '-e', program])
      await cluster!.api.ok('POST', `/api/v1/namespaces/${namespace}/pods`, json)
      expect(await ended(cluster!, 'write-secret')).toEqual(['Succeeded', '403'])
    },
    timeout,
  )

  test(
    'stopped, it leaves no process, mount, network namespace, bridge, iptables chain or cgroup',
    async () => {
      const { dir: nodeDir, before } = cluster!
      await cluster!.stop()
      // Stopped here: not again after the tests.
      cluster = node.cluster = undefined
      expect(await leftovers(nodeDir, before, bridgeName)).toEqual([])
    },
    timeout,
  )
})
