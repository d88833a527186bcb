/**
 * `kpt-variants render` run again: idempotence, the record of earlier renders and what makes a
 * variant render again (test/support/render-workspace.ts lays out the workspace).
 */
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { git } from './support/git-repo.js'
import { threeClusters, v2Image } from './support/fleet.js'
import { pastRacyWindowMs } from './support/clock.js'
import { backdate, timeout, snapshot, useWorkspaces } from './support/render-workspace.js'
import type { JsonReport } from './support/render-workspace.js'

describe('kpt-variants render', () => {
  const workspace = useWorkspaces()

  test(
    'a second run is idempotent: every variant unchanged, no file rewritten',
    async () => {
      const ws = await workspace({ clusters: threeClusters })
      await ws.renderOk()
      // A rewrite shows in mtimes even on coarse-grained file systems.
      backdate(ws.out)
      const before = snapshot(ws.out)

      const { run, report } = await ws.renderJson()
      expect(run.exitCode).toBe(0)
      expect(report.summary).toEqual({ created: 0, updated: 0, unchanged: 3, deleted: 0, orphaned: 0, failed: 0 })
      expect(report.variants.map((v) => [v.path, v.status])).toEqual([
        ['edge-01/nginx', 'unchanged'],
        ['edge-02/nginx', 'unchanged'],
        ['edge-03/nginx', 'unchanged'],
      ])
      expect(run.stderr).toContain('3 variant(s): 0 created, 0 updated, 3 unchanged, 0 failed')
      expect(snapshot(ws.out)).toEqual(before)
    },
    timeout,
  )

  test(
    'the record of earlier renders skips only what is unchanged: an injected object or a downstream edit renders again; --force renders all',
    async () => {
      const ws = await workspace({ clusters: threeClusters })
      const first = await ws.renderJson()
      expect(first.report.summary.created).toBe(3)
      expect(readdirSync(join(ws.dir, 'cache', 'kpt-variants', 'renders'))).toHaveLength(1)
      // A skipped variant reports what a full render of it does.
      const skipped = await ws.renderJson()
      const forced = await ws.renderJson('--force')
      expect(skipped.report).toEqual(forced.report)
      expect(skipped.report.summary.unchanged).toBe(3)

      // The us-west1 endpoints change: only the variant injecting them renders again.
      const fleetFile = join(ws.fleet, 'endpoints.yaml')
      writeFileSync(
        fleetFile,
        readFileSync(fleetFile, 'utf8').replace(
          'https://api.us-west1.example.com',
          'https://api2.us-west1.example.com',
        ),
      )
      const injected = await ws.renderJson()
      expect(injected.report.variants.map((v) => [v.path, v.status])).toEqual([
        ['edge-01/nginx', 'unchanged'],
        ['edge-02/nginx', 'updated'],
        ['edge-03/nginx', 'unchanged'],
      ])
      expect(ws.yaml('edge-02/nginx/region-endpoints.yaml')['data']).toEqual({
        API_ENDPOINT: 'https://api2.us-west1.example.com',
      })

      // Someone edits an injected value in the output: the next render puts the cluster's value back.
      const edited = join(ws.out, 'edge-03', 'nginx', 'region-endpoints.yaml')
      writeFileSync(
        edited,
        readFileSync(edited, 'utf8').replace('https://api.eu-west1.example.com', 'https://elsewhere.example.com'),
      )
      const restored = await ws.renderJson()
      expect(restored.report.variants.map((v) => v.status)).toEqual(['unchanged', 'unchanged', 'updated'])
      expect(ws.yaml('edge-03/nginx/region-endpoints.yaml')['data']).toEqual({
        API_ENDPOINT: 'https://api.eu-west1.example.com',
      })

      // Two seconds on, a run trusts the files' metadata and reads no content; an edit of the same size still shows.
      ws.clock.advance(pastRacyWindowMs)
      expect((await ws.renderJson()).report.summary.unchanged).toBe(3)
      const record = readdirSync(join(ws.dir, 'cache', 'kpt-variants', 'renders'))[0]!
      const entries = JSON.parse(readFileSync(join(ws.dir, 'cache', 'kpt-variants', 'renders', record), 'utf8'))
        .entries as Record<string, { stat?: string }>
      expect(Object.values(entries).every((e) => typeof e.stat === 'string')).toBe(true)
      const sameSize = join(ws.out, 'edge-01', 'nginx', 'region-endpoints.yaml')
      writeFileSync(
        sameSize,
        readFileSync(sameSize, 'utf8').replace('https://api.us-east1.example.com', 'https://api.us-east9.example.com'),
      )
      const noticed = await ws.renderJson()
      expect(noticed.report.variants.map((v) => v.status)).toEqual(['updated', 'unchanged', 'unchanged'])
      expect(ws.yaml('edge-01/nginx/region-endpoints.yaml')['data']).toEqual({
        API_ENDPOINT: 'https://api.us-east1.example.com',
      })
    },
    timeout,
  )

  test(
    'a re-render in which nothing can have changed reports the last one without planning; any change of fleet, upstream or output renders again',
    async () => {
      const ws = await workspace({ clusters: threeClusters })
      const cache = join(ws.dir, 'cache', 'kpt-variants')
      const quietRecords = () => (existsSync(join(cache, 'quiet-runs')) ? readdirSync(join(cache, 'quiet-runs')) : [])
      const statuses = (report: JsonReport) => report.variants.map((v) => [v.path, v.status])
      const allUnchanged = threeClusters.map((c) => [`${c.name}/nginx`, 'unchanged'])
      /** Renders, two seconds on, a run that records that nothing changed: files written in the last two seconds are not trusted. */
      const settle = async () => {
        ws.clock.advance(pastRacyWindowMs)
        const full = await ws.renderJson()
        expect(statuses(full.report)).toEqual(allUnchanged)
        expect(quietRecords()).toHaveLength(1)
        return full
      }
      expect((await ws.renderJson()).report.summary.created).toBe(3)
      // Written just now: no record of a quiet run yet.
      expect(quietRecords()).toEqual([])
      const full = await settle()

      // Answered from the record: the same report (and exit code), and the record of earlier renders is not even read
      // or written: removed, it stays removed.
      rmSync(join(cache, 'renders'), { recursive: true })
      const replayed = await ws.renderJson()
      expect(replayed.report).toEqual(full.report)
      expect(replayed.run.stderr).toBe(full.run.stderr)
      expect(replayed.run.exitCode).toBe(0)
      expect(existsSync(join(cache, 'renders'))).toBe(false)

      // A fleet file changes: rendered in full (the injected value moves), and the record is gone until a quiet run.
      const endpoints = join(ws.fleet, 'endpoints.yaml')
      writeFileSync(
        endpoints,
        readFileSync(endpoints, 'utf8').replace(
          'https://api.us-west1.example.com',
          'https://api3.us-west1.example.com',
        ),
      )
      expect(statuses((await ws.renderJson()).report)).toEqual([
        ['edge-01/nginx', 'unchanged'],
        ['edge-02/nginx', 'updated'],
        ['edge-03/nginx', 'unchanged'],
      ])
      expect(quietRecords()).toEqual([])
      await settle()

      // An output file is edited, keeping its size: the render puts it back.
      const edited = join(ws.out, 'edge-01', 'nginx', 'region-endpoints.yaml')
      writeFileSync(
        edited,
        readFileSync(edited, 'utf8').replace('https://api.us-east1.example.com', 'https://api.us-east7.example.com'),
      )
      expect(statuses((await ws.renderJson()).report)).toEqual([
        ['edge-01/nginx', 'updated'],
        ['edge-02/nginx', 'unchanged'],
        ['edge-03/nginx', 'unchanged'],
      ])
      expect(ws.yaml('edge-01/nginx/region-endpoints.yaml')['data']).toEqual({
        API_ENDPOINT: 'https://api.us-east1.example.com',
      })
      await settle()

      // A package is removed, or one appears that no variant renders: each is noticed.
      rmSync(join(ws.out, 'edge-03'), { recursive: true })
      expect(statuses((await ws.renderJson()).report)).toEqual([
        ...allUnchanged.slice(0, 2),
        ['edge-03/nginx', 'created'],
      ])
      await settle()
      cpSync(join(ws.out, 'edge-02', 'nginx'), join(ws.out, 'stray', 'nginx'), { recursive: true })
      const stray = await ws.renderJson()
      expect(statuses(stray.report).filter(([path]) => path !== 'stray/nginx')).toEqual(allUnchanged)
      expect(quietRecords()).toEqual([])
      rmSync(join(ws.out, 'stray'), { recursive: true, force: true })
      await settle()

      // The upstream tag moves to another commit: every variant is updated to it.
      await git(ws.blueprints, 'tag', '-f', 'nginx/v1', await ws.commitOf('nginx/v2'))
      const moved = await ws.renderJson()
      expect(moved.report.summary.updated).toBe(3)
      expect(ws.yaml('edge-01/nginx/deployment.yaml')['spec']['template']['spec']['containers'][0]['image']).toBe(
        v2Image,
      )
      await settle()
    },
    timeout,
  )
})
