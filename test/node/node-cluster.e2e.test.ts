/**
 * The test node itself (test/support/node-cluster.ts): it starts from the programs
 * scripts/build-cluster.sh builds, runs a pod of the project's image under the
 * `restricted` Pod Security Standard, with its service account's token reaching the API
 * server through the `kubernetes` Service, and stops leaving nothing behind.
 */
import { leftovers } from '../support/node-host-state.js'
import { NodeCluster } from '../support/node-cluster.js'
import { bridgeName } from '../support/node-cluster.js'
import { nodeSuitesAvailable, startNode } from '../support/node-fleet.js'
import type { Json } from '../support/kube-apiserver.js'
import { orchestratorImage } from '../support/node-images.js'

const timeout = 300_000
const suite = nodeSuitesAvailable() ? describe : describe.skip

/** A pod that asks the API server who it is, from inside, as the restricted standard allows. */
const whoAmI = (namespace: string): Json => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'who-am-i', namespace },
  spec: {
    restartPolicy: 'Never',
    securityContext: { runAsNonRoot: true, runAsUser: 65534, seccompProfile: { type: 'RuntimeDefault' } },
    containers: [
      {
        name: 'ask',
        image: orchestratorImage,
        imagePullPolicy: 'Never',
        command: ['node', '-e', whoAmIProgram],
        terminationMessagePolicy: 'FallbackToLogsOnError',
        securityContext: {
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
        },
      },
    ],
  },
})

/** POSTs a SelfSubjectReview to https://kubernetes.default.svc with the mounted token and CA; prints the user. */
const whoAmIProgram = `
const fs = require('node:fs'), https = require('node:https')
const dir = '/var/run/secrets/kubernetes.io/serviceaccount'
const req = https.request({
  host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT, method: 'POST',
  path: '/apis/authentication.k8s.io/v1/selfsubjectreviews', ca: fs.readFileSync(dir + '/ca.crt'),
  headers: { authorization: 'Bearer ' + fs.readFileSync(dir + '/token', 'utf8'), 'content-type': 'application/json' },
}, (res) => {
  let body = ''
  res.on('data', (c) => (body += c))
  res.on('end', () => { fs.writeFileSync('/dev/termination-log', JSON.parse(body).status.userInfo.username); process.exit(0) })
})
req.end(JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }))
`

suite('a single-node cluster of real Kubernetes programs', () => {
  let cluster: NodeCluster

  beforeAll(async () => {
    cluster = await startNode()
  }, timeout)

  afterAll(async () => {
    await cluster?.stop()
  }, timeout)

  test(
    'a pod of the project image runs under the restricted standard and reaches the API server as its service account',
    async () => {
      const namespace = {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'node-test', labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } },
      }
      await cluster.api.apply([namespace])
      await cluster.waitForServiceAccount('node-test', 'default')
      // The standard is enforced: a pod that may run as root is refused.
      const root = whoAmI('node-test')
      root['metadata']['name'] = 'as-root'
      delete root['spec']['securityContext']
      const refused = await cluster.api.request('POST', '/api/v1/namespaces/node-test/pods', root)
      expect(refused.status).toBe(403)
      expect(String(refused.body.message)).toContain('violates PodSecurity "restricted:latest"')

      await cluster.api.ok('POST', '/api/v1/namespaces/node-test/pods', whoAmI('node-test'))
      const done = await cluster.api.waitFor(
        { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'who-am-i', namespace: 'node-test' } },
        (pod) => ['Succeeded', 'Failed'].includes(pod['status']?.['phase']),
        120_000,
      )
      const terminated = done['status']['containerStatuses'][0]['state']['terminated']
      expect([done['status']['phase'], terminated['message']]).toEqual([
        'Succeeded',
        'system:serviceaccount:node-test:default',
      ])
    },
    timeout,
  )

  test(
    'stopped, it leaves no process, mount, network namespace, bridge, iptables chain or cgroup',
    async () => {
      const { dir, before } = cluster
      await cluster.stop()
      expect(await leftovers(dir, before, bridgeName)).toEqual([])
      cluster = undefined as unknown as NodeCluster
    },
    timeout,
  )
})
