/**
 * `npm run bench`: runs every `bench/*.bench.js` (compiled) module's exported
 * `benchmarks`, prints each figure as it comes and then one table (case, our
 * figure, the baseline measured in the same run, their ratio, the goal, met
 * or not), and saves bench/out/results.json. A full run (no filter) also
 * writes bench/RESULTS.md and its chart, bench/render-scaling.svg.
 *
 *   npm run bench                 everything
 *   npm run bench -- fan-out      only the files whose name contains "fan-out"
 *   npm run bench -- --json       the results as JSON on stdout (progress on stderr)
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { availableParallelism, cpus, totalmem } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { benchTmp, fileSystemOf } from './scratch.js'
import { runBenchmarks } from './harness.js'
import type { Benchmark, BenchResult } from './harness.js'
import { resultTable, scalingChart } from './report.js'

const here = dirname(fileURLToPath(import.meta.url))
const args = process.argv.slice(2)
const json = args.includes('--json')
const filter = args.find((a) => !a.startsWith('--'))
const log = (line: string) => (json ? console.error(line) : console.log(line))
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.js') && (!filter || f.includes(filter)))
  .sort()
const all: BenchResult[] = []
for (const file of files) {
  const mod = (await import(pathToFileURL(join(here, file)).href)) as { benchmarks: Benchmark[] }
  log(`# ${file.replace(/\.bench\.js$/, '')}`)
  all.push(...(await runBenchmarks(mod.benchmarks, (line) => log(`  ${line}`))))
}
/**
 * The file system the end-to-end cases write their fleets and output to (see
 * render.bench.ts): their figures include its file creation, which differs
 * many times between a tmpfs, a fresh ext4 directory and one where many files
 * were deleted lately.
 */
function benchFileSystem(): string {
  const dir = benchTmp()
  const type = fileSystemOf(dir)
  return type ? `${dir} (${type})` : dir
}

const machine = `${availableParallelism()} CPU(s) (${cpus()[0]?.model.trim() ?? 'unknown'}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`
const table = resultTable(all)
const repo = join(here, '..', '..')
mkdirSync(join(repo, 'bench', 'out'), { recursive: true })
writeFileSync(
  join(repo, 'bench', 'out', 'results.json'),
  `${JSON.stringify({ machine, node: process.version, results: all }, null, 2)}\n`,
)
if (json) console.log(JSON.stringify({ machine, results: all }, null, 2))
else console.log(`\n${table}\n`)

if (!filter) {
  const chart = scalingChart(all, `kpt-variants render: time and peak memory against fleet size (${machine})`)
  if (chart) writeFileSync(join(repo, 'bench', 'render-scaling.svg'), chart)
  const met = all.filter((r) => r.goalMet).length
  const goals = all.filter((r) => r.goalMet !== undefined).length
  writeFileSync(
    join(repo, 'bench', 'RESULTS.md'),
    `# Benchmark results

Written by \`npm run bench\` (a full run) on ${new Date().toISOString().slice(0, 10)}: ${machine}.
The end-to-end cases wrote their fleets and output under ${benchFileSystem()}.
Every figure is a median; every baseline was measured in the same run, so the
ratios hold on other machines even where the times do not. Goals met: ${met} of ${goals}.

${table}

${chart ? '![render time and peak RSS against fleet size, log scale](render-scaling.svg)\n' : ''}`,
  )
  log('wrote bench/RESULTS.md and bench/render-scaling.svg')
}
