/**
 * A tiny benchmark harness: each case is timed against a baseline measured in
 * the same run, so the figures compare on any machine. No timing is asserted
 * in the test suite; `npm run bench` prints and saves the figures.
 */
import { performance } from 'node:perf_hooks'

/** One benchmark: `run` is timed; `baseline` (if any) gives the ratio. */
export interface Benchmark {
  name: string
  /** What the issue or DESIGN.md asks for, e.g. "< 1000 ms". */
  goal?: { maxMs: number; label?: string }
  /** Prepares inputs once; the result is passed to run and baseline. */
  setup?: () => unknown | Promise<unknown>
  run: (input: unknown) => unknown | Promise<unknown>
  baseline?: { name: string; run: (input: unknown) => unknown | Promise<unknown> }
  /** Iterations (default: as many as fit in ~3 s, at least 3). */
  iterations?: number
}

/** Measured figures for one benchmark. */
export interface BenchResult {
  name: string
  medianMs: number
  minMs: number
  iterations: number
  goal?: string
  goalMet?: boolean
  baseline?: string
  baselineMedianMs?: number
  ratio?: number
  heapUsedMb: number
  rssMb: number
}

async function time(fn: () => unknown | Promise<unknown>, iterations?: number): Promise<{ median: number; min: number; n: number }> {
  await fn() // warm-up
  const samples: number[] = []
  const deadline = performance.now() + 3000
  const more = () =>
    iterations !== undefined ? samples.length < iterations : samples.length < 3 || (samples.length < 50 && performance.now() < deadline)
  while (more()) {
    const start = performance.now()
    await fn()
    samples.push(performance.now() - start)
  }
  samples.sort((a, b) => a - b)
  return { median: samples[Math.floor(samples.length / 2)]!, min: samples[0]!, n: samples.length }
}

/** Runs benchmarks one after another and returns their figures. */
export async function runBenchmarks(benchmarks: readonly Benchmark[], log: (line: string) => void): Promise<BenchResult[]> {
  const out: BenchResult[] = []
  for (const b of benchmarks) {
    const input = b.setup ? await b.setup() : undefined
    const measured = await time(() => b.run(input), b.iterations)
    const result: BenchResult = {
      name: b.name,
      medianMs: round(measured.median),
      minMs: round(measured.min),
      iterations: measured.n,
      heapUsedMb: round(process.memoryUsage().heapUsed / 2 ** 20),
      rssMb: round(process.memoryUsage().rss / 2 ** 20),
    }
    if (b.goal) {
      result.goal = b.goal.label ?? `< ${b.goal.maxMs} ms`
      result.goalMet = measured.median < b.goal.maxMs
    }
    if (b.baseline) {
      const base = await time(() => b.baseline!.run(input), b.iterations)
      result.baseline = b.baseline.name
      result.baselineMedianMs = round(base.median)
      result.ratio = round(measured.median / base.median)
    }
    out.push(result)
    log(formatResult(result))
  }
  return out
}

function formatResult(r: BenchResult): string {
  let line = `${r.name}: median ${r.medianMs} ms (min ${r.minMs}, n=${r.iterations})`
  if (r.goal) line += ` goal ${r.goal}: ${r.goalMet ? 'met' : 'NOT met'}`
  if (r.baseline) line += `; baseline "${r.baseline}" ${r.baselineMedianMs} ms, ratio ${r.ratio}x`
  line += `; rss ${r.rssMb} MiB`
  return line
}

function round(n: number): number {
  return Math.round(n * 100) / 100
}
