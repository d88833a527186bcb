/**
 * A fleet through a whole progressive rollout, as real processes against
 * real downstream repositories (issue 31, "Done when"): the canary first;
 * the next step held until the canary's target reports Ready and the soak
 * has passed; manual approval; a maxConcurrent step publishing in batches;
 * a halted step on a failed target; pause; a closed window; bulk publish
 * with a selector; every run after the last step a no-op; and a new
 * upstream revision starting again from the canary. Time is `--now`
 * throughout: no run depends on the clock.
 */
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { git } from './support/git-repo.js'
import { timeout, clusters, Fleet, v1 } from './support/rollout-fleet.js'
import type { Report } from './support/rollout-fleet.js'

describe('a progressive rollout, end to end', () => {
  let fleet: Fleet
  afterEach(() => rmSync(fleet.dir, { recursive: true, force: true }))

  test(
    'canary, soak, approval, batches, a halt, pause, a window, bulk publish by selector, no-op runs, and a new revision from the canary again',
    async () => {
      fleet = await Fleet.create()

      // 0. A preview writes nothing, and says what the run would hold back.
      const preview = await fleet.ok(
        'render',
        'fleet',
        '--git',
        '--publish',
        '--dry-run',
        '--cache',
        'cache',
        '--json',
        '--now',
        '2025-06-02T08:00:00Z',
      )
      const previewed = (JSON.parse(preview.stdout) as Report).variants
      expect(previewed.find((v) => v.path === 'edge-01/nginx')!.held).toBeUndefined()
      expect(previewed.find((v) => v.path === 'eu-1/nginx')!.held).toMatch(
        new RegExp(`^waiting: step eu starts after canary is published at ${v1}[0-9a-f]{12}: edge-01 is not yet$`),
      )
      expect(await fleet.refs()).toBe('\n\n\n\n\n')

      // 1. Monday 08:00: every variant gets its draft; only the canary is published.
      const first = await fleet.publish('2025-06-02T08:00:00Z')
      expect(first.outcome['edge-01']).toBe('nginx/v1')
      expect(first.outcome['eu-1']).toMatch(
        new RegExp(`^waiting: step eu starts after canary is healthy: edge-01 has no Ready condition$`),
      )
      expect(first.outcome['us-1']).toBe('waiting: step rest starts after eu is done')
      expect(first.report.rollouts).toMatchObject([{ rollout: 'default/edge-monitor', state: 'progressing' }])
      expect(await fleet.tags()).toEqual({
        'edge-01': ['nginx/v1'],
        'eu-1': [],
        'eu-2': [],
        'eu-3': [],
        'eu-4': [],
        'us-1': [],
      })
      const euDraft = await git(
        join(fleet.dir, 'repos', 'eu-1.git'),
        'for-each-ref',
        '--format=%(refname)',
        'refs/heads/drafts/',
      )
      expect(euDraft).toBe('refs/heads/drafts/nginx/packagevariant-1')
      // The tag is dated by --now: the soak counts from it.
      expect(await git(join(fleet.dir, 'repos', 'edge-01.git'), 'log', '-1', '--format=%cI', 'nginx/v1')).toBe(
        '2025-06-02T08:00:00+00:00',
      )

      // 2. The canary reports Ready; the soak is not over.
      fleet.health(1, { 'edge-01': 'True' })
      const soaking = await fleet.publish('2025-06-02T08:10:00Z')
      expect(soaking.outcome['eu-1']).toBe(
        'waiting: step eu starts after canary has soaked 30m since its last publish (2025-06-02T08:00:00Z): 20m left',
      )

      // 3. Soaked: the eu step needs approval; status says so.
      const approval = await fleet.publish('2025-06-02T08:31:00Z')
      expect(approval.outcome['eu-1']).toBe(
        'waiting: step eu needs approval: kpt-variants rollout approve edge-monitor eu',
      )
      // One repository's publish follows the rollout too (its canary is in another repository): held, and no failure.
      const one = await fleet.ok(
        'publish',
        'eu-1',
        '--fleet',
        'fleet',
        '--cache',
        'cache',
        '--now',
        '2025-06-02T08:31:00Z',
      )
      expect(one.stderr).toContain(
        'eu-1/nginx: waiting: step eu needs approval: kpt-variants rollout approve edge-monitor eu',
      )
      expect(await fleet.tags()).toMatchObject({ 'eu-1': [] })
      const status = await fleet.rollout(['status', 'edge-monitor'], '2025-06-02T08:31:00Z')
      expect(status.stdout).toMatch(/^canary +done +1 +1 +1 /m)
      expect(status.stdout).toMatch(
        /^eu +waiting +4 +0 +0 +needs approval: kpt-variants rollout approve edge-monitor eu$/m,
      )

      // 4. Approved in the fleet's own file (a change to review and commit), for this revision.
      const approved = await fleet.rollout(['approve', 'edge-monitor', 'eu'], '2025-06-02T08:32:00Z')
      expect(approved.stderr).toMatch(
        new RegExp(
          `^approved step eu of rollout edge-monitor for ${v1}[0-9a-f]{12} \\(rollout.yaml: commit the change\\)`,
        ),
      )
      expect(readFileSync(join(fleet.dir, 'fleet', 'rollout.yaml'), 'utf8')).toMatch(
        new RegExp(
          `# Weekdays, 08:00 to 18:00 UTC.\n[\\s\\S]*status:\n  approvals:\n  - step: eu\n    revision: ${v1}[0-9a-f]{12}\n    time: "2025-06-02T08:32:00Z"\n$`,
        ),
      )

      // 5. At most two at once: eu-1 and eu-2 now, eu-3 and eu-4 wait for them.
      const batch = await fleet.publish('2025-06-02T08:33:00Z')
      expect([batch.outcome['eu-1'], batch.outcome['eu-2']]).toEqual(['nginx/v1', 'nginx/v1'])
      expect(batch.outcome['eu-3']).toBe(
        'waiting: step eu publishes at most 2 at once: eu-1 and eu-2 are published and not yet healthy',
      )

      // 6. eu-2 fails: the rollout halts, and status says why.
      fleet.health(1, { 'eu-1': 'True', 'eu-2': 'False' })
      const halted = await fleet.publish('2025-06-02T08:40:00Z')
      expect(halted.outcome['eu-3']).toBe('halted: eu-2 Ready is False')
      expect(halted.outcome['us-1']).toBe('waiting: step rest starts after eu is healthy: eu-2 Ready is False')
      expect(halted.report.rollouts![0]).toMatchObject({
        state: 'halted',
        reason: 'eu-2 Ready is False: CrashLoopBackOff: nothing is published until it recovers',
      })
      const haltedStatus = await fleet.rollout(['status', 'edge-monitor', '--json'], '2025-06-02T08:40:00Z')
      expect(JSON.parse(haltedStatus.stdout)).toMatchObject({
        kind: 'RolloutStatus',
        state: 'halted',
        steps: [{ name: 'canary', state: 'done' }, { name: 'eu', state: 'halted' }, { name: 'rest' }],
      })

      // 7. eu-2 recovers, but the rollout is paused (in the fleet file's spec).
      fleet.health(1, { 'eu-2': 'True' })
      await fleet.ok('rollout', 'pause', 'edge-monitor', '--fleet', 'fleet')
      expect(readFileSync(join(fleet.dir, 'fleet', 'rollout.yaml'), 'utf8')).toContain('  paused: true\n')
      const paused = await fleet.publish('2025-06-02T08:45:00Z')
      expect(paused.outcome['eu-3']).toBe(
        'paused: rollout edge-monitor is paused: `kpt-variants rollout resume edge-monitor` resumes it',
      )

      // 8. Resumed, but at 20:00 the window is closed until tomorrow 08:00.
      await fleet.ok('rollout', 'resume', 'edge-monitor', '--fleet', 'fleet')
      const closed = await fleet.publish('2025-06-02T20:00:00Z')
      expect(closed.outcome['eu-3']).toBe(
        "waiting: outside the rollout's windows: the next opens at 2025-06-03T08:00:00Z (2025-06-03 08:00 UTC)",
      )
      expect(await fleet.tags()).toMatchObject({ 'eu-3': [], 'eu-4': [] })

      // 9. Tuesday 08:30: the second batch.
      const second = await fleet.publish('2025-06-03T08:30:00Z')
      expect([second.outcome['eu-3'], second.outcome['eu-4']]).toEqual(['nginx/v1', 'nginx/v1'])
      expect(second.outcome['us-1']).toBe(
        'waiting: step rest starts after eu is healthy: eu-3 has no Ready condition and eu-4 has no Ready condition',
      )

      // 10. eu healthy and soaked; bulk publish by selector: us-1 waits for approval of rest, then goes.
      fleet.health(1, { 'eu-3': 'True', 'eu-4': 'True' })
      const byLabel = [
        'publish',
        '--fleet',
        'fleet',
        '--cache',
        'cache',
        '--selector',
        'region=us-west1',
        '--now',
        '2025-06-03T09:10:00Z',
      ]
      const waiting = await fleet.ok(...byLabel)
      expect(waiting.stderr).toContain(
        'us-1/nginx: waiting: step rest needs approval: kpt-variants rollout approve edge-monitor rest',
      )
      expect(waiting.stderr).toContain('0 published, 0 removed, 1 held back, 0 not published')
      await fleet.rollout(['approve', 'edge-monitor', 'rest'], '2025-06-03T09:11:00Z')
      const bulk = await fleet.ok(...byLabel.slice(0, -1), '2025-06-03T09:12:00Z')
      expect(bulk.stderr).toContain('us-1/nginx: published nginx/v1')
      expect(bulk.stderr).toContain('1 published, 0 removed, 0 held back, 0 not published')
      expect(Object.values(await fleet.tags())).toEqual(clusters.map(() => ['nginx/v1']))

      // 11. After the last step, every run is a no-op: nothing published, nothing held, not a ref moved.
      fleet.health(1, { 'us-1': 'True' })
      const refs = await fleet.refs()
      const done = await fleet.publish('2025-06-03T10:00:00Z')
      expect(done.outcome).toEqual({})
      expect(done.report.rollouts![0]).toMatchObject({ state: 'complete' })
      expect(
        (await fleet.ok('publish', '--fleet', 'fleet', '--cache', 'cache', '--now', '2025-06-03T10:01:00Z')).stderr,
      ).toContain('0 published, 0 removed, 0 held back, 0 not published')
      expect(await fleet.refs()).toBe(refs)

      // 12. A new upstream revision rolls out from the canary again; the approvals of v1 count for nothing.
      fleet.write(2)
      const v2 = await fleet.publish('2025-06-03T11:00:00Z')
      expect(v2.outcome['edge-01']).toBe('nginx/v2')
      // edge-01 still reports Ready (without a revisionAnnotation that is about whatever it runs): the soak starts again.
      expect(v2.outcome['eu-1']).toBe(
        'waiting: step eu starts after canary has soaked 30m since its last publish (2025-06-03T11:00:00Z): 30m left',
      )
    },
    timeout,
  )
})
