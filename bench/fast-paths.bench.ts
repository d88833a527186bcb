/**
 * Each fast path (functions/krm/fast-paths.ts) against its own absence, in
 * the same run: the case runs `kpt-variants render` as a child process with
 * every fast path on, the baseline the same with that one turned off
 * (KPT_VARIANTS_NO_FAST_PATHS=<name>). A ratio under 1 is what the path
 * gains; a path whose ratio is not under 1 on the machine has not earned its
 * place. The fleet: 4,000 variants of a 50-resource package (enough for the
 * stat thread to start; 10,000 for the render threads' row, which start only
 * for big fleets), the same at upstream
 * revision 2 for the update, and for the spawner 200 variants rendered with
 * --git into a repository each (a git process or more per repository).
 */
import { spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastPath } from '../functions/krm/fast-paths.js'
import { initBareRepos } from '../scripts/fleet-builder.js'
import { clusterName, createFleet, setText } from './fleet-fixture.js'
import type { Benchmark } from './harness.js'
import { agePastRacyWindow, benchTmp } from './scratch.js'

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)))
const launcher = join(root, 'bin', 'kpt-variants')
const variants = Number(process.env['KPT_VARIANTS_BENCH_FAST_PATH_VARIANTS'] || 4000)
/** The render threads start only for big fleets (defaultThreads in orchestrator/run/threads.ts): their row is measured where they do. */
const threadVariants = Number(process.env['KPT_VARIANTS_BENCH_THREADS_VARIANTS'] || 10_000)
const gitVariants = 200

interface Work {
  dir: string
  fleet: string
  /** The run's own directory, made anew before each run (untimed) with the last one's removed: a few renders of 4,000 packages left in place use up tmpfs's inodes. */
  runDir: string
  /** A rendered output, its record in `cache`, for the re-render cases. */
  rendered: string
  /** The fleet with its set at upstream revision 2: rendered over a copy of `rendered`, an update of every variant. */
  fleetV2: string
}

const works = new Map<string, Promise<Work>>()

function workOnce(kind: 'directory' | 'git', size = kind === 'git' ? gitVariants : variants): Promise<Work> {
  let work = works.get(`${kind} ${size}`)
  if (!work) {
    work = (async () => {
      const dir = mkdtempSync(join(benchTmp(), `kpt-variants-bench-fast-paths-${kind}-`))
      process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
      const fleet = await createFleet(dir, { variants: size, resources: 50 })
      // Each cluster's deployment repository, for --git to push to.
      if (kind === 'git')
        await initBareRepos(
          join(dir, 'repos'),
          Array.from({ length: size }, (_, i) => clusterName(i)),
        )
      const w: Work = { dir, fleet, runDir: join(dir, 'run-0'), rendered: '', fleetV2: join(dir, 'fleet-v2') }
      if (kind === 'directory') {
        cpSync(fleet, w.fleetV2, { recursive: true })
        writeFileSync(join(w.fleetV2, 'set.yaml'), setText(2))
        w.rendered = join(dir, 'rendered')
        render(w, { out: w.rendered, cache: join(dir, 'cache') })
        await agePastRacyWindow()
      }
      return w
    })()
    works.set(`${kind} ${size}`, work)
  }
  return work
}

/** `kpt-variants render` as a child process, with the fast paths `off` turned off; checks it exits 0. */
function render(
  w: Work,
  options: { out?: string; git?: true; cache: string; force?: true; fleet?: string },
  off: FastPath[] = [],
): void {
  const args = [launcher, 'render', options.fleet ?? w.fleet, '--cache', options.cache, '--no-progress']
  if (options.git) args.push('--git')
  else args.push('--out', options.out!)
  if (options.force) args.push('--force')
  const env = { ...process.env, KPT_VARIANTS_NO_FAST_PATHS: off.join(',') }
  const run = spawnSync(process.execPath, args, { encoding: 'utf8', env, cwd: w.dir, maxBuffer: 256 * 2 ** 20 })
  if (run.status !== 0) throw new Error(`kpt-variants render exited ${run.status}:\n${run.stderr.slice(-4000)}`)
}

