/**
 * Preloaded into a benchmarked child process (`node --import
 * dist/bench/peak-rss.js bin/kpt-variants ...`): when the process exits, it
 * writes its peak resident set size in KiB (the whole process, worker threads
 * included, as the kernel counts it) to the file named by
 * KPT_VARIANTS_BENCH_RSS_FILE. The command itself runs unchanged. Not a
 * `.bench.js` module, so `npm run bench` does not load it.
 */
import { writeFileSync } from 'node:fs'

const file = process.env['KPT_VARIANTS_BENCH_RSS_FILE']
if (file) process.on('exit', () => writeFileSync(file, `${process.resourceUsage().maxRSS}\n`))
