/**
 * `kpt-variants render` end to end over a generated fleet of 1,000 variants
 * of a 50-resource package (bench/fleet-fixture.ts): a first render into an
 * empty output directory, a re-render that finds every package unchanged,
 * and a --dry-run. Each runs `node bin/kpt-variants render FLEET --out DIR
 * --no-progress` as a child process, so the figures include Node start-up,
 * and the child's peak RSS is measured (bench/peak-rss.ts). The baseline is
 * the kpt way of doing the same per variant, `kpt pkg get --for-deployment`
 * then `kpt fn eval --exec package-variant`, sequentially as a shell loop
 * would; at ~0.5 s a variant it is timed on a sample and extrapolated.
 *
 * Every run writes into a directory of its own, and nothing is deleted
 * until the process exits: on ext4, creating files soon after deleting many
 * is many times slower (the inode allocator skips recently deleted inodes,
 * reading each one's block), which would make one run's figures depend on
 * the clean-up of the one before. For the same reason, run the benchmark
 * again only a minute or so after the last run's clean-up. The fleet goes
 * under KPT_VARIANTS_BENCH_TMP (e.g. /dev/shm, to leave the disk out of the
 * figures), else the system's temporary directory.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { clusterName, createFleet, packageVariantText } from './fleet-fixture.js'
import type { Benchmark } from './harness.js'

const variants = 1000
const resources = 50
/** Variants the kpt baseline runs (covers the fixture's four regions); extrapolated to `variants`. */
const kptSample = 5

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)))
const launcher = join(root, 'bin', 'kpt-variants')
const packageVariantBin = join(root, 'bin', 'package-variant')
const preload = new URL('./peak-rss.js', import.meta.url).href

/** The generated fleet, made once for all three benchmarks and removed when the process exits. */
interface Work {
  dir: string
  fleet: string
  /** The blueprint repository as kpt names it (`<repo>.git/<package>@<tag>`). */
  repo: string
  /** The output directory of the last "new variants" run, which the re-render reuses. */
  out: string
  /** Numbers the directories each run writes into (see above: nothing is deleted before the end). */
  next(kind: string): string
}
let work: Promise<Work> | undefined

function fleetOnce(): Promise<Work> {
  work ??= (async () => {
    const dir = mkdtempSync(join(process.env['KPT_VARIANTS_BENCH_TMP'] || tmpdir(), 'kpt-variants-bench-render-'))
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
    const fleet = await createFleet(dir, { variants, resources })
    let count = 0
    return { dir, fleet, repo: join(dir, 'repos', 'blueprints'), out: '', next: (kind: string) => join(dir, `${kind}-${++count}`) }
  })()
  return work
}

/** What each benchmark keeps across its runs. */
interface State {
  work: Work
  /** The largest peak RSS of any run, in KiB. */
  peakKib: number
  outcome: string
}

async function state(): Promise<State> {
  return { work: await fleetOnce(), peakKib: 0, outcome: '' }
}

/** Runs `kpt-variants render` as a child process and checks its summary line; records the peak RSS. */
function render(s: State, out: string, extra: string[], expect: { created?: number; unchanged?: number }): void {
  const rssFile = join(s.work.dir, 'peak-rss')
  rmSync(rssFile, { force: true })
  const run = spawnSync(process.execPath, ['--import', preload, launcher, 'render', s.work.fleet, '--out', out, '--no-progress', ...extra], {
    encoding: 'utf8',
    env: { ...process.env, KPT_VARIANTS_BENCH_RSS_FILE: rssFile },
    maxBuffer: 256 * 2 ** 20,
  })
  if (run.error) throw run.error
  if (run.status !== 0) throw new Error(`kpt-variants render exited ${run.status}:\n${run.stderr.slice(-4000)}`)
  const summary = /(\d+) variant\(s\): (\d+) created, (\d+) updated, (\d+) unchanged, (\d+) failed/.exec(run.stderr)
  if (!summary) throw new Error(`kpt-variants render: no summary line in\n${run.stderr.slice(-4000)}`)
  const [total, created, updated, unchanged, failed] = summary.slice(1).map(Number) as [number, number, number, number, number]
  const want = { total: variants, created: expect.created ?? 0, updated: 0, unchanged: expect.unchanged ?? 0, failed: 0 }
  if (total !== want.total || created !== want.created || updated !== want.updated || unchanged !== want.unchanged || failed !== want.failed) {
    throw new Error(`kpt-variants render: expected ${JSON.stringify(want)}, got "${summary[0]}"`)
  }
  s.outcome = `${summary[0]}${extra.length > 0 ? ` (${extra.join(' ')})` : ''}`
  s.peakKib = Math.max(s.peakKib, Number(readFileSync(rssFile, 'utf8')))
}

function figures(input: unknown): Record<string, number | string> {
  const s = input as State
  return { 'peak RSS of the child (MiB)': Math.round((s.peakKib / 1024) * 10) / 10, outcome: s.outcome }
}

const samplePackage = (i: number) => join(clusterName(i), 'app')

