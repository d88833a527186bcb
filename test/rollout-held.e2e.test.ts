/**
 * What a progressive rollout holds back, as real processes: a held variant's
 * content under --out (and when its soak starts), and drafts that report
 * conflicts or delete a package under render --git --publish.
 */
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { v1Image } from './support/fleet.js'
import { git } from './support/git-repo.js'
import { timeout, clusters, Fleet } from './support/rollout-fleet.js'
import type { Run, Report } from './support/rollout-fleet.js'

describe('a progressive rollout, end to end', () => {
  let fleet: Fleet
  afterEach(() => rmSync(fleet.dir, { recursive: true, force: true }))

  test(
    'with --out, a held-back variant keeps its current content, and the soak counts from when its Kptfile was written',
    async () => {
      fleet = await Fleet.create()
      const out = (now: string) =>
        fleet.ok('render', 'fleet', '--out', 'out', '--cache', 'cache', '--json', '--now', now)
      const held = (run: Run) =>
        Object.fromEntries(
          (JSON.parse(run.stdout) as Report).variants
            .filter((v) => v.held)
            .map((v) => [v.path!.split('/')[0]!, v.held!]),
        )
      const first = await out('2025-06-02T08:00:00Z')
      expect(readdirSync(join(fleet.dir, 'out'))).toEqual(['edge-01'])
      expect(held(first)['eu-1']).toMatch(/^waiting: step eu starts after canary is published at nginx\/v1@/)
      // Written at --now: the soak's start.
      expect(statSync(join(fleet.dir, 'out', 'edge-01', 'nginx', 'Kptfile')).mtime.toISOString()).toBe(
        '2025-06-02T08:00:00.000Z',
      )
      fleet.health(1, { 'edge-01': 'True' })
      expect(held(await out('2025-06-02T08:20:00Z'))['eu-1']).toBe(
        'waiting: step eu starts after canary has soaked 30m since its last publish (2025-06-02T08:00:00Z): 10m left',
      )
      await fleet.rollout(['approve', 'edge-monitor', 'eu'], '2025-06-02T08:31:00Z')
      // The held variants were not recorded as written: this run renders and writes the next batch.
      await out('2025-06-02T08:32:00Z')
      expect(readdirSync(join(fleet.dir, 'out')).sort()).toEqual(['edge-01', 'eu-1', 'eu-2'])
      // --skip-rollout writes everything.
      await fleet.ok('render', 'fleet', '--out', 'out', '--cache', 'cache', '--skip-rollout')
      expect(readdirSync(join(fleet.dir, 'out')).sort()).toEqual(clusters.map((c) => c.name).sort())
    },
    timeout,
  )

  test(
    'render --git --publish holds a draft that reports conflicts or deletes a package, unless told',
    async () => {
      fleet = await Fleet.create()
      rmSync(join(fleet.dir, 'fleet', 'rollout.yaml'))
      await fleet.publish('2025-06-02T08:00:00Z')
      // A person changes the image edge-01 runs; upstream v2 changes it too: a conflict (upstream wins, reported).
      const clone = join(fleet.dir, 'clone')
      await git(fleet.dir, 'clone', '-q', join(fleet.dir, 'repos', 'edge-01.git'), clone)
      writeFileSync(
        join(clone, 'nginx', 'deployment.yaml'),
        readFileSync(join(clone, 'nginx', 'deployment.yaml'), 'utf8').replace(v1Image, 'nginx:1.25.9'),
      )
      await git(clone, 'commit', '-qam', 'patch release on edge-01')
      await git(clone, 'push', '-q', 'origin', 'main')
      fleet.write(2)
      const conflicted = await fleet.publish('2025-06-02T09:00:00Z')
      expect(conflicted.outcome).toEqual({
        'edge-01':
          'held: the draft reports conflicts: review it, then `kpt-variants publish`, or render with --publish-conflicts',
        'eu-1': 'nginx/v2',
        'eu-2': 'nginx/v2',
        'eu-3': 'nginx/v2',
        'eu-4': 'nginx/v2',
        'us-1': 'nginx/v2',
      })
      const forced = await fleet.ok(
        'render',
        'fleet',
        '--git',
        '--publish',
        '--publish-conflicts',
        '--cache',
        'cache',
        '--json',
        '--now',
        '2025-06-02T09:05:00Z',
      )
      expect((JSON.parse(forced.stdout) as Report).variants.find((v) => v.path === 'edge-01/nginx')).toMatchObject({
        published: 'nginx/v2',
      })

      // The us-1 cluster leaves the fleet (its repository stays): its package's removal waits for review.
      fleet.write(2, 'us-1')
      const removal = await fleet.publish('2025-06-02T10:00:00Z')
      expect(removal.report.variants.find((v) => v.path === 'us-1/nginx')).toMatchObject({
        status: 'deleted',
        held: expect.stringMatching(/^held: the draft deletes the package/),
      })
      expect(await git(join(fleet.dir, 'repos', 'us-1.git'), 'ls-tree', '--name-only', 'main')).toBe('nginx')
      const deleted = await fleet.ok(
        'render',
        'fleet',
        '--git',
        '--publish',
        '--publish-deletions',
        '--cache',
        'cache',
        '--json',
        '--now',
        '2025-06-02T10:05:00Z',
      )
      expect((JSON.parse(deleted.stdout) as Report).variants.find((v) => v.path === 'us-1/nginx')).toMatchObject({
        status: 'deleted',
      })
      expect(await git(join(fleet.dir, 'repos', 'us-1.git'), 'ls-tree', '--name-only', 'main')).toBe('')
    },
    timeout,
  )

  test(
    'a canary that cannot be rendered holds its step and every later one, named in render, rollout status and --json',
    async () => {
      fleet = await Fleet.create()
      // The canary's deployment Repository is missing from the fleet: its variant cannot be rendered.
      const repositories = join(fleet.dir, 'fleet', 'repositories.yaml')
      const all = readFileSync(repositories, 'utf8')
      writeFileSync(
        repositories,
        all
          .split('---\n')
          .filter((doc) => !doc.includes('name: edge-01\n'))
          .join('---\n'),
      )
      const run = await fleet.run(
        'render',
        'fleet',
        '--git',
        '--publish',
        '--cache',
        'cache',
        '--json',
        '--now',
        '2025-06-02T08:00:00Z',
      )
      expect(run.exitCode).toBe(1)
      const report = JSON.parse(run.stdout) as Report
      const why = `edge-01's variant cannot be rendered: repository "edge-01" could not be loaded`
      expect(report.rollouts![0]).toMatchObject({
        state: 'halted',
        reason: `step canary: ${why}: it and the steps after it wait until every one renders`,
        steps: [
          { name: 'canary', state: 'halted' },
          { name: 'eu', state: 'waiting' },
          { name: 'rest', state: 'waiting' },
        ],
      })
      expect(report.variants.filter((v) => v.published)).toEqual([])
      expect(report.variants.find((v) => v.path === 'eu-1/nginx')!.held).toBe(
        `waiting: step eu starts after canary renders every variant: ${why}`,
      )
      expect(run.stderr).toContain(`Rollout default/edge-monitor (nginx/v1@`)
      expect(run.stderr).toContain(`  canary: halted: ${why}`)
      expect(Object.values(await fleet.tags()).flat()).toEqual([])

      const status = await fleet.run('rollout', 'status', 'edge-monitor', '--fleet', 'fleet', '--cache', 'cache')
      expect(status.stdout).toContain(`halted: step canary: ${why}`)
      const json = JSON.parse(
        (await fleet.run('rollout', 'status', 'edge-monitor', '--fleet', 'fleet', '--cache', 'cache', '--json')).stdout,
      ) as { state: string; steps: { name: string; state: string; reason: string }[] }
      expect(json.state).toBe('halted')
      expect(json.steps[0]).toMatchObject({ name: 'canary', state: 'halted', reason: why })

      // Its Repository back: the canary goes first, as it should have.
      writeFileSync(repositories, all)
      const fixed = await fleet.publish('2025-06-02T08:10:00Z')
      expect(fixed.outcome['edge-01']).toBe('nginx/v1')
      expect(fixed.outcome['eu-1']).toMatch(/^waiting: step eu starts after canary is healthy/)
    },
    timeout,
  )
})
