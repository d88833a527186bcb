/**
 * `kpt-variants render` of a fleet whose blueprint needs two other packages
 * (each a small package published beside it), so that every repository gets
 * both installed: 1,000 new variants and their 2,000 dependencies, against
 * the same fleet without dependencies, in the same run. The goal: no
 * worse than twice the time. Both render into a new output directory each
 * run, as child processes (Node start-up included).
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createFleet } from './fleet-fixture.js'
import type { Benchmark } from './harness.js'
import { benchTmp, releaseWhenInMemory } from './scratch.js'

const variants = 1000
const resources = 50
const dependencies = 2
const launcher = join(resolve(fileURLToPath(new URL('../..', import.meta.url))), 'bin', 'kpt-variants')

interface Fleets {
  dir: string
  plain: string
  needing: string
  runs: number
  last?: string
}

/** Renders `fleet` into a new directory; checks the summary's counts (and the dependencies installed). */
function render(f: Fleets, fleet: string, installs: number): void {
  if (f.last) releaseWhenInMemory(f.last)
  f.last = join(f.dir, `out-${++f.runs}`)
  const run = spawnSync(
    process.execPath,
    [launcher, 'render', fleet, '--out', f.last, '--cache', join(f.dir, `cache-${f.runs}`), '--no-progress'],
    { encoding: 'utf8', maxBuffer: 256 * 2 ** 20 },
  )
  if (run.error) throw run.error
  if (run.status !== 0) throw new Error(`kpt-variants render exited ${run.status}:\n${run.stderr.slice(-4000)}`)
  const created = new RegExp(`${variants} variant\\(s\\): ${variants} created, 0 updated, 0 unchanged, 0 failed`)
  if (!created.test(run.stderr)) throw new Error(`kpt-variants render: unexpected summary\n${run.stderr.slice(-2000)}`)
  if (installs > 0 && !run.stderr.includes(`dependencies: ${installs} installed`))
    throw new Error(`kpt-variants render: expected ${installs} dependencies installed\n${run.stderr.slice(-2000)}`)
}

export const benchmarks: Benchmark[] = [
  {
    name: `render ${variants.toLocaleString('en-US')} new variants whose repositories each need ${dependencies} dependencies (${(variants * dependencies).toLocaleString('en-US')} installed)`,
    iterations: 3,
    units: { count: variants, name: 'variant' },
    goal: { maxRatio: 2, label: '<= 2x the same fleet without dependencies' },
    async setup(): Promise<Fleets> {
      const dir = mkdtempSync(join(benchTmp(), 'kpt-variants-bench-dependencies-'))
      process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
      const plain = await createFleet(join(dir, 'plain'), { variants, resources })
      const needing = await createFleet(join(dir, 'needing'), { variants, resources, dependencies })
      return { dir, plain, needing, runs: 0 }
    },
    run: (input) => render(input as Fleets, (input as Fleets).needing, variants * dependencies),
    baseline: {
      name: `the same ${variants.toLocaleString('en-US')} new variants, without dependencies`,
      run: (input) => render(input as Fleets, (input as Fleets).plain, 0),
    },
  },
]
