/**
 * dependency-check: the exact resolver against the greedy round-based planner
 * it replaced (bench/baseline/greedy-planner.ts), on the same inputs in the
 * same run, plus each one's wall time and peak RSS as a fresh process.
 * Goals (issue 15): a 50,000-deep chain, 5,000 packages with
 * 20,000 edges, and a 2,000-node cycle, each well under a second.
 * Then the program, `bin/dependency-check`, on large inputs as kpt would
 * send them (issue 30): reading and writing the ResourceList included, under
 * 3 s each, against the planner alone in-process.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import semver from 'semver'
import { planDependencies } from '../functions/dependency-check/index.js'
import type { Plan } from '../functions/dependency-check/index.js'
import { planDependencies as greedyPlan } from './baseline/greedy-planner.js'
import { chain, cycle, fallbackChain, graph, resourceList } from './dependency-cases.js'
import type { Benchmark } from './harness.js'
import { benchTmp } from './scratch.js'

const child = fileURLToPath(new URL('./dependency-process.js', import.meta.url))

/** Runs one case's planner alone in a fresh Node process: `ms`, `result`, `peakRssMb`. */
function inProcess(kind: string, size: number, planner: 'exact' | 'greedy'): string {
  const out = execFileSync(process.execPath, [child, kind, String(size), planner], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  })
  const r = JSON.parse(out) as { ms: number; result: string; installs: number; peakRssMb: number }
  return `${r.ms} ms, ${r.result}, ${r.installs} installs, peak RSS ${r.peakRssMb} MiB`
}

function expect(plan: Plan, result: Plan['result'], minInstalls: number, name: string): Plan {
  if (plan.result !== result || plan.install.length < minInstalls)
    throw new Error(`${name}: ${plan.result} with ${plan.install.length} installs`)
  return plan
}

const built = graph()
const npmRanges = built.edges.map(
  ([range, version]) => [range.replace(/,/g, ' ').replace(/!=1\.2\.1/, ''), version] as const,
)
const deepChain = chain(50_000)
// The greedy planner stops after 10,000 rounds, one level each: past that depth it reports a false
// conflict. Its baseline runs the deepest chain it still resolves, scaled linearly to 50,000.
const greedyChain = chain(10_000)
const greedyTooDeep = chain(12_000)
const ring = cycle(2_000)

export const benchmarks: Benchmark[] = [
  {
    name: `dependency-check, 5000 packages, ${built.edges.length} edges, exact resolver`,
    goal: { maxMs: 1000 },
    iterations: 5,
    run: () => expect(planDependencies(built.input), 'RESOLVABLE', 2500, 'graph'),
    baseline: { name: 'greedy round-based planner (before issue 15)', run: () => greedyPlan(built.input) },
    figures: () => ({
      'bin/dependency-check as a process': programFigure(built.input, 'RESOLVABLE'),
      'exact planner alone, fresh process': inProcess('graph', 5_000, 'exact'),
      'greedy planner alone, fresh process': inProcess('graph', 5_000, 'greedy'),
    }),
  },
  {
    name: `dependency-check, 5000 packages, ${built.edges.length} edges, semver.satisfies once per edge`,
    iterations: 5,
    run: () => {
      let n = 0
      for (const [range, version] of npmRanges) if (semver.satisfies(version, range)) n++
      return n
    },
  },
  {
    name: 'dependency-check, 50,000-deep chain, exact resolver',
    goal: { maxMs: 1000 },
    iterations: 3,
    run: () => expect(planDependencies(deepChain), 'RESOLVABLE', 49_999, 'chain'),
    baseline: {
      name: 'greedy planner on a 10,000-deep chain, x5',
      run: () => greedyPlan(greedyChain),
      scale: 5,
      iterations: 1,
    },
    figures: () => ({
      'bin/dependency-check as a process': programFigure(deepChain, 'RESOLVABLE'),
      'exact planner alone, fresh process': inProcess('chain', 50_000, 'exact'),
      'greedy planner alone, 10,000-deep, fresh process': inProcess('chain', 10_000, 'greedy'),
      'greedy result on a 12,000-deep chain': summarise(greedyPlan(greedyTooDeep)),
      'exact result on a 12,000-deep chain': summarise(planDependencies(greedyTooDeep)),
    }),
  },
  {
    name: 'dependency-check, 2,000-node cycle, exact resolver',
    goal: { maxMs: 1000 },
    iterations: 5,
    run: () => expect(planDependencies(ring), 'CONFLICT', 1_999, 'cycle'),
    baseline: { name: 'greedy round-based planner (before issue 15)', run: () => greedyPlan(ring) },
    figures: () => ({
      'bin/dependency-check as a process': programFigure(ring, 'CONFLICT'),
      'exact planner alone, fresh process': inProcess('cycle', 2_000, 'exact'),
      'greedy planner alone, fresh process': inProcess('cycle', 2_000, 'greedy'),
    }),
  },
]

