/**
 * `kpt-variants render --git` runs that meet each other or die: two renders
 * against the same repositories, a repository locked by a live or a dead run,
 * and a render killed at any point, as real processes.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import { threeClusters } from './support/fleet.js'
import { git } from './support/git-repo.js'
import { timeout, stoppedAt, crash, Workspace } from './support/git-workspace.js'
import { startCli } from './support/cli-run.js'

describe('kpt-variants render --git', () => {
  let ws: Workspace
  afterEach(() => rmSync(ws.dir, { recursive: true, force: true }))

  test(
    'two renders against the same repositories never interleave: the second waits for the first, then finds nothing to do',
    async () => {
      ws = await Workspace.create()
      const [a, b] = await Promise.all([ws.render(), ws.render()])
      const statuses = [a, b].map((r) => r.report.variants.map((v) => v.status).join())
      expect(statuses.sort()).toEqual(['created,created,created', 'unchanged,unchanged,unchanged'])
      for (const c of threeClusters)
        expect(Object.keys(await ws.refs(c.name)).filter((r) => r.includes('drafts/'))).toEqual([
          'refs/heads/drafts/nginx/packagevariant-1',
        ])
    },
    timeout,
  )

  test(
    "a repository locked by a live run fails its own variants after --lock-timeout; a dead run's lock is taken over",
    async () => {
      ws = await Workspace.create()
      await ws.render()
      const clone = (await execa('sh', ['-c', 'ls -d cache/repos/edge-01-*.git'], { cwd: ws.dir })).stdout.trim()
      const holder = execa('sleep', ['30'], { reject: false })
      writeFileSync(join(ws.dir, `${clone}.lock`), `${holder.pid} ${hostname()}\n`)
      try {
        ws.writeFleet({ clusters: threeClusters, team: 'platform' })
        const locked = await ws.render('--lock-timeout', '0.3')
        expect(locked.run.exitCode).toBe(1)
        const failed = locked.report.variants.find((v) => v.path === 'edge-01/nginx')!
        expect(failed.status).toBe('failed')
        expect(failed.reasons.map((r) => r.message).join()).toContain(
          `another kpt-variants run (process ${holder.pid} on ${hostname()}) holds the lock`,
        )
        expect(locked.report.variants.filter((v) => v.status === 'updated').map((v) => v.path)).toEqual([
          'edge-02/nginx',
          'edge-03/nginx',
        ])
      } finally {
        holder.kill('SIGKILL')
        await holder
      }
      const taken = await ws.render('--lock-timeout', '0.3')
      expect(taken.report.variants.map((v) => v.status)).toEqual(['updated', 'unchanged', 'unchanged'])
      expect(existsSync(join(ws.dir, `${clone}.lock`))).toBe(false)
    },
    timeout,
  )

  test(
    'a render killed at any point leaves only complete commits on every branch; the next run completes the work',
    async () => {
      const clusters = Array.from({ length: 6 }, (_, i) => ({ name: `edge-0${i + 1}`, region: 'us-east1' }))
      // Each named point of the run (orchestrator/util/stop-point.ts), in the order a run reaches them: the run is held there and killed.
      for (const point of [
        'rendered',
        'git-trees-written',
        'git-commits-imported',
        'git-pushed',
        'committed',
        'recorded',
      ]) {
        ws = await Workspace.create({ clusters: threeClusters })
        for (const c of clusters.slice(3))
          await git(ws.dir, 'init', '-q', '--bare', '-b', 'main', `repos/${c.name}.git`)
        ws.writeFleet({ clusters })
        const child = startCli(ws.dir, ['render', 'fleet', '--git', '--cache', 'cache', '--publish'], {
          env: { KPT_VARIANTS_TEST_STOP_AT: point },
        })
        await stoppedAt(child, point)
        await crash(child)
        const files = ['Kptfile', 'README.md', 'deployment.yaml', 'package-context.yaml', 'region-endpoints.yaml'].map(
          (f) => `nginx/${f}`,
        )
        const checkComplete = async () => {
          for (const c of clusters) {
            await git(ws.remote(c.name), 'fsck', '--no-dangling', '--no-progress')
            for (const ref of Object.keys(await ws.refs(c.name)).filter((r) => r.includes('nginx'))) {
              const listed = (await git(ws.remote(c.name), 'ls-tree', '-r', '--name-only', ref, '--', 'nginx')).split(
                '\n',
              )
              expect({ ref, files: files.filter((f) => !listed.includes(f)) }).toEqual({ ref, files: [] })
            }
          }
        }
        await checkComplete()
        const next = await ws.render('--publish', '--lock-timeout', '5')
        expect(next.run.exitCode).toBe(0)
        await checkComplete()
        for (const c of clusters) expect((await ws.refs(c.name))['refs/tags/nginx/v1']).toBeDefined()
        const settled = await ws.render('--publish')
        expect(settled.report.variants.map((v) => v.status)).toEqual(clusters.map(() => 'unchanged'))
        rmSync(ws.dir, { recursive: true, force: true })
      }
    },
    4 * timeout,
  )
})
