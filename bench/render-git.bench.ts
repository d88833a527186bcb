/**
 * `kpt-variants render --git` against directory output, on fleets of 100,
 * 1,000 and 10,000 variants of a 50-resource package that all go to one
 * downstream repository (`deployments`, a bare repository): the new variants
 * proposed as draft branches in one fast-import and one push, and a
 * re-render that finds every draft unchanged. The baseline of each is the
 * same render with `--out DIR`, in the same run, so the ratio is what git
 * costs. Then `--publish` of the new variants against `--git` alone: what
 * publishing costs (the packages committed onto the branch in the same push,
 * a tag each; 10,000 into one directory share 100 commits).
 * The child's peak RSS is measured (bench/peak-rss.ts).
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createFleet, fleetSizes } from './fleet-fixture.js'
import type { Benchmark } from './harness.js'
import { peakRssFigure } from './report.js'
import { agePastRacyWindow, benchTmp, releaseWhenInMemory } from './scratch.js'

const resources = 50
const root = resolve(fileURLToPath(new URL('../..', import.meta.url)))
const launcher = join(root, 'bin', 'kpt-variants')
const preload = new URL('./peak-rss.js', import.meta.url).href

interface Work {
  size: number
  dir: string
  fleet: string
  remote: string
  count: number
  /** The largest peak RSS of a --git run of the current case, in KiB. */
  peakKib: number
}
const works = new Map<number, Promise<Work>>()

function fleetOnce(size: number): Promise<Work> {
  let work = works.get(size)
  if (!work) {
    work = (async () => {
      const dir = mkdtempSync(join(benchTmp(), `kpt-variants-bench-git-${size}-`))
      process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
      const fleet = await createFleet(dir, { variants: size, resources, oneRepository: true })
      return { size, dir, fleet, remote: join(dir, 'repos', 'deployments.git'), count: 0, peakKib: 0 }
    })()
    works.set(size, work)
  }
  return work
}

/** Runs a render and checks its summary line; a --git run's peak RSS is kept unless `keepPeak` is false. */
function render(w: Work, args: string[], expect: string, keepPeak = args.includes('--git')): void {
  // The record of earlier renders of --out runs stays in the work directory (--git runs keep theirs in --cache).
  const rssFile = join(w.dir, 'peak-rss')
  rmSync(rssFile, { force: true })
  const env = {
    ...process.env,
    XDG_CACHE_HOME: join(dirname(args[0]!), 'xdg-cache'),
    KPT_VARIANTS_BENCH_RSS_FILE: rssFile,
  }
  const run = spawnSync(process.execPath, ['--import', preload, launcher, 'render', ...args, '--no-progress'], {
    encoding: 'utf8',
    env,
    maxBuffer: 256 * 2 ** 20,
  })
  if (run.error) throw run.error
  const summary = /\d+ variant\(s\): .*/.exec(run.stderr)?.[0]
  if (run.status !== 0 || summary !== `${w.size} variant(s): ${expect}`)
    throw new Error(
      `kpt-variants render ${args.join(' ')}: exit ${run.status}, "${summary}"\n${run.stderr.slice(-3000)}`,
    )
  if (keepPeak) w.peakKib = Math.max(w.peakKib, Number(readFileSync(rssFile, 'utf8')))
}

/** An empty downstream repository and a new cache, so a new-variants run drafts them all; returns the cache. */
function freshRemote(w: Work): string {
  rmSync(w.remote, { recursive: true, force: true })
  spawnSync('git', ['init', '-q', '--bare', '-b', 'main', w.remote])
  return join(w.dir, `cache-${++w.count}`)
}

/** A work with the cache of its --git runs. */
type GitWork = Work & { cache: string }

/** Before each run of new variants: an empty downstream repository and its new cache. */
function withFreshRemote(input: unknown): void {
  const w = input as GitWork
  w.cache = freshRemote(w)
}

/** A --git render (with `extra` options) into the work's cache; see render for `keepPeak`. */
function renderGit(input: unknown, expect: string, extra: string[] = [], keepPeak?: boolean): void {
  const w = input as GitWork
  render(w, [w.fleet, '--git', ...extra, '--cache', w.cache], expect, keepPeak)
}

const created = (size: number) => `${size} created, 0 updated, 0 unchanged, 0 failed`
const unchanged = (size: number) => `0 created, 0 updated, ${size} unchanged, 0 failed`
const count = (n: number) => n.toLocaleString('en-US')
/** Iterations: one for the big fleet, without a warm-up (each run is tens of seconds). */
const iterations = (size: number) => (size >= 10_000 ? { iterations: 1, warmUp: false } : { iterations: 3 })
const figures = (input: unknown) => ({ [peakRssFigure]: Math.round(((input as Work).peakKib / 1024) * 10) / 10 })

export const benchmarks: Benchmark[] = fleetSizes.flatMap((size): Benchmark[] => [
  {
    name: `render --git ${count(size)} new variants into one repository (${resources} resources each)`,
    ...iterations(size),
    units: { count: size, name: 'variant' },
    setup: () => fleetOnce(size),
    beforeEach: withFreshRemote,
    run: (input) => renderGit(input, created(size)),
    baseline: {
      name: 'the same render with --out DIR',
      beforeEach(input) {
        const w = input as Work & { out?: string }
        w.out = join(w.dir, `out-${++w.count}`)
      },
      run: (input) =>
        render(input as Work, [(input as Work).fleet, '--out', (input as Work & { out: string }).out], created(size)),
    },
    figures,
  },
  {
    name: `re-render --git ${count(size)} unchanged drafts`,
    ...iterations(size),
    units: { count: size, name: 'variant' },
    async setup() {
      const w = await fleetOnce(size)
      const cache = freshRemote(w)
      render(w, [w.fleet, '--git', '--cache', cache], created(size))
      const out = join(w.dir, `out-${++w.count}`)
      render(w, [w.fleet, '--out', out], created(size))
      // As in render.bench.ts (settleRecords): one re-render, long after the last write, records the output.
      await agePastRacyWindow()
      render(w, [w.fleet, '--out', out], unchanged(size))
      w.peakKib = 0
      return Object.assign(w, { cache, out })
    },
    run: (input) => renderGit(input, unchanged(size)),
    baseline: {
      name: 'the same re-render with --out DIR',
      run: (input) =>
        render(input as Work, [(input as Work).fleet, '--out', (input as Work & { out: string }).out], unchanged(size)),
    },
    figures,
  },
  {
    name: `render --git --publish ${count(size)} new variants (published in the drafts' own push, a tag each)`,
    ...iterations(size),
    // Issue 31: publishing is cheap next to rendering.
    ...(size >= 10_000 ? { goal: { maxRatio: 1.5, label: '< 1.5x the drafts alone' } } : {}),
    units: { count: size, name: 'variant' },
    async setup() {
      const w = await fleetOnce(size)
      w.peakKib = 0
      return w
    },
    beforeEach: withFreshRemote,
    run: (input) => renderGit(input, created(size), ['--publish']),
    baseline: {
      name: 'the same render with --git alone (drafts)',
      beforeEach: withFreshRemote,
      // The peak RSS is the --publish runs'.
      run: (input) => renderGit(input, created(size), [], false),
    },
    figures,
    // The last case of its size: its directory goes now if in memory (see scratch.ts).
    teardown: (input) => releaseWhenInMemory((input as Work).dir),
  },
])
