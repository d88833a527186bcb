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
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import { gitIdentity, repoRoot } from './e2e/runner.js'
import { createBlueprints, fleetFiles, v1Image } from './support/fleet.js'
import { git, writeTree } from './support/git-repo.js'
import { source } from './support/source.js'

const bin = join(repoRoot, 'bin', 'kpt-variants')
const timeout = 180_000

/** The clusters: a canary, four in eu-west1, one elsewhere. */
const clusters = [
  { name: 'edge-01', region: 'us-east1', tier: 'canary' },
  { name: 'eu-1', region: 'eu-west1' },
  { name: 'eu-2', region: 'eu-west1' },
  { name: 'eu-3', region: 'eu-west1' },
  { name: 'eu-4', region: 'eu-west1' },
  { name: 'us-1', region: 'us-west1' },
]

const rollout = (extra = '') =>
  source`
  apiVersion: kpt-variants.dev/v1alpha1
  kind: Rollout
  metadata:
    name: edge-monitor
    namespace: default
  spec:
    packageVariantSet: nginx
    steps:
    - name: canary
      targets: {matchLabels: {tier: canary}}
    - name: eu
      targets: {matchLabels: {region: eu-west1}}
      maxConcurrent: 2
    - name: rest
    gates:
      soak: 30m
      health: {condition: Ready}
      approval: manual
    # Weekdays, 08:00 to 18:00 UTC.
    windows:
    - {schedule: "0 8 * * 1-5", duration: 10h}
` + extra

interface Run {
  exitCode: number
  stdout: string
  stderr: string
}

interface Report {
  variants: { path?: string; status: string; draft?: string; published?: string; held?: string }[]
  rollouts?: { rollout: string; state: string; reason: string; steps: { name: string; state: string }[] }[]
}

class Fleet {
  readonly ready = new Map<string, 'True' | 'False'>()

  constructor(readonly dir: string) {}

  static async create(): Promise<Fleet> {
    const fleet = new Fleet(mkdtempSync(join(tmpdir(), 'kpt-variants-rollout-e2e-')))
    await createBlueprints(join(fleet.dir, 'repos', 'blueprints'))
    for (const c of clusters) await git(fleet.dir, 'init', '-q', '--bare', '-b', 'main', `repos/${c.name}.git`)
    fleet.write(1)
    writeTree(join(fleet.dir, 'fleet'), { 'rollout.yaml': rollout() })
    return fleet
  }

  /** Writes the fleet at upstream revision `revision`, each cluster (but `gone`) with its Ready condition (none until set); the Rollout's file is left as it is. */
  write(revision: number, gone?: string): void {
    const files = fleetFiles({ clusters: clusters.map((c) => ({ name: c.name, region: c.region })), revision })
    files['clusters.yaml'] = clusters
      .filter((c) => c.name !== gone)
      .map((c) => {
        const ready = this.ready.get(c.name)
        const lines = [
          'apiVersion: infra.nephio.org/v1alpha1',
          'kind: WorkloadCluster',
          'metadata:',
          `  name: ${c.name}`,
          '  namespace: default',
          '  labels:',
          '    nephio.org/site-type: edge',
          `    region: ${c.region}`,
        ]
        if (c.tier) lines.push(`    tier: ${c.tier}`)
        lines.push('spec:', `  clusterName: ${c.name}`)
        if (ready)
          lines.push(
            'status:',
            '  conditions:',
            `  - {type: Ready, status: "${ready}", reason: ${ready === 'True' ? 'Running' : 'CrashLoopBackOff'}}`,
          )
        return `${lines.join('\n')}\n`
      })
      .join('---\n')
    writeTree(join(this.dir, 'fleet'), files)
  }

  /** Sets clusters' Ready condition and rewrites the fleet. */
  health(revision: number, conditions: Record<string, 'True' | 'False'>): void {
    for (const [name, status] of Object.entries(conditions)) this.ready.set(name, status)
    this.write(revision)
  }

  async run(...args: string[]): Promise<Run> {
    const run = await execa('node', [bin, ...args], {
      cwd: this.dir,
      env: { ...process.env, ...gitIdentity },
      reject: false,
      stdin: 'ignore',
    })
    return { exitCode: run.exitCode ?? -1, stdout: String(run.stdout), stderr: String(run.stderr) }
  }

  async ok(...args: string[]): Promise<Run> {
    const run = await this.run(...args)
    if (run.exitCode !== 0)
      throw new Error(
        `kpt-variants ${args.join(' ')} exited ${run.exitCode}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`,
      )
    return run
  }

  /** `render fleet --git --publish --now NOW --json`: the report, and each variant's held reason or published tag by cluster. */
  async publish(now: string): Promise<{ report: Report; outcome: Record<string, string> }> {
    const run = await this.ok('render', 'fleet', '--git', '--publish', '--cache', 'cache', '--json', '--now', now)
    const report = JSON.parse(run.stdout) as Report
    const outcome = Object.fromEntries(
      report.variants.filter((v) => v.published || v.held).map((v) => [v.path!.split('/')[0]!, v.published ?? v.held!]),
    )
    return { report, outcome }
  }

  /** The published tags of every cluster's repository. */
  async tags(): Promise<Record<string, string[]>> {
    const out: Record<string, string[]> = {}
    for (const c of clusters)
      out[c.name] = (await git(join(this.dir, 'repos', `${c.name}.git`), 'tag', '--list')).split('\n').filter(Boolean)
    return out
  }

  /** Every ref of every cluster's repository. */
  async refs(): Promise<string> {
    const all: string[] = []
    for (const c of clusters)
      all.push(await git(join(this.dir, 'repos', `${c.name}.git`), 'for-each-ref', '--format=%(refname) %(objectname)'))
    return all.join('\n')
  }
}

const v1 = 'nginx/v1@'

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
      const status = await fleet.ok(
        'rollout',
        'status',
        'edge-monitor',
        '--fleet',
        'fleet',
        '--cache',
        'cache',
        '--now',
        '2025-06-02T08:31:00Z',
      )
      expect(status.stdout).toMatch(/^canary +done +1 +1 +1 /m)
      expect(status.stdout).toMatch(
        /^eu +waiting +4 +0 +0 +needs approval: kpt-variants rollout approve edge-monitor eu$/m,
      )

      // 4. Approved in the fleet's own file (a change to review and commit), for this revision.
      const approved = await fleet.ok(
        'rollout',
        'approve',
        'edge-monitor',
        'eu',
        '--fleet',
        'fleet',
        '--cache',
        'cache',
        '--now',
        '2025-06-02T08:32:00Z',
      )
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
      const haltedStatus = await fleet.ok(
        'rollout',
        'status',
        'edge-monitor',
        '--fleet',
        'fleet',
        '--cache',
        'cache',
        '--now',
        '2025-06-02T08:40:00Z',
        '--json',
      )
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
      await fleet.ok(
        'rollout',
        'approve',
        'edge-monitor',
        'rest',
        '--fleet',
        'fleet',
        '--cache',
        'cache',
        '--now',
        '2025-06-03T09:11:00Z',
      )
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
      await fleet.ok(
        'rollout',
        'approve',
        'edge-monitor',
        'eu',
        '--fleet',
        'fleet',
        '--cache',
        'cache',
        '--now',
        '2025-06-02T08:31:00Z',
      )
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
})
