/**
 * The demo fleet served by a real Kubernetes API server (test/support/kube-apiserver.ts)
 * with the CRDs of deploy/crds: `render --cluster` reads its DependencyPolicy
 * (cert-manager configured per region) and `deps --cluster` answers from what
 * the render wrote.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseValue } from '../functions/krm/yaml/index.js'
import { createDemoFleet } from '../scripts/demo-fleet.js'
import { repoRoot } from './e2e/runner.js'
import { runCli } from './support/cli-run.js'
import { KubeApiServer, kubeApiServerBuilt, kubeApiServerMissing } from './support/kube-apiserver.js'
import { describeIfAvailable } from './support/requires.js'
import type { Json } from './support/kube-client.js'
import { schemalessCrd } from './support/schemaless-crd.js'

const timeout = 180_000
const documents = (text: string) => parseValue(text, { stream: true }) as Json[]
const suite = describeIfAvailable(kubeApiServerBuilt(), kubeApiServerMissing)

suite('deps --cluster on the demo fleet', () => {
  let server: KubeApiServer
  let dir: string
  const cli = (...args: string[]) => {
    process.env['KUBECONFIG'] = join(dir, 'kubeconfig')
    return runCli(dir, [...args, '--cluster', '--cache', 'cache'])
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kpt-variants-deps-cluster-e2e-'))
    await createDemoFleet(dir)
    server = await KubeApiServer.start()
    const crds = join(repoRoot, 'deploy', 'crds')
    await server.apply([
      ...readdirSync(crds).flatMap((f) => documents(readFileSync(join(crds, f), 'utf8'))),
      schemalessCrd('infra.nephio.org', 'WorkloadCluster'),
    ])
    // Absolute repository paths: a cluster's relative ones resolve against the working directory.
    const fleet = join(dir, 'fleet')
    await server.apply(
      readdirSync(fleet).flatMap((f) =>
        documents(readFileSync(join(fleet, f), 'utf8').replaceAll('repo: ../repos/', `repo: ${dir}/repos/`)),
      ),
    )
    server.writeKubeconfig(join(dir, 'kubeconfig'))
  }, timeout)

  afterAll(async () => {
    delete process.env['KUBECONFIG']
    await server?.stop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  }, timeout)

  test(
    'the DependencyPolicy is read from the server; deps answers from the output',
    async () => {
      const render = await cli('render', '--out', 'out')
      expect(render.exitCode).toBe(0)
      expect(readFileSync(join(dir, 'out', 'edge-06', 'cert-manager', 'package-context.yaml'), 'utf8')).toMatch(
        /cluster-issuer: letsencrypt-[a-z]+-[a-z]+1/,
      )
      const tree = await cli('deps', 'edge-06', '--out', 'out')
      expect(tree).toMatchObject({ exitCode: 0, stderr: '' })
      expect(tree.stdout).toContain('  └── cert-manager v1.14.4 (>= v1.12.0)  [installed as a dependency]')
      const needed = await cli('deps', 'edge-06', '--out', 'out', '--can-delete', 'cert-manager')
      expect(needed.exitCode).toBe(1)
      const outdated = JSON.parse((await cli('deps', '--out', 'out', '--outdated', '--json')).stdout) as {
        outdated: { repo: string; package: string; latest: string }[]
      }
      expect(outdated.outdated.filter((r) => r.package === 'nginx' && r.latest === 'v2.0.0')).toHaveLength(12)
    },
    timeout,
  )
})
