/**
 * Safe by default, on the README's demo fleet, through the CLI with real git
 * repositories: a typo in a set's target kind fails the set instead of
 * deleting every package of it, and a run that would take most of a set's
 * packages away stops at the deletion guard (--out, --git, --dry-run, publish
 * --fleet) unless a person allows it.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDemoFleet } from '../scripts/demo-fleet.js'
import { runCli } from './support/cli-run.js'
import type { Run } from './support/cli-run.js'
import { git } from './support/git-repo.js'

const timeout = 240_000
const clusters = Array.from({ length: 12 }, (_, i) => `edge-${String(i + 1).padStart(2, '0')}`)
/** The clusters the first render installed cert-manager into (README): a held deletion must keep it there. */
const installedThere = clusters.slice(5)

interface Report {
  variants: {
    subject: string
    path?: string
    status: string
    reasons: { code: string; message: string }[]
    held?: string
  }[]
  warnings?: string[]
}

let dir: string
afterEach(() => rmSync(dir, { recursive: true, force: true }))

async function demo(): Promise<void> {
  dir = mkdtempSync(join(tmpdir(), 'kpt-variants-safe-deletions-'))
  await createDemoFleet(dir)
}

function kptVariants(...args: string[]): Promise<Run> {
  return runCli(dir, [...args, '--cache', join(dir, 'cache')])
}

async function ok(...args: string[]): Promise<Run> {
  const run = await kptVariants(...args)
  if (run.exitCode !== 0) throw new Error(`${args.join(' ')} exited ${run.exitCode}\n${run.stderr}`)
  return run
}

/** `sed -i s/from/to/g file` in the fleet. */
function edit(file: string, from: string | RegExp, to: string): void {
  const path = join(dir, 'fleet', file)
  const text = readFileSync(path, 'utf8')
  const next = text.replace(typeof from === 'string' ? new RegExp(escape(from), 'g') : from, to)
  if (next === text) throw new Error(`fleet/${file} has no ${String(from)}`)
  writeFileSync(path, next)
}
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** The clusters' labels rewritten so that only `kept` stay edge sites. */
function relabelAllBut(...kept: string[]): void {
  const text = readFileSync(join(dir, 'fleet', 'clusters.yaml'), 'utf8')
  const docs = text.split(/^---\n/m).map((doc) => {
    const name = /^ {2}name: (\S+)$/m.exec(doc)?.[1]
    return name && !kept.includes(name) ? doc.replace('nephio.org/site-type: edge', 'nephio.org/site-type: core') : doc
  })
  writeFileSync(join(dir, 'fleet', 'clusters.yaml'), docs.join('---\n'))
}

/** Every file under `rendered`, with its content. */
function tree(root = join(dir, 'rendered')): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (rel: string) => {
    for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
      const path = rel ? `${rel}/${entry.name}` : entry.name
      if (entry.isDirectory()) walk(path)
      else out[path] = readFileSync(join(root, path), 'utf8')
    }
  }
  walk('')
  return out
}

/** Every ref of every cluster's repository. */
async function refs(): Promise<string> {
  const all: string[] = []
  for (const c of clusters)
    all.push(await git(join(dir, 'repos', `${c}.git`), 'for-each-ref', '--format=%(refname) %(objectname)'))
  return all.join('\n')
}

const report = (run: Run) => JSON.parse(run.stdout) as Report
const typo =
  'spec.targets[0].objectSelector: no matches for kind "WorkloadClustr" in version "infra.nephio.org/v1alpha1"'

test(
  'a one-letter typo in the target kind fails the set and writes nothing (--out, --dry-run, --git)',
  async () => {
    await demo()
    await ok('render', 'fleet', '--out', 'rendered')
    const before = tree()
    edit('nginx-set.yaml', 'kind: WorkloadCluster\n', 'kind: WorkloadClustr\n')

    for (const dryRun of [['--dry-run'], []]) {
      const run = await kptVariants('render', 'fleet', '--out', 'rendered', '--json', ...dryRun)
      expect(run.exitCode).toBe(1)
      expect(report(run).variants).toEqual([
        {
          subject: 'PackageVariantSet default/nginx',
          status: 'failed',
          reasons: [{ code: 'NoMatchingTargets', message: typo }],
          warnings: [],
          conflicts: [],
        },
      ])
      expect(run.stderr).toContain(`PackageVariantSet default/nginx: ${typo}`)
      expect(run.stderr).not.toMatch(/deleted|orphaned|remove cert-manager/)
      // Every nginx package and every cert-manager the first render installed are still there, byte for byte.
      expect(tree()).toEqual(before)
    }

    // With --git: the same failure, and no draft, removal or otherwise, in any repository.
    edit('nginx-set.yaml', 'kind: WorkloadClustr\n', 'kind: WorkloadCluster\n')
    await ok('render', 'fleet', '--git', '--publish')
    const published = await refs()
    expect(published).toContain('refs/tags/nginx/v1')
    edit('nginx-set.yaml', 'kind: WorkloadCluster\n', 'kind: WorkloadClustr\n')
    const drafts = await kptVariants('render', 'fleet', '--git')
    expect(drafts.exitCode).toBe(1)
    expect(drafts.stderr).toContain(typo)
    expect(await refs()).toBe(published)
    const publish = await kptVariants('publish', '--fleet', 'fleet')
    expect(publish.exitCode).toBe(0)
    expect(await refs()).toBe(published)
  },
  timeout,
)

