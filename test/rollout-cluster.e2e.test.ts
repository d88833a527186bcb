/**
 * Rollouts with `--cluster`, as real processes against an API server this
 * test runs (test/support/fake-apiserver.ts): `render --cluster --git
 * --publish` reads the Rollout and its targets' status from the cluster, and
 * `kpt-variants rollout pause|approve --cluster` patch the object (approvals
 * through the status subresource, guarded by the resourceVersion read).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseValue } from '../functions/krm/yaml/index.js'
import { defaultKinds, FakeApiServer } from './support/fake-apiserver.js'
import type { Json } from './support/fake-apiserver.js'
import { createBlueprints, fleetFiles, threeClusters } from './support/fleet.js'
import { git } from './support/git-repo.js'
import { runCli } from './support/cli-run.js'
import type { Run } from './support/cli-run.js'

const timeout = 60_000

let dir: string
let server: FakeApiServer

const rollout: Json = {
  apiVersion: 'kpt-variants.dev/v1alpha1',
  kind: 'Rollout',
  metadata: { name: 'edge-monitor', namespace: 'default' },
  spec: {
    packageVariantSet: 'nginx',
    steps: [{ name: 'canary', targets: { matchLabels: { region: 'us-east1' } } }, { name: 'rest' }],
    gates: { health: { condition: 'Ready' }, approval: 'manual' },
  },
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kpt-variants-rollout-cluster-e2e-'))
  await createBlueprints(join(dir, 'repos', 'blueprints'))
  for (const c of threeClusters) await git(dir, 'init', '-q', '--bare', '-b', 'main', `repos/${c.name}.git`)
  const files = fleetFiles({ clusters: threeClusters })
  const objects = Object.values(files).flatMap(
    (text) => parseValue(text.replaceAll('repo: ../repos/', `repo: ${dir}/repos/`), { stream: true }) as Json[],
  )
  // The canary's cluster reports Ready: its status comes with the listed object.
  objects.find((o) => o['kind'] === 'WorkloadCluster' && o['metadata']['name'] === 'edge-01')!['status'] = {
    conditions: [{ type: 'Ready', status: 'True' }],
  }
  const rollouts = {
    group: 'kpt-variants.dev',
    version: 'v1alpha1',
    kind: 'Rollout',
    resource: 'rollouts',
    namespaced: true,
  }
  server = await new FakeApiServer([...objects, structuredClone(rollout)], [...defaultKinds, rollouts]).start()
  server.pageSize = 100
  server.writeKubeconfig(join(dir, 'kubeconfig'))
}, timeout)

afterEach(async () => {
  await server.stop()
  rmSync(dir, { recursive: true, force: true })
})

function run(...args: string[]): Promise<Run> {
  return runCli(dir, args, { env: { XDG_CACHE_HOME: join(dir, 'cache'), KUBECONFIG: join(dir, 'kubeconfig') } })
}

const outcome = (stdout: string) =>
  Object.fromEntries(
    (JSON.parse(stdout) as { variants: Json[] }).variants
      .filter((v) => v['published'] || v['held'])
      .map((v) => [v['path'], v['published'] ?? v['held']]),
  )

test(
  "render --cluster --git --publish follows the cluster's Rollout; pause and approve patch it",
  async () => {
    const first = await run('render', '--cluster', '--git', '--publish', '--json', '--now', '2025-06-02T08:00:00Z')
    expect(first.exitCode).toBe(0)
    expect(outcome(first.stdout)).toEqual({
      'edge-01/nginx': 'nginx/v1',
      'edge-02/nginx': 'waiting: step rest needs approval: kpt-variants rollout approve edge-monitor rest',
      'edge-03/nginx': 'waiting: step rest needs approval: kpt-variants rollout approve edge-monitor rest',
    })

    const paused = await run('rollout', 'pause', 'edge-monitor', '--cluster')
    expect(paused).toMatchObject({ exitCode: 0, stderr: `paused rollout edge-monitor (patched on ${server.url})` })
    expect(server.object('Rollout', 'default', 'edge-monitor')!['spec']['paused']).toBe(true)

    // Someone else writes the Rollout between this approval's read and its write: the server refuses it, nothing is lost.
    server.refuse = (r) => {
      if (r.method === 'PATCH' && r.path.endsWith('/status')) server.touch('Rollout', 'default', 'edge-monitor')
      return undefined
    }
    const raced = await run('rollout', 'approve', 'edge-monitor', 'rest', '--cluster', '--now', '2025-06-02T09:00:00Z')
    expect(raced).toMatchObject({
      exitCode: 1,
      stderr: `kpt-variants: Rollout default/edge-monitor changed on ${server.url} since it was read: nothing was written; run the command again`,
    })
    expect(server.object('Rollout', 'default', 'edge-monitor')!['status']).toBeUndefined()

    server.refuse = () => undefined
    expect(
      (await run('rollout', 'approve', 'edge-monitor', 'rest', '--cluster', '--now', '2025-06-02T09:01:00Z')).exitCode,
    ).toBe(0)
    expect(server.requests.filter((r) => r.method === 'PATCH').at(-1)).toMatchObject({
      path: '/apis/kpt-variants.dev/v1alpha1/namespaces/default/rollouts/edge-monitor/status',
      contentType: 'application/merge-patch+json',
      body: {
        metadata: { resourceVersion: expect.any(String) },
        status: {
          approvals: [
            { step: 'rest', revision: expect.stringMatching(/^nginx\/v1@[0-9a-f]{12}$/), time: '2025-06-02T09:01:00Z' },
          ],
        },
      },
    })
    const held = await run('render', '--cluster', '--git', '--publish', '--json', '--now', '2025-06-02T09:05:00Z')
    expect(outcome(held.stdout)['edge-02/nginx']).toBe(
      'paused: rollout edge-monitor is paused: `kpt-variants rollout resume edge-monitor` resumes it',
    )
    expect((await run('rollout', 'resume', 'edge-monitor', '--cluster')).exitCode).toBe(0)

    const second = await run('render', '--cluster', '--git', '--publish', '--json', '--now', '2025-06-02T09:10:00Z')
    expect(outcome(second.stdout)).toEqual({ 'edge-02/nginx': 'nginx/v1', 'edge-03/nginx': 'nginx/v1' })
  },
  timeout,
)