const program = fileURLToPath(new URL('../../bin/dependency-check', import.meta.url))
const preload = new URL('./peak-rss.js', import.meta.url).href

/**
 * The program on a ResourceList, as kpt runs it: stdin in, stdout out (to a file: a pipe read by this
 * process would time Node's own buffering of tens of MiB too); checks the exit code and the verdict,
 * returns the peak RSS in MiB and the output size.
 */
function runProgram(list: string, verdict: string): { ms: number; peakRssMb: number; outMb: number } {
  const dir = mkdtempSync(join(benchTmp(), 'kpt-variants-bench-dependency-'))
  const outFile = join(dir, 'out.yaml')
  const out = openSync(outFile, 'w')
  try {
    const rssFile = join(dir, 'peak-rss')
    const start = performance.now()
    const run = spawnSync(process.execPath, ['--import', preload, program], {
      input: list,
      stdio: ['pipe', out, 'pipe'],
      encoding: 'utf8',
      env: { ...process.env, KPT_VARIANTS_BENCH_RSS_FILE: rssFile },
    })
    const ms = performance.now() - start
    if (run.error) throw run.error
    const output = readFileSync(outFile, 'utf8')
    // A conflict is an error result, so the program exits 1 (printing the input items and the results).
    if (run.status !== (verdict === 'CONFLICT' ? 1 : 0) || !output.includes(`dependency check: ${verdict}`))
      throw new Error(`bin/dependency-check: exit ${run.status}\n${run.stderr.slice(-2000)}`)
    return {
      ms,
      peakRssMb: Math.round(Number(readFileSync(rssFile, 'utf8')) / 1024),
      outMb: Math.round(output.length / 2 ** 20),
    }
  } finally {
    closeSync(out)
    rmSync(dir, { recursive: true, force: true })
  }
}

/** One run of the program on a case, for a figure. */
function programFigure(input: ReturnType<typeof chain>, verdict: string): string {
  const r = runProgram(resourceList(input), verdict)
  return `${Math.round(r.ms)} ms, peak RSS ${r.peakRssMb} MiB`
}

function programBenchmark(name: string, input: ReturnType<typeof chain>, verdict: string): Benchmark {
  const list = resourceList(input)
  let last = { ms: 0, peakRssMb: 0, outMb: 0 }
  return {
    name: `bin/dependency-check as a process, ${name}`,
    goal: { maxMs: 3000 },
    iterations: 3,
    run: () => (last = runProgram(list, verdict)),
    baseline: { name: 'the planner alone, in-process', run: () => planDependencies(input) },
    figures: () => ({
      'ResourceList in (MiB)': Math.round(list.length / 2 ** 20),
      'ResourceList out (MiB)': last.outMb,
      'peak RSS (MiB)': last.peakRssMb,
    }),
  }
}

benchmarks.push(
  programBenchmark(
    '20,000-package catalog falling back to older versions at every level',
    fallbackChain(20_000),
    'RESOLVABLE',
  ),
  programBenchmark('50,000-deep chain', deepChain, 'RESOLVABLE'),
)

function summarise(plan: Plan): string {
  const first = plan.conflicts[0]?.message ?? ''
  return `${plan.result}, ${plan.install.length} installs${first ? `; first conflict: ${first.slice(0, 100)}` : ''}`
}