test(
  '11 of 12 clusters relabelled out stops at the deletion guard, keeps what they need, and --allow-deletions goes through',
  async () => {
    await demo()
    await ok('render', 'fleet', '--out', 'rendered')
    const before = tree()
    relabelAllBut('edge-01')
    for (const dryRun of [['--dry-run'], []]) {
      const run = await kptVariants('render', 'fleet', '--out', 'rendered', ...dryRun)
      expect(run.exitCode).toBe(1)
      expect(run.stderr).toContain(
        'PackageVariantSet default/nginx: the run would delete 11 of its 12 packages (edge-02/nginx, edge-03/nginx, edge-04/nginx and 8 more), more than the deletion guard allows (half of a set, and at least 2): their targets no longer match. Nothing of the set was written. If this is meant: --allow-deletions for one run, --max-deletions N or P% for another limit, or the annotation kpt-variants.dev/allow-mass-deletion: "true" on the set [DeletionGuard]\n',
      )
      // The dependencies the held deletions would have removed stay too.
      expect(run.stderr).not.toContain('remove cert-manager')
      expect(tree()).toEqual(before)
    }

    // A higher limit, or allowing deletions for one run, lets them go; the dependencies nothing needs go with them.
    expect((await kptVariants('render', 'fleet', '--out', 'rendered', '--max-deletions', '10')).exitCode).toBe(1)
    const allowed = await ok('render', 'fleet', '--out', 'rendered', '--allow-deletions', '--json')
    const removed = (status: string) =>
      report(allowed)
        .variants.filter((v) => v.status === status)
        .map((v) => v.path)
    expect(removed('deleted')).toEqual(clusters.slice(1).map((c) => `${c}/nginx`))
    // The catalog's policy for cert-manager: kept, no longer marked as a dependency.
    expect(removed('orphaned')).toEqual(installedThere.map((c) => `${c}/cert-manager`))
    expect(readdirSync(join(dir, 'rendered'))).toEqual(['edge-01', ...installedThere])
  },
  timeout,
)

test(
  'one cluster relabelled out is deleted as before; the annotation on a set opts it out of the guard; a set removed from the fleet is held',
  async () => {
    await demo()
    await ok('render', 'fleet', '--out', 'rendered')
    relabelAllBut(...clusters.filter((c) => c !== 'edge-12'))
    const one = await ok('render', 'fleet', '--out', 'rendered', '--json')
    expect(
      report(one)
        .variants.filter((v) => v.status === 'deleted' || v.status === 'orphaned')
        .map((v) => `${v.status} ${v.path}`),
    ).toEqual(['orphaned edge-12/cert-manager', 'deleted edge-12/nginx'])

    // The set removed from the fleet: held, and the reason says so.
    const set = readFileSync(join(dir, 'fleet', 'nginx-set.yaml'), 'utf8')
    rmSync(join(dir, 'fleet', 'nginx-set.yaml'))
    const gone = await kptVariants('render', 'fleet', '--out', 'rendered')
    expect(gone.exitCode).toBe(1)
    expect(gone.stderr).toContain(
      'the run would delete 11 of its 11 packages (edge-01/nginx, edge-02/nginx, edge-03/nginx and 8 more), more than the deletion guard allows (half of a set, and at least 2): the PackageVariantSet is no longer in the fleet.',
    )
    expect(readdirSync(join(dir, 'rendered', 'edge-01'))).toEqual(['nginx'])

    // Annotated, the set may lose any number of its packages.
    writeFileSync(
      join(dir, 'fleet', 'nginx-set.yaml'),
      set.replace(
        '  namespace: default\n',
        '  namespace: default\n  annotations:\n    kpt-variants.dev/allow-mass-deletion: "true"\n',
      ),
    )
    relabelAllBut('edge-01')
    const annotated = await ok('render', 'fleet', '--out', 'rendered', '--json')
    expect(report(annotated).variants.filter((v) => v.status === 'deleted')).toHaveLength(10)
  },
  timeout,
)

test(
  'with --git the guard holds the removal drafts, and publish --fleet holds removal drafts made with --allow-deletions',
  async () => {
    await demo()
    await ok('render', 'fleet', '--git', '--publish')
    const published = await refs()
    relabelAllBut('edge-01')
    const held = await kptVariants('render', 'fleet', '--git', '--publish', '--publish-deletions')
    expect(held.exitCode).toBe(1)
    expect(held.stderr).toContain('the run would delete 11 of its 12 packages')
    expect(await refs()).toBe(published)

    // Proposed by a run that allowed them: eleven removal drafts. Publishing them all is the same mass deletion.
    await ok('render', 'fleet', '--git', '--allow-deletions')
    const drafted = await refs()
    expect(drafted.match(/refs\/heads\/drafts\/nginx\//g)).toHaveLength(11)
    // Proposed once, they are not counted again: the next render holds nothing and writes nothing.
    expect((await kptVariants('render', 'fleet', '--git')).exitCode).toBe(0)
    expect(await refs()).toBe(drafted)
    const publish = await kptVariants('publish', '--fleet', 'fleet')
    expect(publish.exitCode).toBe(1)
    expect(publish.stderr).toContain(
      'edge-02/nginx: not published: PackageVariantSet default/nginx: publishing its removal drafts would delete 11 of its 12 packages',
    )
    expect(publish.stderr).toContain('None of them was published.')
    // The dependencies' removal drafts beside them wait with them.
    expect(publish.stderr).toContain(
      'edge-06/cert-manager: not published: held with the removal of edge-06/nginx, which the deletion guard holds',
    )
    expect(await refs()).toBe(drafted)
    const allowed = await kptVariants('publish', '--fleet', 'fleet', '--allow-deletions')
    expect(allowed.exitCode).toBe(0)
    expect(allowed.stderr).toContain('edge-02/nginx: removed')
    expect(await git(join(dir, 'repos', 'edge-02.git'), 'ls-tree', '--name-only', 'main')).not.toContain('nginx')
  },
  timeout,
)