/**
 * A case: the render `what` with every fast path on but `more.alsoOff`,
 * against the same with `path` off too.
 */
function abCase(
  path: FastPath,
  what: string,
  kind: 'directory' | 'git',
  options: (w: Work) => Parameters<typeof render>[1],
  more: {
    /** Fast paths off in both runs (one that would answer first and hide this one). */
    alsoOff?: FastPath[]
    /** Before each run, untimed. */
    prepare?: (w: Work) => void
    /** The fleet's number of variants (workOnce's default for the kind without it). */
    size?: number
  } = {},
): Benchmark {
  const { alsoOff = [], prepare = () => {}, size } = more
  const before = (input: unknown) => {
    newRunDir(input)
    prepare(input as Work)
  }
  const hidden = alsoOff.length > 0 ? ` (${alsoOff.join(', ')} off in both)` : ''
  return {
    name: `fast path ${path}: ${what}${hidden}`,
    goal: { maxRatio: 1, label: '< 1x its absence' },
    setup: () => workOnce(kind, size),
    beforeEach: before,
    iterations: 3,
    run: (input) => render(input as Work, options(input as Work), alsoOff),
    baseline: {
      name: `the same with KPT_VARIANTS_NO_FAST_PATHS=${[...alsoOff, path].join(',')}`,
      iterations: 3,
      beforeEach: before,
      run: (input) => render(input as Work, options(input as Work), [...alsoOff, path]),
    },
  }
}

let runs = 0

function newRunDir(input: unknown): void {
  const w = input as Work
  rmSync(w.runDir, { recursive: true, force: true })
  w.runDir = join(w.dir, `run-${++runs}`)
}

const fresh = (w: Work) => ({ out: join(w.runDir, 'out'), cache: join(w.runDir, 'cache') })
const again = (w: Work) => ({ out: w.rendered, cache: join(w.dir, 'cache') })
const forced = (w: Work) => ({ ...again(w), force: true as const })
/** An update: revision 2 rendered over a copy of the revision-1 output (made untimed, before each run), with a copy of its record. */
const update = (w: Work) => ({ out: join(w.runDir, 'out'), cache: join(w.runDir, 'cache'), fleet: w.fleetV2 })
const copyRendered = (w: Work) => {
  cpSync(w.rendered, join(w.runDir, 'out'), { recursive: true })
  cpSync(join(w.dir, 'cache'), join(w.runDir, 'cache'), { recursive: true })
}
const n = variants.toLocaleString('en')

export const benchmarks: Benchmark[] = [
  // A first render into an empty directory takes one render thread per two CPUs; --force over output, one per CPU.
  abCase(
    'threads',
    `re-render ${threadVariants.toLocaleString('en')} unchanged variants --force`,
    'directory',
    forced,
    { size: threadVariants },
  ),
  abCase('staging-thread', `render ${n} new variants`, 'directory', fresh),
  abCase('stat-thread', `re-render ${n} unchanged variants`, 'directory', again),
  // The quiet run answers an unchanged fleet before the record of earlier renders is asked.
  abCase('memo', `re-render ${n} unchanged variants`, 'directory', again, { alsoOff: ['quiet-run'] }),
  abCase('quiet-run', `re-render ${n} unchanged variants`, 'directory', again),
  // Read-ahead works beside one render thread only: an update's (a record of earlier renders keeps it to one).
  abCase('read-ahead', `upstream update of ${n} variants`, 'directory', update, { prepare: copyRendered }),
  // --force reads every package, parses, renders, prints and compares it: the most YAML work of a render.
  abCase('yaml', `re-render ${n} unchanged variants --force`, 'directory', forced),
  // The first run (the warm-up) drafts every variant; each timed run clones the repositories anew and reads them.
  abCase(
    'spawner',
    `re-render --git ${gitVariants} drafted variants from a new cache, a repository each`,
    'git',
    (w) => ({
      git: true,
      cache: join(w.runDir, 'cache'),
    }),
  ),
]
