/**
 * `kpt-variants publish --fleet`: 1,000 open drafts across 100 downstream
 * repositories (ten packages of 50 resources in each, from ten
 * PackageVariantSets over 100 clusters) published in one run, against the
 * way before it: a `publish REPO --fleet` process per repository, timed on
 * ten of them and scaled to the hundred. Every run starts from the same
 * drafts: the repositories and the cache are put back before each.
 */
import { spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { clusterName, createFleet, setText } from './fleet-fixture.js'
import type { Benchmark } from './harness.js'
import { benchTmp, releaseWhenInMemory } from './scratch.js'

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)))
const launcher = join(root, 'bin', 'kpt-variants')
const repositories = 100
const packagesPerRepository = 10
const drafts = repositories * packagesPerRepository

interface Work {
  dir: string
  fleet: string
}

/** Runs kpt-variants in the work directory; returns stderr, or throws with it. */
function kptVariants(w: Work, args: string[], expect: RegExp): string {
  const run = spawnSync(process.execPath, [launcher, ...args], {
    cwd: w.dir,
    encoding: 'utf8',
    env: { ...process.env, XDG_CACHE_HOME: join(w.dir, 'xdg') },
    maxBuffer: 64 * 2 ** 20,
  })
  if (run.error) throw run.error
  if (run.status !== 0 || !expect.test(run.stderr))
    throw new Error(`kpt-variants ${args.join(' ')}: exit ${run.status}\n${run.stderr.slice(-3000)}`)
  return run.stderr
}

/** The fleet, its repositories with every draft open, and a copy of both (and the cache) to put back before each run. */
async function setup(): Promise<Work> {
  const dir = mkdtempSync(join(benchTmp(), 'kpt-variants-bench-publish-'))
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
  const fleet = await createFleet(dir, { variants: repositories, resources: 50 })
  for (let k = 2; k <= packagesPerRepository; k++) {
    writeFileSync(
      join(fleet, `set-${k}.yaml`),
      setText(1)
        .replace('name: app\n', `name: app-${k}\n`)
        .replace('        repoExpr: target.name', `        repoExpr: target.name\n        package: app-${k}`),
    )
  }
  mkdirSync(join(dir, 'repos'), { recursive: true })
  for (let i = 0; i < repositories; i++)
    spawnSync('git', ['init', '-q', '--bare', '-b', 'main', join(dir, 'repos', `${clusterName(i)}.git`)])
  const w = { dir, fleet }
  kptVariants(
    w,
    ['render', 'fleet', '--git', '--cache', 'cache', '--no-progress'],
    new RegExp(`${drafts} variant\\(s\\): ${drafts} created`),
  )
  for (const name of ['repos', 'cache']) cpSync(join(dir, name), join(dir, `pristine-${name}`), { recursive: true })
  return w
}

/** Before each run: the repositories and the cache as they were with every draft open. */
function putBack(input: unknown): void {
  const w = input as Work
  for (const name of ['repos', 'cache']) {
    rmSync(join(w.dir, name), { recursive: true, force: true })
    cpSync(join(w.dir, `pristine-${name}`), join(w.dir, name), { recursive: true })
  }
}

/** Repositories the baseline publishes one process each: a tenth of them, scaled. */
const sampled = 10

export const benchmarks: Benchmark[] = [
  {
    name: `publish --fleet: ${drafts.toLocaleString('en-US')} drafts across ${repositories} repositories in one run`,
    goal: { maxMs: 5000, label: '< 5 s' },
    iterations: 3,
    units: { count: drafts, name: 'draft' },
    setup,
    beforeEach: putBack,
    run: (input) =>
      kptVariants(
        input as Work,
        ['publish', '--fleet', 'fleet', '--cache', 'cache'],
        new RegExp(`${drafts} published, 0 removed, 0 held back, 0 not published`),
      ),
    baseline: {
      name: `a publish REPO --fleet process per repository (${sampled} of ${repositories} timed)`,
      scale: repositories / sampled,
      iterations: 1,
      beforeEach: putBack,
      run: (input) => {
        for (let i = 0; i < sampled; i++)
          kptVariants(input as Work, ['publish', clusterName(i), '--fleet', 'fleet', '--cache', 'cache'], /published/)
      },
    },
    teardown: (input) => releaseWhenInMemory((input as Work).dir),
  },
]
