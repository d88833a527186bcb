/**
 * deploy/'s RBAC, case by case, for pods on a test node (test/node/node-cluster.e2e.test.ts): the
 * render (the CronJob's `render --cluster`) and the controller under a service account bound to
 * deploy/'s roles, and, once per rule, under one bound to the same roles without that rule. Each
 * case has its own service account, roles and (for the controller) Lease, so all run at once.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { repoRoot } from '../e2e/runner.js'
import type { Json } from './kube-client.js'
import { documents } from './node-fleet.js'
import { orchestratorImage } from './node-images.js'

export const namespace = 'kpt-variants'
export const manifests = (file: string) => documents(readFileSync(join(repoRoot, 'deploy', file), 'utf8'))

export interface Case {
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

export const roles = boundRoles()
export const cases: Case[] = [
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
export function caseObjects(c: Case): Json[] {
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

export function pod(name: string, serviceAccount: string, args: string[], command?: string[]): Json {
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

export const casePod = (c: Case) =>
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

/**
 * A Node program for a pod: one request to the API server (through the `kubernetes` Service, with
 * the pod's service-account token and CA); it writes `report` of the answer (the status code, or
 * a field of the body's JSON) as the pod's termination message.
 */
export function inPodRequest(method: string, path: string, body: unknown, report: 'status' | string[]): string {
  return `
const fs = require('node:fs'), https = require('node:https')
const dir = '/var/run/secrets/kubernetes.io/serviceaccount'
const req = https.request({
  host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT, method: ${JSON.stringify(method)},
  path: ${JSON.stringify(path)}, ca: fs.readFileSync(dir + '/ca.crt'),
  headers: { authorization: 'Bearer ' + fs.readFileSync(dir + '/token', 'utf8'), 'content-type': 'application/json' },
}, (res) => {
  let text = ''
  res.on('data', (c) => (text += c))
  res.on('end', () => {
    const report = ${JSON.stringify(report)}
    const answer = report === 'status' ? res.statusCode : report.reduce((o, k) => o[k], JSON.parse(text))
    fs.writeFileSync('/dev/termination-log', String(answer))
    process.exit(0)
  })
})
req.end(${JSON.stringify(JSON.stringify(body))})
`
}