/** The kpt way, for `kptSample` variants: fetch each for deployment, then apply its PackageVariant with package-variant. */
function kptBaseline(): NonNullable<Benchmark['baseline']> | undefined {
  const version = spawnSync('kpt', ['version'], { encoding: 'utf8' })
  if (version.error || version.status !== 0) {
    console.error('  (kpt is not on PATH: the render benchmark runs without its kpt baseline)')
    return undefined
  }
  let verified = false
  let pkgs = ''
  const configs = (s: State) => join(s.work.dir, 'kpt-configs')
  const kpt = (cwd: string, args: string[], env: NodeJS.ProcessEnv) => {
    const run = spawnSync('kpt', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
    if (run.error) throw run.error
    if (run.status !== 0) throw new Error(`kpt ${args.join(' ')} exited ${run.status}:\n${run.stderr}`)
  }
  return {
    name: `kpt ${version.stdout.trim()}, per variant: kpt pkg get --for-deployment + kpt fn eval --exec package-variant, sequentially; ${kptSample} of ${variants} variants timed`,
    scale: variants / kptSample,
    iterations: 3,
    beforeEach(input) {
      const s = input as State
      pkgs = s.work.next('kpt')
      mkdirSync(pkgs, { recursive: true })
      mkdirSync(configs(s), { recursive: true })
      for (let i = 0; i < kptSample; i++) writeFileSync(join(configs(s), `pv-${i}.yaml`), packageVariantText(i))
    },
    run(input) {
      const s = input as State
      // kpt leaves an empty kpt-get-* directory in TMPDIR per pkg get: keep them in the work directory.
      const env = { ...process.env, KPT_VARIANTS_SOURCES: join(s.work.fleet, 'endpoints.yaml'), TMPDIR: s.work.dir }
      for (let i = 0; i < kptSample; i++) {
        mkdirSync(join(pkgs, clusterName(i)), { recursive: true })
        kpt(pkgs, ['pkg', 'get', `${s.work.repo}.git/app@app/v1`, samplePackage(i), '--for-deployment'], env)
        kpt(pkgs, ['fn', 'eval', samplePackage(i), '--exec', packageVariantBin, '--fn-config', join(configs(s), `pv-${i}.yaml`)], env)
      }
      if (!verified) {
        verifySameWork(pkgs, s.work.out)
        verified = true
      }
    },
  }
}

/**
 * Checks that the baseline did the same work: every sample package kpt made
 * has the files kpt-variants wrote, with the same contents, except the
 * Kptfile (kpt-variants adds its ownership annotations, and records the
 * repository as the fleet names it); that one must show the injection.
 */
function verifySameWork(kptDir: string, out: string): void {
  for (let i = 0; i < kptSample; i++) {
    const ours = join(out, samplePackage(i))
    const theirs = join(kptDir, samplePackage(i))
    const names = (dir: string) => readdirSync(dir).sort().join(' ')
    if (names(ours) !== names(theirs)) throw new Error(`kpt baseline: ${theirs} has files ${names(theirs)}, kpt-variants wrote ${names(ours)}`)
    for (const name of readdirSync(ours)) {
      if (name === 'Kptfile') continue
      if (!readFileSync(join(ours, name)).equals(readFileSync(join(theirs, name)))) throw new Error(`kpt baseline: ${samplePackage(i)}/${name} differs from kpt-variants'`)
    }
    if (!readFileSync(join(theirs, 'Kptfile'), 'utf8').includes('reason: ConfigInjected')) throw new Error(`kpt baseline: ${theirs}/Kptfile shows no injection`)
  }
}

const baseline = kptBaseline()

/** A file of the rendered output whose inode and mtime a re-render must leave alone. */
const probe = (w: Work) => join(w.out, samplePackage(variants - 1), 'svc-000.yaml')

export const benchmarks: Benchmark[] = [
  {
    name: `render 1,000 new variants (${resources} resources each)`,
    iterations: 3,
    units: { count: variants, name: 'variant' },
    setup: state,
    beforeEach(input) {
      const w = (input as State).work
      w.out = w.next('out')
    },
    run: (input) => render(input as State, (input as State).work.out, [], { created: variants }),
    ...(baseline ? { baseline } : {}),
    figures,
  },
  {
    name: 're-render 1,000 unchanged variants',
    iterations: 3,
    units: { count: variants, name: 'variant' },
    async setup() {
      const s = await state()
      if (!s.work.out) {
        s.work.out = s.work.next('out')
        render(s, s.work.out, [], { created: variants })
      }
      s.peakKib = 0
      return { ...s, probe: statSync(probe(s.work)) }
    },
    run(input) {
      const s = input as State & { probe: { ino: number; mtimeMs: number } }
      render(s, s.work.out, [], { unchanged: variants })
      const after = statSync(probe(s.work))
      if (after.ino !== s.probe.ino || after.mtimeMs !== s.probe.mtimeMs) throw new Error('re-render: an unchanged package was rewritten')
    },
    figures,
  },
  {
    name: '--dry-run 1,000 variants',
    iterations: 3,
    units: { count: variants, name: 'variant' },
    setup: state,
    // Into an empty output directory: the whole render (every variant "created"), nothing written.
    run(input) {
      const s = input as State
      const out = join(s.work.dir, 'out-dry-run')
      render(s, out, ['--dry-run'], { created: variants })
      if (existsSync(out)) throw new Error('--dry-run wrote the output directory')
    },
    figures,
  },
]
