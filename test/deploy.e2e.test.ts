/**
 * The deployable package, deploy/: kpt renders it, and the CronJobs' own
 * arguments, run against an API server that enforces deploy/rbac.yaml (every
 * request a rule does not allow is refused, 403), render the fleet and write
 * its status; every rule is used, so the roles grant nothing the orchestrator
 * does not need. The sharded CronJob's shards together render what the single
 * one does.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import { parseAllDocuments } from 'yaml'
import { gitIdentity, repoRoot } from './e2e/runner.js'
import { defaultKinds, FakeApiServer } from './support/fake-apiserver.js'
import type { Json, Recorded } from './support/fake-apiserver.js'
import { createBlueprints, fleetFiles, threeClusters } from './support/fleet.js'
import { git } from './support/git-repo.js'
import { source } from './support/source.js'

const deploy = join(repoRoot, 'deploy')
const bin = join(repoRoot, 'bin', 'kpt-variants')
const timeout = 120_000

const manifests = (file: string) => parseAllDocuments(readFileSync(join(deploy, file), 'utf8')).map((d) => d.toJS() as Json)

interface Rule {
  apiGroups: string[]
  resources: string[]
  verbs: string[]
}
// The roles bound to the render's ServiceAccount (rbac.yaml also has a role for people who edit rollouts).
const bound = new Set(
  manifests('rbac.yaml')
    .filter((o) => o['kind'] === 'ClusterRoleBinding' && (o['subjects'] as Json[]).some((s) => s['name'] === 'kpt-variants'))
    .map((o) => o['roleRef']['name'] as string),
)
const rules: Rule[] = manifests('rbac.yaml')
  .filter((o) => o['kind'] === 'ClusterRole' && bound.has(o['metadata']['name']))
  .flatMap((o) => o['rules'] as Rule[])

/** What a request asks of RBAC: discovery (always allowed), or a verb on a group's resource. */
function access(request: Recorded): { group: string; resource: string; verb: string } | 'discovery' {
  const parts = request.path.split('/').filter(Boolean)
  const [group, rest] = parts[0] === 'api' ? ['', parts.slice(2)] : [parts[1]!, parts.slice(3)]
  if (rest.length === 0) return 'discovery'
  const path = rest[0] === 'namespaces' && rest.length > 2 ? rest.slice(2) : rest
  if (request.method === 'PATCH' && path[2] === 'status') return { group, resource: `${path[0]}/status`, verb: 'patch' }
  return { group, resource: path[0]!, verb: request.method === 'GET' && path.length === 1 ? 'list' : request.method.toLowerCase() }
}

const allows = (rule: Rule, a: { group: string; resource: string; verb: string }) => rule.apiGroups.includes(a.group) && rule.resources.includes(a.resource) && rule.verbs.includes(a.verb)

/** The container's arguments, with its cache in the test's directory and $(SHARD) set. */
function cronJobArgs(file: string, cache: string, shard?: number): string[] {
  const container = manifests(file)[0]!['spec']['jobTemplate']['spec']['template']['spec']['containers'][0] as { args: string[] }
  return container.args.map((arg) => (arg === '/var/cache/kpt-variants' ? cache : arg.replace('$(SHARD)', String(shard))))
}

/** What a render of the whole fleet reports. */
const fleet = [
  'PackageVariant default/nginx-edge-01-nginx created',
  'PackageVariant default/standalone created',
  'PackageVariant default/nginx-edge-02-nginx created',
  'PackageVariant default/nginx-edge-03-nginx created',
]

