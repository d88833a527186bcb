/**
 * `kpt-variants render --git` against directory output, on one fleet of
 * 1,000 variants of a 50-resource package that all go to one downstream
 * repository (`deployments`, a bare repository): the new variants proposed
 * as 1,000 draft branches in one fast-import and one push, and a re-render
 * that finds every draft unchanged. The baseline of each is the same render
 * with `--out DIR`, in the same run, so the ratio is what git costs.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createFleet } from './fleet-fixture.js'
import type { Benchmark } from './harness.js'
import { benchTmp, releaseWhenInMemory } from './scratch.js'

const variants = 1000
const resources = 50
const root = resolve(fileURLToPath(new URL('../..', import.meta.url)))
const launcher = join(root, 'bin', 'kpt-variants')

interface Work {
  dir: string
  fleet: string
  remote: string
  count: number
}
let work: Promise<Work> | undefined

function fleetOnce(): Promise<Work> {
  work ??= (async () => {
    const dir = mkdtempSync(join(benchTmp(), 'kpt-variants-bench-git-'))
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
    const fleet = await createFleet(dir, { variants, resources, oneRepository: true })
    return { dir, fleet, remote: join(dir, 'repos', 'deployments.git'), count: 0 }
  })()
  return work
}

/** Runs a render and checks its summary line. */
function render(args: string[], expect: string): void {
  // The record of earlier renders of --out runs stays in the work directory (--git runs keep theirs in --cache).
  const env = { ...process.env, XDG_CACHE_HOME: join(dirname(args[0]!), 'xdg-cache') }
  const run = spawnSync(process.execPath, [launcher, 'render', ...args, '--no-progress'], { encoding: 'utf8', env, maxBuffer: 256 * 2 ** 20 })
  if (run.error) throw run.error
  const summary = /\d+ variant\(s\): .*/.exec(run.stderr)?.[0]
  if (run.status !== 0 || summary !== `${variants} variant(s): ${expect}`) throw new Error(`kpt-variants render ${args.join(' ')}: exit ${run.status}, "${summary}"\n${run.stderr.slice(-3000)}`)
}

/** An empty downstream repository and a new cache, so a new-variants run drafts all 1,000; returns the cache. */
function freshRemote(w: Work): string {
  rmSync(w.remote, { recursive: true, force: true })
  spawnSync('git', ['init', '-q', '--bare', '-b', 'main', w.remote])
  return join(w.dir, `cache-${++w.count}`)
}

const created = `${variants} created, 0 updated, 0 unchanged, 0 failed`
const unchanged = `0 created, 0 updated, ${variants} unchanged, 0 failed`

export const benchmarks: Benchmark[] = [
  {
    name: `render --git 1,000 new variants into one repository (${resources} resources each)`,
    iterations: 3,
    units: { count: variants, name: 'variant' },
    setup: fleetOnce,
    beforeEach(input) {
      const w = input as Work & { cache?: string }
      w.cache = freshRemote(w)
    },
    run: (input) => render([(input as Work).fleet, '--git', '--cache', (input as Work & { cache: string }).cache], created),
    baseline: {
      name: 'the same render with --out DIR',
      beforeEach(input) {
        const w = input as Work & { out?: string }
        w.out = join(w.dir, `out-${++w.count}`)
      },
      run: (input) => render([(input as Work).fleet, '--out', (input as Work & { out: string }).out], created),
    },
  },
  {
    name: 're-render --git 1,000 unchanged drafts',
    iterations: 3,
    units: { count: variants, name: 'variant' },
    async setup() {
      const w = await fleetOnce()
      const cache = freshRemote(w)
      render([w.fleet, '--git', '--cache', cache], created)
      const out = join(w.dir, `out-${++w.count}`)
      render([w.fleet, '--out', out], created)
      return { ...w, cache, out }
    },
    run: (input) => render([(input as Work).fleet, '--git', '--cache', (input as Work & { cache: string }).cache], unchanged),
    baseline: {
      name: 'the same re-render with --out DIR',
      run: (input) => render([(input as Work).fleet, '--out', (input as Work & { out: string }).out], unchanged),
    },
    // The last case: its directory goes now if in memory (see scratch.ts).
    teardown: (input) => releaseWhenInMemory((input as Work).dir),
  },
]
