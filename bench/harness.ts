/**
 * A tiny benchmark harness: each case is timed against a baseline measured in
 * the same run, so the figures compare on any machine. No timing is asserted
 * in the test suite; `npm run bench` prints and saves the figures.
 */
import { performance } from 'node:perf_hooks'

/** One benchmark: `run` is timed; `baseline` (if any) gives the ratio. */
export interface Benchmark {
  name: string
  /**
   * What the project promises: a time (`maxMs`), a ratio to the baseline
   * (`maxRatio`), and/or a ceiling on one of the figures (`maxFigure`, e.g.
   * peak RSS); met when every part given is. `label` says it in words.
   */
  goal?: { maxMs?: number; maxRatio?: number; maxFigure?: { name: string; max: number }; label?: string }
  /** Prepares inputs once; the result is passed to run and baseline. */
  setup?: () => unknown
  /** Untimed, before every call of `run` (the warm-up too), e.g. to give each run a fresh output directory. */
  beforeEach?: (input: unknown) => unknown
  run: (input: unknown) => unknown
  baseline?: {
    name: string
    run: (input: unknown) => unknown
    /** Untimed, before every call of the baseline's `run`. */
    beforeEach?: (input: unknown) => unknown
    /**
     * The baseline does 1/scale of the work `run` does (a sample, when the
     * whole would take too long): its times are multiplied by `scale` before
     * the ratio, and reported as extrapolated.
     */
    scale?: number
    /** Iterations of the baseline (default: the benchmark's). */
    iterations?: number
  }
  /** Iterations (default: as many as fit in ~3 s, at least 3). */
  iterations?: number
  /** False: no untimed warm-up run before the timed ones (a run of minutes warms itself up). */
  warmUp?: boolean
  /** The work is `count` units (e.g. 1,000 variants): the result also gives the milliseconds per unit. */
  units?: { count: number; name: string }
  /** Further figures, read after the timed runs (e.g. a child process's peak RSS); printed and saved with the result. */
  figures?: (input: unknown) => Record<string, number | string> | Promise<Record<string, number | string>>
  /** Untimed, once the case is done (its figures read), e.g. to remove what it wrote. */
  teardown?: (input: unknown) => unknown
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
  /** Set when the baseline ran on a sample: its median as measured, before the scaling to baselineMedianMs. */
  baselineSampleMedianMs?: number
  baselineScale?: number
  ratio?: number
  /** With `units`: medianMs (and baselineMedianMs) per unit. */
  unit?: string
  msPerUnit?: number
  baselineMsPerUnit?: number
  figures?: Record<string, number | string>
  heapUsedMb: number
  rssMb: number
}

async function time(
  fn: () => unknown,
  iterations?: number,
  beforeEach?: () => unknown,
  warmUp = true,
): Promise<{ median: number; min: number; n: number }> {
  if (warmUp) {
    await beforeEach?.()
    await fn()
  }
  const samples: number[] = []
  const deadline = performance.now() + 3000
  const more = () =>
    iterations !== undefined
      ? samples.length < iterations
      : samples.length < 3 || (samples.length < 50 && performance.now() < deadline)
  while (more()) {
    await beforeEach?.()
    const start = performance.now()
    await fn()
    samples.push(performance.now() - start)
  }
  samples.sort((a, b) => a - b)
  return { median: samples[Math.floor(samples.length / 2)]!, min: samples[0]!, n: samples.length }
}

/** Runs benchmarks one after another and returns their figures. */
export async function runBenchmarks(
  benchmarks: readonly Benchmark[],
  log: (line: string) => void,
): Promise<BenchResult[]> {
  const out: BenchResult[] = []
  for (const b of benchmarks) {
    const input = b.setup ? await b.setup() : undefined
    const measured = await time(
      () => b.run(input),
      b.iterations,
      b.beforeEach && (() => b.beforeEach!(input)),
      b.warmUp,
    )
    const result: BenchResult = {
      name: b.name,
      medianMs: round(measured.median),
      minMs: round(measured.min),
      iterations: measured.n,
      heapUsedMb: round(process.memoryUsage().heapUsed / 2 ** 20),
      rssMb: round(process.memoryUsage().rss / 2 ** 20),
    }
    if (b.units) {
      result.unit = b.units.name
      result.msPerUnit = round(measured.median / b.units.count)
    }
    if (b.baseline) {
      const baseline = b.baseline
      const base = await time(
        () => baseline.run(input),
        baseline.iterations ?? b.iterations,
        baseline.beforeEach && (() => baseline.beforeEach!(input)),
        b.warmUp,
      )
      const scale = baseline.scale ?? 1
      result.baseline = baseline.name
      result.baselineMedianMs = round(base.median * scale)
      if (scale !== 1) {
        result.baselineSampleMedianMs = round(base.median)
        result.baselineScale = scale
      }
      if (b.units) result.baselineMsPerUnit = round((base.median * scale) / b.units.count)
      // A ratio far below 1 would round to 0 at two decimals.
      result.ratio = roundSignificant(measured.median / (base.median * scale))
    }
    if (b.figures) result.figures = await b.figures(input)
    await b.teardown?.(input)
    if (b.goal) {
      const { maxMs, maxRatio, maxFigure, label } = b.goal
      const parts = [
        maxMs !== undefined && `< ${maxMs} ms`,
        maxRatio !== undefined && `< ${maxRatio}x baseline`,
        maxFigure && `${maxFigure.name} < ${maxFigure.max}`,
      ].filter(Boolean)
      result.goal = label ?? parts.join(', ')
      result.goalMet =
        (maxMs === undefined || measured.median < maxMs) &&
        (maxRatio === undefined || (result.ratio !== undefined && result.ratio < maxRatio)) &&
        (maxFigure === undefined || Number(result.figures?.[maxFigure.name]) < maxFigure.max)
    }
    out.push(result)
    log(formatResult(result))
  }
  return out
}

function formatResult(r: BenchResult): string {
  let line = `${r.name}: median ${r.medianMs} ms (min ${r.minMs}, n=${r.iterations})`
  if (r.goal) line += ` goal ${r.goal}: ${r.goalMet ? 'met' : 'NOT met'}`
  if (r.msPerUnit !== undefined) line += ` = ${r.msPerUnit} ms/${r.unit}`
  if (r.baseline) {
    line += `; baseline "${r.baseline}" ${r.baselineMedianMs} ms`
    if (r.baselineScale !== undefined)
      line += ` (EXTRAPOLATED x${r.baselineScale} from ${r.baselineSampleMedianMs} ms measured on a sample)`
    if (r.baselineMsPerUnit !== undefined) line += ` = ${r.baselineMsPerUnit} ms/${r.unit}`
    line += `, ratio ${r.ratio}x`
    if (r.ratio !== undefined && r.ratio > 0 && r.ratio < 1)
      line += ` (${round(r.baselineMedianMs! / r.medianMs)}x faster)`
  }
  line += `; rss ${r.rssMb} MiB`
  if (r.figures)
    line += `; ${Object.entries(r.figures)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`
  return line
}

function round(n: number): number {
  return Math.round(n * 100) / 100
}

/** Two decimals, or three significant digits for numbers below 1. */
function roundSignificant(n: number): number {
  return n >= 1 || n === 0 ? round(n) : Number(n.toPrecision(3))
}