let dir: string
let server: FakeApiServer

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kpt-variants-deploy-e2e-'))
  await createBlueprints(join(dir, 'repos', 'blueprints'))
  const standalone = source`
    apiVersion: config.porch.kpt.dev/v1alpha1
    kind: PackageVariant
    metadata: {name: standalone, namespace: default}
    spec:
      upstream: {repo: blueprints, package: nginx, revision: 2}
      downstream: {repo: edge-01, package: standalone}
  `
  const files = fleetFiles({ clusters: threeClusters, extra: { 'variants.yaml': standalone } })
  const objects = Object.values(files).flatMap((text) => parseAllDocuments(text).map((d) => d.toJS() as Json))
  for (const o of objects) if (o['kind'] === 'Repository') o['spec']['git']['repo'] = o['spec']['git']['repo'].replace('../repos/', 'repos/')
  for (const name of ['edge-01', 'edge-02', 'edge-03']) await git(dir, 'init', '-q', '--bare', '-b', 'main', `repos/${name}.git`)
  const catalogs = ['PackageCatalog', 'InstalledPackage', 'ClusterAPIs', 'Rollout'].map((kind) => ({
    group: 'kpt-variants.dev',
    version: 'v1alpha1',
    kind,
    resource: kind.toLowerCase() + (kind.endsWith('s') ? '' : 's'),
    namespaced: true,
  }))
  server = await new FakeApiServer(objects, [...defaultKinds, ...catalogs]).start()
  server.refuse = (request) => {
    const a = access(request)
    return a === 'discovery' || rules.some((rule) => allows(rule, a)) ? undefined : 403
  }
  server.writeKubeconfig(join(dir, 'kubeconfig'))
}, timeout)

afterEach(async () => {
  await server.stop()
  rmSync(dir, { recursive: true, force: true })
})

async function run(args: string[]): Promise<{ exitCode: number; stderr: string; variants: string[] }> {
  const result = await execa('node', [bin, ...args, '--json'], { cwd: dir, env: { ...process.env, ...gitIdentity, KUBECONFIG: join(dir, 'kubeconfig') }, reject: false, stdin: 'ignore' })
  const report = JSON.parse(String(result.stdout) || '{"variants":[]}') as { variants: Json[] }
  return { exitCode: result.exitCode ?? -1, stderr: String(result.stderr), variants: report.variants.map((v) => `${v['subject']} ${v['status']}`) }
}

test(
  'kpt renders the package, changing nothing',
  async () => {
    const copy = join(dir, 'deploy')
    cpSync(deploy, copy, { recursive: true })
    const render = await execa('kpt', ['fn', 'render', copy], { reject: false })
    expect(render.exitCode).toBe(0)
    for (const file of ['Kptfile', 'namespace.yaml', 'rbac.yaml', 'render-cronjob.yaml', 'render-sharded-cronjob.yaml']) {
      expect(readFileSync(join(copy, file), 'utf8')).toBe(readFileSync(join(deploy, file), 'utf8'))
    }
  },
  timeout,
)

test(
  "the CronJob's render needs exactly what deploy/rbac.yaml grants",
  async () => {
    const result = await run(cronJobArgs('render-cronjob.yaml', join(dir, 'cache')))
    expect(result.stderr).not.toMatch(/forbidden|refused|cannot/)
    expect(result.exitCode).toBe(0)
    expect(result.variants).toEqual(fleet)
    expect(server.requests.filter((r) => r.method === 'PATCH').length).toBeGreaterThan(0)
    // Least privilege: every resource of every rule was asked for.
    const asked = server.requests.map(access).filter((a) => a !== 'discovery')
    for (const rule of rules)
      for (const resource of rule.resources) expect([rule.apiGroups, resource, asked.some((a) => allows({ ...rule, resources: [resource] }, a))]).toEqual([rule.apiGroups, resource, true])
  },
  timeout,
)

test(
  "the sharded CronJob's four shards render the fleet between them",
  async () => {
    const rendered: string[] = []
    for (let shard = 0; shard < 4; shard++) {
      const result = await run(cronJobArgs('render-sharded-cronjob.yaml', join(dir, `cache-${shard}`), shard))
      expect(result.exitCode).toBe(0)
      rendered.push(...result.variants)
    }
    expect(rendered.sort()).toEqual([...fleet].sort())
  },
  timeout,
)
