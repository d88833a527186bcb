/**
 * `npm run bench`: runs every `bench/*.bench.js` (compiled) module's exported
 * `benchmarks`, prints the figures and writes them to bench/out/results.json.
 * `npm run bench -- fan-out` runs only the files whose name contains "fan-out".
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { runBenchmarks } from './harness.js'
import type { Benchmark, BenchResult } from './harness.js'

const here = dirname(fileURLToPath(import.meta.url))
const filter = process.argv[2]
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.js') && (!filter || f.includes(filter)))
  .sort()
const all: BenchResult[] = []
for (const file of files) {
  const mod = (await import(pathToFileURL(join(here, file)).href)) as { benchmarks: Benchmark[] }
  console.log(`# ${file.replace(/\.bench\.js$/, '')}`)
  all.push(...(await runBenchmarks(mod.benchmarks, (line) => console.log(`  ${line}`))))
}
const outDir = join(here, '..', '..', 'bench', 'out')
mkdirSync(outDir, { recursive: true })
writeFileSync(join(outDir, 'results.json'), `${JSON.stringify({ node: process.version, results: all }, null, 2)}\n`)
