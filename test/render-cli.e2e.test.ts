/**
 * `kpt-variants render` options: --dry-run, --diff, --json, --shard and usage errors
 * (test/support/render-workspace.ts lays out the workspace).
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import { readTreeWithModes } from './support/git-repo.js'
import { regions, threeClusters } from './support/fleet.js'
import type { Cluster } from './support/fleet.js'
import { timeout, snapshot, summaryRow, paths, useWorkspaces } from './support/render-workspace.js'
import type { JsonReport } from './support/render-workspace.js'
import { runCli } from './support/cli-run.js'

describe('kpt-variants render', () => {
  const workspace = useWorkspaces()

  test(
    '--dry-run writes nothing; --dry-run --diff prints unified diffs that match the real run',
    async () => {
      const ws = await workspace({ clusters: threeClusters.slice(0, 2) })

      // Nothing rendered yet: out is not even created.
      const dry = await ws.render('fleet', '--out', 'out', '--dry-run')
      expect(dry.exitCode).toBe(0)
      expect(existsSync(ws.out)).toBe(false)
      expect(dry.stdout).toBe('')
      expect(dry.stderr).toMatch(
        summaryRow('created', 'edge-01/nginx', 'default/nginx-edge-01-nginx', 'blueprints/nginx v1'),
      )
      expect(dry.stderr).toContain(
        'Dry run (nothing written): 2 variant(s): 2 created, 0 updated, 0 unchanged, 0 failed',
      )

      const created = await ws.render('fleet', '--out', 'out', '--dry-run', '--diff')
      expect(created.exitCode).toBe(0)
      expect(existsSync(ws.out)).toBe(false)
      expect(created.stdout).toContain('--- /dev/null\n+++ b/edge-01/nginx/Kptfile\n@@ -0,0 +1,')
      expect(created.stdout).toContain('--- /dev/null\n+++ b/edge-02/nginx/deployment.yaml\n')
      expect(created.stdout).toContain('+    kpt-variants.dev/package-variant: default/nginx-edge-02-nginx\n')
      // The summary goes to stderr, never into the diff.
      expect(created.stdout).not.toContain('variant(s)')

      // An update of existing packages: the diff shows exactly the change, the packages stay as they were.
      await ws.renderOk()
      const before = snapshot(ws.out)
      ws.writeFleet({ clusters: threeClusters.slice(0, 2), team: 'edge-web' })
      const changed = await ws.render('fleet', '--out', 'out', '--dry-run', '--diff')
      expect(changed.exitCode).toBe(0)
      expect(snapshot(ws.out)).toEqual(before)
      for (const c of ['edge-01', 'edge-02']) {
        expect(changed.stdout).toContain(
          `--- a/${c}/nginx/package-context.yaml\n+++ b/${c}/nginx/package-context.yaml\n@@ `,
        )
        expect(changed.stdout).toContain('\n-  team: web-platform\n+  team: edge-web\n')
      }
      expect(changed.stdout).not.toContain('deployment.yaml')
      expect(changed.stderr).toContain(
        'Dry run (nothing written): 2 variant(s): 0 created, 2 updated, 0 unchanged, 0 failed',
      )

      // The diff, applied to a copy of the output, gives what the real run writes.
      const copy = join(ws.dir, 'patched')
      cpSync(ws.out, copy, { recursive: true })
      await execa('git', ['apply', '--unsafe-paths', '-'], { cwd: copy, input: changed.stdout })
      const real = await ws.renderOk()
      expect(real.stderr).toContain('2 variant(s): 0 created, 2 updated, 0 unchanged, 0 failed')
      expect(readTreeWithModes(copy)).toEqual(readTreeWithModes(ws.out))
    },
    timeout,
  )

  test(
    '--json prints a parseable report with one entry per variant',
    async () => {
      const ws = await workspace({ clusters: threeClusters })
      const { run, report } = await ws.renderJson()
      expect(run.exitCode).toBe(0)
      expect(report).toMatchObject({
        apiVersion: 'kpt-variants.dev/v1alpha1',
        kind: 'RenderReport',
        dryRun: false,
        problems: [],
      })
      expect(report.summary).toEqual({ created: 3, updated: 0, unchanged: 0, deleted: 0, orphaned: 0, failed: 0 })
      expect(report.variants).toEqual(
        threeClusters.map((c) => ({
          subject: `PackageVariant default/nginx-${c.name}-nginx`,
          path: `${c.name}/nginx`,
          status: 'created',
          set: 'default/nginx',
          labels: { 'config.porch.kpt.dev/packagevariantset': 'nginx' },
          upstream: 'blueprints/nginx v1',
          injected: [`ConfigMap region-endpoints <- ${c.region}-endpoints`],
          reasons: [],
          warnings: [],
          conflicts: [],
        })),
      )
      // The human summary still goes to stderr.
      expect(run.stderr).toContain('3 variant(s): 3 created, 0 updated, 0 unchanged, 0 failed')

      // --json --dry-run --diff: the diffs are in the report, stdout is only JSON.
      ws.writeFleet({ clusters: threeClusters, team: 'edge-web' })
      const dry = await ws.renderJson('--dry-run', '--diff')
      expect(dry.run.exitCode).toBe(0)
      expect(dry.report.dryRun).toBe(true)
      expect(dry.report.summary).toMatchObject({ updated: 3, failed: 0 })
      expect(paths(dry.report)).toEqual(threeClusters.map((c) => `${c.name}/nginx`))
      for (const v of dry.report.variants) {
        expect(v.status).toBe('updated')
        expect(v.diff).toContain(`+++ b/${v.path}/package-context.yaml`)
        expect(v.diff).toContain('+  team: edge-web')
      }
    },
    timeout,
  )

  test('--shard 0/2 and --shard 1/2 together render exactly what a full run does, byte for byte', async () => {
    // More than 2 × 64 variants: a full run on a machine with 2+ cores shares them between the main
    // thread and a worker (orchestrator/run/render-fleet.ts, variantsPerThread), while each shard (about 65)
    // renders on one thread; so this also checks the threaded run against single-threaded ones.
    const clusters: Cluster[] = Array.from({ length: 130 }, (_, i) => ({
      name: `edge-${String(i + 1).padStart(3, '0')}`,
      region: regions[i % regions.length]!,
    }))
    const ws = await workspace({ clusters })
    const full = await ws.render('fleet', '--out', 'full', '--json')
    expect(full.exitCode).toBe(0)
    const fullReport = JSON.parse(full.stdout) as JsonReport

    const shards: JsonReport[] = []
    for (const shard of ['0/2', '1/2']) {
      const run = await ws.render('fleet', '--out', 'sharded', '--json', '--shard', shard)
      expect(run.exitCode).toBe(0)
      shards.push(JSON.parse(run.stdout) as JsonReport)
    }
    const [zero, one] = shards.map(paths) as [(string | undefined)[], (string | undefined)[]]
    // Both shards have work, none twice, and together they are the whole fleet.
    expect(zero.length).toBeGreaterThan(0)
    expect(one.length).toBeGreaterThan(0)
    expect(zero.filter((p) => one.includes(p))).toEqual([])
    expect([...zero, ...one].sort()).toEqual(paths(fullReport))
    expect(paths(fullReport)).toEqual(clusters.map((c) => `${c.name}/nginx`))
    for (const report of shards) expect(report.variants.every((v) => v.status === 'created')).toBe(true)

    expect(readTreeWithModes(join(ws.dir, 'sharded'))).toEqual(readTreeWithModes(join(ws.dir, 'full')))

    // A shard never deletes the other shard's packages.
    const rerun = await ws.render('fleet', '--out', 'sharded', '--json', '--shard', '0/2')
    expect(rerun.exitCode).toBe(0)
    expect((JSON.parse(rerun.stdout) as JsonReport).variants.map((v) => v.status).every((s) => s === 'unchanged')).toBe(
      true,
    )
    expect(readTreeWithModes(join(ws.dir, 'sharded'))).toEqual(readTreeWithModes(join(ws.dir, 'full')))
  }, 60_000)

  describe('usage errors exit 2', () => {
    let dir: string
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'kpt-variants-render-usage-'))
      mkdirSync(join(dir, 'fleet'))
      writeFileSync(join(dir, 'fleet', 'empty.yaml'), '')
      writeFileSync(join(dir, 'file'), 'not a directory\n')
    })
    afterAll(() => rmSync(dir, { recursive: true, force: true }))

    test.each([
      ['neither --out nor --git', ['fleet'], 'give either --out DIR or --git'],
      ['both --out and --git', ['fleet', '--out', 'out', '--git'], 'give either --out DIR or --git'],
      ['--publish without --git', ['fleet', '--out', 'out', '--publish'], '--publish needs --git'],
      ['missing FLEET', ['--out', 'out'], 'kpt-variants: give a FLEET directory, or --cluster'],
      [
        'FLEET and --cluster',
        ['fleet', '--cluster', '--out', 'out'],
        'kpt-variants: give either a FLEET directory or --cluster, not both',
      ],
      [
        '--kubeconfig without --cluster',
        ['fleet', '--out', 'out', '--kubeconfig', 'k'],
        'kpt-variants: --kubeconfig and --context need --cluster',
      ],
      ['--shard without a slash', ['fleet', '--out', 'out', '--shard', '1'], 'expected I/N with 0 <= I < N'],
      ['--shard I >= N', ['fleet', '--out', 'out', '--shard', '2/2'], 'expected I/N with 0 <= I < N'],
      ['--shard 0/0', ['fleet', '--out', 'out', '--shard', '0/0'], 'expected I/N with 0 <= I < N'],
      ['--shard -1/2', ['fleet', '--out', 'out', '--shard', '-1/2'], 'expected I/N with 0 <= I < N'],
      ['--diff without --dry-run', ['fleet', '--out', 'out', '--diff'], 'kpt-variants: --diff needs --dry-run'],
      [
        'an unknown --on-conflict',
        ['fleet', '--out', 'out', '--on-conflict', 'merge'],
        'Allowed choices are upstream, downstream, fail',
      ],
      [
        'a fleet directory that does not exist',
        ['nope', '--out', 'out'],
        'kpt-variants: fleet directory nope does not exist',
      ],
      ['--out a file', ['fleet', '--out', 'file'], 'kpt-variants: --out file is not a directory'],
      [
        '--out containing the fleet',
        ['fleet', '--out', '.'],
        'kpt-variants: --out must not contain the fleet directory',
      ],
    ])(
      '%s',
      async (_, args, message) => {
        const run = await runCli(dir, ['render', ...args], { baseEnv: process.env })
        expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({
          exitCode: 2,
          stderr: expect.stringContaining(message),
        })
        expect(run.stdout).toBe('')
        expect(existsSync(join(dir, 'out'))).toBe(false)
        expect(readFileSync(join(dir, 'file'), 'utf8')).toBe('not a directory\n')
      },
      timeout,
    )
  })
})
