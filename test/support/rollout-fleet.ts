/** The fleet of the progressive rollout e2e tests (rollout*.e2e.test.ts): six clusters, a Rollout, runs at a given `--now`. */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCli, runCliOk } from './cli-run.js'
import type { Run } from './cli-run.js'
import { documents, initBareRepos } from '../../scripts/fleet-builder.js'
import { createBlueprints, fleetFiles, workloadCluster } from './fleet.js'
import { git, writeTree } from './git-repo.js'
import { source } from './source.js'

export const timeout = 180_000

/** The clusters: a canary, four in eu-west1, one elsewhere. */
export const clusters = [
  { name: 'edge-01', region: 'us-east1', tier: 'canary' },
  { name: 'eu-1', region: 'eu-west1' },
  { name: 'eu-2', region: 'eu-west1' },
  { name: 'eu-3', region: 'eu-west1' },
  { name: 'eu-4', region: 'eu-west1' },
  { name: 'us-1', region: 'us-west1' },
]

export const rollout = (extra = '') =>
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

export type { Run }

export interface Report {
  variants: { path?: string; status: string; draft?: string; published?: string; held?: string }[]
  rollouts?: { rollout: string; state: string; reason: string; steps: { name: string; state: string }[] }[]
}

export class Fleet {
  readonly ready = new Map<string, 'True' | 'False'>()

  constructor(readonly dir: string) {}

  static async create(): Promise<Fleet> {
    const fleet = new Fleet(mkdtempSync(join(tmpdir(), 'kpt-variants-rollout-e2e-')))
    await createBlueprints(join(fleet.dir, 'repos', 'blueprints'))
    await initBareRepos(
      join(fleet.dir, 'repos'),
      clusters.map((c) => c.name),
    )
    fleet.write(1)
    writeTree(join(fleet.dir, 'fleet'), { 'rollout.yaml': rollout() })
    return fleet
  }

  /** Writes the fleet at upstream revision `revision`, each cluster (but `gone`) with its Ready condition (none until set); the Rollout's file is left as it is. */
  write(revision: number, gone?: string): void {
    const files = fleetFiles({ clusters: clusters.map((c) => ({ name: c.name, region: c.region })), revision })
    files['clusters.yaml'] = documents(
      clusters
        .filter((c) => c.name !== gone)
        .map((c) => workloadCluster(c, c.tier ? { tier: c.tier } : {}, this.ready.get(c.name))),
    )
    writeTree(join(this.dir, 'fleet'), files)
  }

  /** Sets clusters' Ready condition and rewrites the fleet. */
  health(revision: number, conditions: Record<string, 'True' | 'False'>): void {
    for (const [name, status] of Object.entries(conditions)) this.ready.set(name, status)
    this.write(revision)
  }

  run(...args: string[]): Promise<Run> {
    return runCli(this.dir, args)
  }

  ok(...args: string[]): Promise<Run> {
    return runCliOk(this.dir, args)
  }

  /** `rollout COMMAND... --fleet fleet --cache cache --now NOW`. */
  rollout(command: string[], now: string): Promise<Run> {
    return this.ok('rollout', ...command, '--fleet', 'fleet', '--cache', 'cache', '--now', now)
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

export const v1 = 'nginx/v1@'
