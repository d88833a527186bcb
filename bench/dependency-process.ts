/**
 * One dependency-check case in a fresh process, for figures an in-process
 * bench cannot give: wall time including JIT warm-up and the process's peak
 * RSS. `node dist/bench/dependency-process.js chain 50000 exact|greedy` prints
 * `{"ms":…,"result":…,"peakRssMb":…}`. Not a `.bench.js` module.
 */
import { performance } from 'node:perf_hooks'
import { planDependencies } from '../functions/dependency-check/index.js'
import { planDependencies as greedyPlan } from './baseline/greedy-planner.js'
import { chain, cycle, graph } from './dependency-cases.js'

const [kind, size, planner] = process.argv.slice(2)
const n = Number(size)
const input = kind === 'chain' ? chain(n) : kind === 'cycle' ? cycle(n) : graph(n).input
const start = performance.now()
const plan = (planner === 'greedy' ? greedyPlan : planDependencies)(input)
const ms = performance.now() - start
console.log(
  JSON.stringify({
    ms: Math.round(ms),
    result: plan.result,
    installs: plan.install.length,
    peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
  }),
)
