/**
 * deploy/'s RBAC proven minimal from inside pods on a real node: the render (the CronJob's
 * `render --cluster`) and the controller run as pods under a service account bound to deploy/'s
 * roles, and again, once per rule, under one bound to the same roles without that rule: each
 * such pod fails with the API server's "forbidden" naming the rule's resource, so every rule is
 * needed. A write neither ever needs (a Secret) is refused to the package's service account.
 * All pods run at once: each case has its own service account, roles and (for the controller) Lease.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { repoRoot } from '../e2e/runner.js'
import { threeClusters } from '../support/fleet.js'
import type { GitDaemon } from '../support/git-daemon.js'
import type { Json } from '../support/kube-apiserver.js'
import { until } from '../support/node-cluster.js'
import type { NodeCluster } from '../support/node-cluster.js'
import { documents, fleetObjects, fleetRepositories, nodeSuitesAvailable, startNode } from '../support/node-fleet.js'
import { orchestratorImage } from '../support/node-images.js'
import { schemalessCrd } from '../support/schemaless-crd.js'
import { readdirSync } from 'node:fs'

const timeout = 600_000
const namespace = 'kpt-variants'
const suite = nodeSuitesAvailable() ? describe : describe.skip
const manifests = (file: string) => documents(readFileSync(join(repoRoot, 'deploy', file), 'utf8'))

interface Case {
  id: string
  program: 'render' | 'controller'
  /** The rule left out: `role#index`, none for the baseline. */
  without?: { role: string; index: number; rule: Json }
}

/** The roles bound to deploy/'s service account, each with what binds it. */
function boundRoles(): { role: Json; program: 'render' | 'controller' }[] {
  const found: { role: Json; program: 'render' | 'controller' }[] = []
  for (const [file, program] of [
    ['rbac.yaml', 'render'],
    ['controller-rbac.yaml', 'controller'],
  ] as const) {
    const objects = manifests(file)
    const bound = new Set(
      objects
        .filter((o) => o['kind'].endsWith('Binding') && o['subjects'].some((s: Json) => s['name'] === 'kpt-variants'))
        .map((o) => o['roleRef']['name']),
    )
    for (const role of objects.filter(
      (o) => ['ClusterRole', 'Role'].includes(o['kind']) && bound.has(o['metadata']['name']),
    ))
      found.push({ role, program })
  }
  return found
}

const roles = boundRoles()
const cases: Case[] = [
  { id: 'render-all', program: 'render' },
  { id: 'controller-all', program: 'controller' },
  ...roles.flatMap(({ role, program }) =>
    (role['rules'] as Json[]).map((rule, index) => ({
      id: `${program}-${roles.indexOf(roles.find((r) => r.role === role)!)}-${index}`,
      program,
      without: { role: role['metadata']['name'] as string, index, rule },
    })),
  ),
]

/** The roles, bindings and service account of a case; the controller's Lease is the case's own. */
function caseObjects(c: Case): Json[] {
  const objects: Json[] = [{ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: c.id, namespace } }]
  for (const { role } of roles) {
    const name = `${role['metadata']['name']}-${c.id}`
    const left = c.without && c.without.role === role['metadata']['name'] ? c.without.index : -1
    const rules = (role['rules'] as Json[])
      .filter((_, i) => i !== left)
      .map((rule) =>
        rule['resourceNames']?.includes('kpt-variants-controller')
          ? { ...rule, resourceNames: [`lease-${c.id}`] }
          : rule,
      )
    const namespaced = role['kind'] === 'Role'
    objects.push({ ...role, metadata: { name, ...(namespaced ? { namespace } : {}) }, rules })
    objects.push({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: namespaced ? 'RoleBinding' : 'ClusterRoleBinding',
      metadata: { name, ...(namespaced ? { namespace } : {}) },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: role['kind'], name },
      subjects: [{ kind: 'ServiceAccount', name: c.id, namespace }],
    })
  }
  return objects
}

const restricted = {
  securityContext: {
    runAsNonRoot: true,
    runAsUser: 65534,
    runAsGroup: 65534,
    seccompProfile: { type: 'RuntimeDefault' },
  },
  container: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
}

function pod(name: string, serviceAccount: string, args: string[], command?: string[]): Json {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels: { 'rbac-case': name } },
    spec: {
      serviceAccountName: serviceAccount,
      restartPolicy: 'Never',
      securityContext: restricted.securityContext,
      containers: [
        {
          name: 'main',
          image: orchestratorImage,
          imagePullPolicy: 'Never',
          ...(command ? { command } : {}),
          args,
          env: [
            { name: 'HOME', value: '/tmp' },
            { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          ],
          resources: { requests: { cpu: '10m', memory: '64Mi' } },
          terminationMessagePolicy: 'FallbackToLogsOnError',
          securityContext: restricted.container,
          volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
        },
      ],
      volumes: [{ name: 'tmp', emptyDir: {} }],
    },
  }
}

