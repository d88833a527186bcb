/**
 * `kpt-variants render --cluster` end to end, as a real process: the fleet is
 * served by a Kubernetes API server this test runs (test/support/fake-apiserver.ts)
 * and reached through a kubeconfig by the real @kubernetes/client-node. The
 * same objects written as a fleet directory render byte for byte the same
 * packages; status comes back through the status subresource.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import { parseAllDocuments } from 'yaml'
import { gitIdentity, repoRoot } from './e2e/runner.js'
import { FakeApiServer } from './support/fake-apiserver.js'
import type { Json } from './support/fake-apiserver.js'
import { createBlueprints, fleetFiles, threeClusters } from './support/fleet.js'
import { git, readTreeWithModes, writeTree } from './support/git-repo.js'
import { source } from './support/source.js'

const bin = join(repoRoot, 'bin', 'kpt-variants')
const timeout = 60_000

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

let dir: string
let server: FakeApiServer

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kpt-variants-cluster-e2e-'))
  await createBlueprints(join(dir, 'repos', 'blueprints'))
  const files = fleetFiles({
    clusters: [...threeClusters, { name: 'core-01', region: 'us-east1', siteType: 'core' }],
    extra: {
      // A standalone variant, one whose upstream revision does not exist, and one in another namespace.
      'variants.yaml': [variant('standalone', 'default', 2), variant('missing', 'default', 7), variant('lonely', 'other', 1)].join('---\n'),
    },
  })
  // Absolute repository paths: a directory resolves relative ones against itself, a cluster against the working directory.
  for (const [name, text] of Object.entries(files)) files[name] = text.replaceAll('repo: ../repos/', `repo: ${dir}/repos/`)
  writeTree(join(dir, 'fleet'), files)
  // The same objects, served; each PackageVariant with a status the snapshot must leave out.
  const objects = Object.values(files).flatMap((text) => parseAllDocuments(text).map((d) => d.toJS() as Json))
  for (const o of objects)
    if (o['kind'] === 'PackageVariant') o['status'] = { conditions: [{ type: 'Ready', status: 'Unknown', reason: 'Pending', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' }] }
  server = await new FakeApiServer(objects).start()
  server.writeKubeconfig(join(dir, 'kubeconfig'))
}, timeout)

afterEach(async () => {
  await server.stop()
  rmSync(dir, { recursive: true, force: true })
})

async function render(...args: string[]): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const run = await execa('node', [bin, 'render', ...args], {
    cwd: dir,
    env: { ...process.env, ...gitIdentity, XDG_CACHE_HOME: join(dir, 'cache'), KUBECONFIG: join(dir, 'kubeconfig') },
    reject: false,
    stdin: 'ignore',
    stripFinalNewline: false,
  })
  return { exitCode: run.exitCode ?? -1, stdout: String(run.stdout), stderr: String(run.stderr) }
}

const conditions = (o: Json | undefined) => (o?.['status']?.['conditions'] ?? []).map((c: Json) => `${c['type']}=${c['status']} ${c['reason']}: ${c['message']}`)
const variants = (stdout: string) => (JSON.parse(stdout) as { variants: Json[] }).variants.map((v) => `${v['subject']} ${v['status']} ${v['path'] ?? ''}`)

test(
  'the fleet served by the API server renders byte for byte as the same objects in a directory; status is written back',
  async () => {
    const fromDir = await render('fleet', '--out', 'from-dir', '--json')
    const fromCluster = await render('--cluster', '--out', 'from-cluster', '--json')
    expect(fromCluster.exitCode).toBe(1)
    expect(fromDir.exitCode).toBe(1)
    const files = readTreeWithModes(join(dir, 'from-cluster'))
    expect([...files.keys()].filter((f) => f.endsWith('/Kptfile')).sort()).toEqual(['edge-01/nginx/Kptfile', 'edge-01/standalone/Kptfile', 'edge-02/nginx/Kptfile', 'edge-03/nginx/Kptfile'])
    expect(files).toEqual(readTreeWithModes(join(dir, 'from-dir')))
    expect(variants(fromCluster.stdout)).toEqual(variants(fromDir.stdout))
    expect(fromCluster.stderr).toContain(`status: 4 of 4 changed PackageVariant(s) and PackageVariantSet(s) written to ${server.url}`)

    // The status subresource, as merge patches.
    const patches = server.requests.filter((r) => r.method === 'PATCH')
    expect(patches.map((r) => r.path).sort()).toEqual([
      '/apis/config.porch.kpt.dev/v1alpha1/namespaces/default/packagevariants/missing/status',
      '/apis/config.porch.kpt.dev/v1alpha1/namespaces/default/packagevariants/standalone/status',
      '/apis/config.porch.kpt.dev/v1alpha1/namespaces/other/packagevariants/lonely/status',
      '/apis/config.porch.kpt.dev/v1alpha2/namespaces/default/packagevariantsets/nginx/status',
    ])
    expect(patches.every((r) => r.contentType === 'application/merge-patch+json')).toBe(true)
    const standalone = server.object('PackageVariant', 'default', 'standalone')!
    expect(conditions(standalone)).toEqual(['Ready=True NoErrors: successfully ensured downstream package variant', 'Stalled=False Valid: all validation checks passed'])
    expect(standalone['status']['downstreamTargets']).toEqual([{ name: 'edge-01/standalone' }])
    expect(conditions(server.object('PackageVariant', 'default', 'missing'))).toEqual([
      'Ready=False Error: invalid packagevariant object',
      expect.stringMatching(/^Stalled=True ValidationError: could not find upstream package revision .*Revision:7/),
    ])
    expect(conditions(server.object('PackageVariantSet', 'default', 'nginx'))).toEqual([
      'Stalled=False Valid: all validation checks passed',
      'Ready=True Reconciled: package variants successfully reconciled',
    ])

    // Again: every package unchanged, no status changes, nothing written.
    server.requests.length = 0
    const again = await render('--cluster', '--out', 'from-cluster', '--json')
    expect(variants(again.stdout).filter((v) => v.includes(' created ') || v.includes(' updated '))).toEqual([])
    expect(server.requests.filter((r) => r.method === 'PATCH')).toEqual([])
    expect(again.stderr).toContain('status: 0 of 0 changed')
  },
  timeout,
)

test(
  '--namespace reads one namespace; --dry-run writes no status; a refused status write is reported and fails the run',
  async () => {
    const dry = await render('--cluster', '-n', 'other', '--out', 'out', '--dry-run', '--json')
    expect(variants(dry.stdout)).toEqual(['PackageVariant other/lonely failed edge-01/lonely'])
    const lists = server.requests.filter((r) => /\/(repositories|packagevariants|packagevariantsets|workloadclusters|configmaps)$/.test(r.path))
    expect(lists.length).toBeGreaterThan(0)
    expect(lists.every((r) => r.path.includes('/namespaces/other/'))).toBe(true)
    expect(server.requests.filter((r) => r.method === 'PATCH')).toEqual([])

    server.refuse = (r) => (r.method === 'PATCH' && r.path.endsWith('/standalone/status') ? 403 : undefined)
    const run = await render('--cluster', '--namespace', 'default', '--out', 'out')
    expect(run.exitCode).toBe(1)
    expect(run.stderr).toContain(
      `kpt-variants: PackageVariant default/standalone: status not written: cannot patch /apis/config.porch.kpt.dev/v1alpha1/namespaces/default/packagevariants/standalone/status on ${server.url}: forbidden: `,
    )
    expect(readTreeWithModes(join(dir, 'out')).has('edge-01/standalone/Kptfile')).toBe(true)
    expect(conditions(server.object('PackageVariantSet', 'default', 'nginx'))).toContain('Ready=True Reconciled: package variants successfully reconciled')
  },
  timeout,
)

test(
  '--git: drafts in the downstream repositories; a relative repository path is relative to the working directory',
  async () => {
    for (const name of ['edge-01', 'edge-02', 'edge-03']) await git(dir, 'init', '-q', '--bare', '-b', 'main', `repos/${name}.git`)
    for (const name of ['blueprints', 'edge-01', 'edge-02', 'edge-03']) server.object('Repository', 'default', name)!['spec']['git']['repo'] = `repos/${name}`
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
    server.refuse = (r) => (r.method === 'GET' && r.path.endsWith('/packagevariantsets') ? 403 : undefined)
    const forbidden = await render('--cluster', '--git')
    expect(forbidden.exitCode).toBe(2)
    expect(forbidden.stderr).toBe(
      `kpt-variants: cannot list packagevariantsets.config.porch.kpt.dev in all namespaces on ${server.url}: forbidden: ` +
        '/apis/config.porch.kpt.dev/v1alpha2/packagevariantsets is refused (403): User "tester" cannot list it\n',
    )
    const url = server.url
    await server.stop()
    const unreachable = await render('--cluster', '--out', 'out')
    expect(unreachable.exitCode).toBe(2)
    expect(unreachable.stderr).toBe(`kpt-variants: cannot reach the Kubernetes API server ${url} (to discover the resources of config.porch.kpt.dev/v1alpha1): ECONNREFUSED\n`)
    const none = await render('--cluster', '--kubeconfig', 'nowhere.yaml', '--out', 'out')
    expect(none.exitCode).toBe(2)
    expect(none.stderr).toBe('kpt-variants: kubeconfig nowhere.yaml does not exist\n')
    const both = await render('fleet', '--cluster', '--out', 'out')
    expect(both.stderr).toBe('kpt-variants: give either a FLEET directory or --cluster, not both\n')
  },
  timeout,
)
