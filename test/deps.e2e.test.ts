/**
 * `kpt-variants deps` on the demo fleet (README, docs/package-dependencies.md),
 * through the CLI: the four questions (the tree, --why, --can-delete,
 * --outdated) answered from an --out directory and from the published
 * branches of real git repositories; and the demo's configured dependency,
 * cert-manager with its region's cluster issuer.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDemoFleet } from '../scripts/demo-fleet.js'
import { runCli } from './support/cli-run.js'

const timeout = 180_000
let dir: string
/** The CLI in the demo's directory (execa leaves out the output's last newline). */
const cli = (...args: string[]) => runCli(dir, [...args, '--cache', 'cache'])

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kpt-variants-deps-cli-e2e-'))
  await createDemoFleet(dir)
  expect((await cli('render', 'fleet', '--out', 'rendered')).exitCode).toBe(0)
}, timeout)
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('deps on the demo fleet', () => {
  test('the configured dependency: each cert-manager the render installed names its region’s issuer', () => {
    const context = (c: string) =>
      readFileSync(join(dir, 'rendered', c, 'cert-manager', 'package-context.yaml'), 'utf8')
    const regions = new Map<string, string>()
    for (const m of readFileSync(join(dir, 'fleet', 'clusters.yaml'), 'utf8').matchAll(
      /name: (edge-\d+)\n[\s\S]*?region: ([a-z0-9-]+)/g,
    ))
      regions.set(m[1]!, m[2]!)
    for (const c of ['edge-06', 'edge-09', 'edge-12']) {
      expect(context(c)).toContain(`cluster-issuer: letsencrypt-${regions.get(c)}`)
      expect(context(c)).toContain('issuer-kind: ClusterIssuer')
    }
  })

  test(
    'the tree, --why, --can-delete and --outdated, from --out',
    async () => {
      const tree = await cli('deps', 'edge-06', '--fleet', 'fleet', '--out', 'rendered')
      expect(tree).toMatchObject({ exitCode: 0, stderr: '' })
      expect(tree.stdout).toBe(
        [
          'edge-06 (--out rendered)',
          '└─┬ nginx v1.0.0  [the package of PackageVariant default/nginx-edge-06-nginx]',
          '  └── cert-manager v1.14.4 (>= v1.12.0)  [installed as a dependency]',
        ].join('\n'),
      )
      const outside = await cli('deps', 'edge-05', '--fleet', 'fleet', '--out', 'rendered')
      expect(outside.stdout).toContain(
        '└── cert-manager v1.12.3 (>= v1.12.0)  [installed outside git (an InstalledPackage)]',
      )

      const why = await cli('deps', 'edge-06', '--fleet', 'fleet', '--out', 'rendered', '--why', 'cert-manager')
      expect(why.stdout).toBe(
        [
          'cert-manager v1.14.4 (edge-06/cert-manager): installed as a dependency',
          '  needed by nginx v1.0.0 (>= v1.12.0): the package of PackageVariant default/nginx-edge-06-nginx',
        ].join('\n'),
      )
      const needed = await cli(
        'deps',
        'edge-06',
        '--fleet',
        'fleet',
        '--out',
        'rendered',
        '--can-delete',
        'cert-manager',
      )
      expect(needed).toMatchObject({
        exitCode: 1,
        stdout:
          'cert-manager cannot be deleted from edge-06:\n  nginx v1.0.0 (edge-06/nginx) needs cert-manager >= v1.12.0',
      })
      const json = await cli(
        'deps',
        'edge-06',
        '--fleet',
        'fleet',
        '--out',
        'rendered',
        '--can-delete',
        'cert-manager',
        '--json',
      )
      expect(JSON.parse(json.stdout)).toMatchObject({
        canDelete: false,
        blocking: [expect.stringContaining('nginx v1.0.0')],
      })

      const outdated = await cli('deps', '--fleet', 'fleet', '--out', 'rendered', '--outdated', '--json')
      const rows = (
        JSON.parse(outdated.stdout) as {
          outdated: { repo: string; package: string; current: string; wanted: string; latest: string }[]
        }
      ).outdated
      expect(rows.filter((r) => r.package === 'nginx')).toHaveLength(12)
      expect(rows.find((r) => r.repo === 'edge-01' && r.package === 'nginx')).toMatchObject({
        current: 'v1.0.0',
        wanted: 'v1.0.0',
        latest: 'v2.0.0',
      })
      expect(rows.filter((r) => r.package === 'cert-manager')).toEqual([
        expect.objectContaining({ repo: 'edge-05', current: 'v1.12.3', wanted: 'v1.14.4', latest: 'v1.14.4' }),
      ])
    },
    timeout,
  )

  test(
    'from the published branches of the repositories (--git), after the move to nginx v2',
    async () => {
      const set = join(dir, 'fleet', 'nginx-set.yaml')
      writeFileSync(set, readFileSync(set, 'utf8').replace('revision: 1', 'revision: 2'))
      expect((await cli('render', 'fleet', '--git', '--publish')).exitCode).toBe(0)
      const tree = await cli('deps', 'edge-05', '--fleet', 'fleet')
      expect(tree.stdout).toBe(
        [
          'edge-05 (its published branch)',
          '└─┬ nginx v2.0.0  [the package of PackageVariant default/nginx-edge-05-nginx]',
          '  └── cert-manager v1.14.4 (>= v1.13.0)  [installed on purpose]',
        ].join('\n'),
      )
      const free = await cli('deps', 'edge-05', '--fleet', 'fleet', '--can-delete', 'nginx')
      expect(free.exitCode).toBe(0)
      expect(free.stdout).toContain('nginx can be deleted from edge-05: nothing there needs it')
      expect((await cli('deps', '--fleet', 'fleet', '--outdated')).stdout).toBe(
        'Every package is at the newest version published.',
      )
      const unknown = await cli('deps', 'edge-05', '--fleet', 'fleet', '--why', 'istio')
      expect(unknown).toMatchObject({
        exitCode: 2,
        stderr: 'kpt-variants: repository edge-05 holds no package "istio" (it holds: cert-manager, nginx)',
      })
    },
    timeout,
  )
})