const casePod = (c: Case) =>
  c.program === 'render'
    ? pod(c.id, c.id, ['render', '--cluster', '--out', '/tmp/out', '--no-progress'])
    : pod(c.id, c.id, [
        'controller',
        '--out',
        '/tmp/out',
        '--lease',
        `${namespace}/lease-${c.id}`,
        '--identity',
        '$(POD_NAME)',
        '--label-pod',
        `${namespace}/$(POD_NAME)`,
        '--poll',
        '0',
      ])

/** POSTs a Secret with the pod's token and writes the answer's status code as its termination message. */
const writeSecret = `
const fs = require('node:fs'), https = require('node:https')
const dir = '/var/run/secrets/kubernetes.io/serviceaccount'
const req = https.request({
  host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT, method: 'POST',
  path: '/api/v1/namespaces/${namespace}/secrets', ca: fs.readFileSync(dir + '/ca.crt'),
  headers: { authorization: 'Bearer ' + fs.readFileSync(dir + '/token', 'utf8'), 'content-type': 'application/json' },
}, (res) => { res.resume(); res.on('end', () => { fs.writeFileSync('/dev/termination-log', String(res.statusCode)); process.exit(0) }) })
req.end(JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'planted' }, stringData: { a: 'b' } }))
`

suite("deploy/'s RBAC from inside pods on a real node", () => {
  let cluster: NodeCluster
  let daemon: GitDaemon
  let dir: string

  beforeAll(async () => {
    cluster = await startNode()
    dir = mkdtempSync(join(tmpdir(), 'kpt-variants-node-rbac-'))
    daemon = await fleetRepositories(cluster, dir, ['edge-01', 'edge-02', 'edge-03'])
    const crds = readdirSync(join(repoRoot, 'deploy', 'crds')).flatMap((f) => manifests(`crds/${f}`))
    await cluster.api.apply([...manifests('namespace.yaml'), ...manifests('rbac.yaml'), ...crds])
    await cluster.api.apply([schemalessCrd('infra.nephio.org', 'WorkloadCluster')])
    await cluster.api.apply(fleetObjects(daemon, threeClusters))
    await cluster.api.apply(cases.flatMap(caseObjects))
    for (const c of cases) await cluster.waitForServiceAccount(namespace, c.id)
    await cluster.waitForServiceAccount(namespace, 'kpt-variants')
  }, timeout)

  afterAll(async () => {
    await cluster?.stop()
    await daemon?.stop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  }, timeout)

  test(
    'each rule is needed: without it the render or the controller fails, forbidden, naming its resource',
    async () => {
      expect(cases.filter((c) => c.without).length).toBe(roles.reduce((n, r) => n + r.role['rules'].length, 0))
      for (const c of cases) await cluster.api.ok('POST', `/api/v1/namespaces/${namespace}/pods`, casePod(c))
      await cluster.api.ok(
        'POST',
        `/api/v1/namespaces/${namespace}/pods`,
        pod('write-secret', 'kpt-variants', [], ['node', '-e', writeSecret]),
      )

      /** What a case's pod came to: its exit and message once it ended, else its log once it says enough. */
      const outcome = async (c: Case): Promise<{ exitCode?: number; text: string }> => {
        let result: { exitCode?: number; text: string } | undefined
        await until(
          async () => {
            const stored = await cluster.api.ok('GET', `/api/v1/namespaces/${namespace}/pods/${c.id}`)
            const terminated = stored['status']?.['containerStatuses']?.[0]?.['state']?.['terminated']
            if (terminated) result = { exitCode: terminated['exitCode'], text: terminated['message'] ?? '' }
            const log = cluster.podLogs(namespace, `${c.id}_`, 200)
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
      const outcomes = await Promise.all(cases.map(async (c) => [c, await outcome(c)] as const))
      const summary = outcomes.map(([c, o]) => {
        const forbidden = /forbidden/i.test(o.text)
        const named = c.without
          ? (c.without.rule['resources'] as string[]).some((r) => o.text.includes(r.split('/')[0]!))
          : true
        const failed = o.exitCode !== undefined ? o.exitCode !== 0 : forbidden
        return `${c.id} ${c.without ? `without ${c.without.role}#${c.without.index}` : 'with every rule'}: ${
          c.without
            ? failed && forbidden && named
              ? 'forbidden, named'
              : `NOT refused: ${o.text.slice(-400)}`
            : failed
              ? `FAILED: ${o.text.slice(-400)}`
              : 'ok'
        }`
      })
      expect(summary).toEqual(
        cases.map(
          (c) =>
            `${c.id} ${c.without ? `without ${c.without.role}#${c.without.index}` : 'with every rule'}: ${c.without ? 'forbidden, named' : 'ok'}`,
        ),
      )
    },
    timeout,
  )

  test(
    'a write the package never needs (a Secret) is refused to its service account',
    async () => {
      const done = await cluster.api.waitFor(
        { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'write-secret', namespace } },
        (p) => ['Succeeded', 'Failed'].includes(p['status']?.['phase']),
        120_000,
      )
      expect(done['status']['containerStatuses'][0]['state']['terminated']['message']).toBe('403')
    },
    timeout,
  )
})
