/**
 * `kpt-variants controller` against a real API server (test/support/
 * kube-apiserver.ts, built by scripts/build-cluster.sh; without it these
 * cases are SKIPPED, loudly), on the benchmark fleet of 10,000 targets
 * (KPT_VARIANTS_BENCH_CONTROLLER_TARGETS to change it): one PackageVariantSet
 * over 10,000 WorkloadClusters, a 50-resource package each, every draft in one
 * downstream repository.
 *
 * - the initial sync: from the process's start to the end of its first
 *   cycle (every kind listed and watched, 10,000 new drafts, status
 *   written); baseline: the CronJob's run, `render --cluster --git`, of the
 *   same fleet into the same fresh state;
 * - one target relabelled: from the API server's answer to the label's
 *   write to the end of the cycle that re-rendered its one variant (the
 *   figure `event to done` is from the controller's own watch event);
 *   baseline: the full render (a resync) of the same fleet, unchanged;
 * - the soak: 15 minutes (KPT_VARIANTS_BENCH_SOAK_MINUTES to change it) of
 *   churn, a change and its cycle after another, with the controller's
 *   memory at every cycle: flat when the last quarter's median is the
 *   first quarter's.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseValue } from '../functions/krm/yaml/index.js'
import { ControllerProcess } from '../test/support/controller-process.js'
import type { CycleLine } from '../test/support/controller-process.js'
import { binDir, buildCommand, KubeApiServer } from '../test/support/kube-apiserver.js'
import { schemalessCrd } from '../test/support/schemaless-crd.js'
import type { Json } from '../test/support/kube-client.js'
import { clusterName, createFleet, regionOf } from './fleet-fixture.js'
import type { Benchmark } from './harness.js'
import { benchTmp } from './scratch.js'

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)))
const launcher = join(root, 'bin', 'kpt-variants')
const targets = Number(process.env['KPT_VARIANTS_BENCH_CONTROLLER_TARGETS'] || 10_000)
const soakMinutes = Number(process.env['KPT_VARIANTS_BENCH_SOAK_MINUTES'] || 15)
const identity = {
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@example.com',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@example.com',
}
const mib = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10

interface Work {
  server: KubeApiServer
  dir: string
  fleet: string
  remote: string
  env: Record<string, string | undefined>
  count: number
  controller?: ControllerProcess
  /** The cycles measured by the current case. */
  cycles: CycleLine[]
  /** Each target's labels as last written. */
  labels: Map<number, { site: string; region: string }>
}

let work: Promise<Work> | undefined

/** The server with the fleet applied, once for every case. */
function workOnce(): Promise<Work> {
  work ??= (async () => {
    const server = await KubeApiServer.start()
    process.once('exit', () => void server.stop())
    const dir = mkdtempSync(join(benchTmp(), 'kpt-variants-bench-controller-'))
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
    const crds = readdirSync(join(root, 'deploy', 'crds')).flatMap((f) =>
      documents(readFileSync(join(root, 'deploy', 'crds', f), 'utf8')),
    )
    await server.apply([...crds, schemalessCrd('infra.nephio.org', 'WorkloadCluster')])
    const fleet = await createFleet(dir, { variants: targets, resources: 50, oneRepository: true })
    const objects = readdirSync(fleet).flatMap((f) => documents(readFileSync(join(fleet, f), 'utf8')))
    await server.apply(objects)
    server.writeKubeconfig(join(dir, 'kubeconfig'))
    const env = { ...process.env, ...identity, KUBECONFIG: join(dir, 'kubeconfig'), XDG_CACHE_HOME: join(dir, 'xdg') }
    return {
      server,
      dir,
      fleet,
      remote: join(dir, 'repos', 'deployments.git'),
      env,
      count: 0,
      cycles: [],
      labels: new Map(),
    }
  })()
  return work
}

function documents(text: string): Json[] {
  return (parseValue(text, { stream: true }) as Json[]).filter(Boolean)
}

/** An empty downstream repository and a new cache: the next render drafts every variant anew. */
function fresh(w: Work): string {
  rmSync(w.remote, { recursive: true, force: true })
  spawnSync('git', ['init', '-q', '--bare', '-b', 'main', w.remote])
  return join(w.dir, `cache-${++w.count}`)
}

function startController(w: Work, cache: string, nodeFlags: string[] = []): ControllerProcess {
  return new ControllerProcess(['--git', '--cache', cache, '--no-leader-election', '--poll', '0', '--resync', '24h'], {
    cwd: w.fleet,
    env: w.env,
    nodeFlags,
  })
}

/**
 * Starts the controller on a fresh state and waits for its first cycle; then
 * the remote's refs are packed, as a git server's housekeeping (`git gc`)
 * packs them: a push to a bare repository of 10,000 loose refs reads each as
 * a file (a second a push here), which no hosted server makes a client wait for.
 */
async function syncedController(w: Work, nodeFlags: string[] = []): Promise<void> {
  w.controller = startController(w, fresh(w), nodeFlags)
  await w.controller.cycle(() => true, 'the first cycle', 0, 300_000)
  spawnSync('git', ['pack-refs', '--all'], { cwd: w.remote })
}

async function stopController(w: Work): Promise<void> {
  await w.controller?.stop()
  delete w.controller
}

/** After the last case: the server's processes would otherwise keep `npm run bench` from ever exiting. */
async function stopServer(): Promise<void> {
  const w = await work
  work = undefined
  await w?.server.stop()
}

const regions = ['us-east1', 'us-west1', 'eu-west1', 'ap-south1']

/**
 * Writes target `i` with a new region label (which its package context and
 * injected endpoints follow; never the one it has) and, with `site`, that
 * site label (`core` takes it out of the set); resolves with the cycle that
 * answered the change.
 */
async function relabel(w: Work, i: number, site = 'edge'): Promise<CycleLine> {
  const controller = w.controller!
  const now = w.labels.get(i) ?? { site: 'edge', region: regionOf(i) }
  const labels = { site, region: regions[(regions.indexOf(now.region) + 1) % regions.length]! }
  w.labels.set(i, labels)
  const after = controller.lastCycle
  await w.server.apply([
    {
      apiVersion: 'infra.nephio.org/v1alpha1',
      kind: 'WorkloadCluster',
      metadata: { name: clusterName(i), namespace: 'default', labels },
      spec: { clusterName: clusterName(i) },
    },
  ])
  return controller.cycle(
    (c) => c.trigger.includes('fleet'),
    `the cycle of ${clusterName(i)}'s new labels`,
    after,
    120_000,
  )
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN

/** Each phase's median over the cycles (controller/cycle.ts CyclePhases): where a cycle's time goes. */
function phaseMedians(cycles: CycleLine[]): Record<string, string> {
  const names = ['snapshot', 'plan', 'scope', 'render', 'status'] as const
  return Object.fromEntries(names.map((n) => [`phase ${n} (median)`, `${median(cycles.map((c) => c.phases[n]))} ms`]))
}

const built = (() => {
  try {
    readdirSync(binDir)
    return readdirSync(binDir).includes('kube-apiserver') && readdirSync(binDir).includes('etcd')
  } catch {
    return false
  }
})()
if (!built)
  console.log(
    `  SKIPPED: the controller benchmarks need a real kube-apiserver and etcd in ${binDir}: run \`${buildCommand}\` (needs Go)`,
  )

export const benchmarks: Benchmark[] = !built
  ? []
  : [
      {
        name: `controller: initial sync of ${targets.toLocaleString('en')} targets (list and watch, ${targets.toLocaleString('en')} new drafts in one repository, status written)`,
        goal: { maxMs: 20_000, label: '< 20 s' },
        setup: workOnce,
        iterations: 3,
        warmUp: false,
        units: { count: targets, name: 'target' },
        beforeEach: async (input) => {
          const w = input as Work
          await stopController(w)
          ;(w as Work & { cache: string }).cache = fresh(w)
        },
        run: async (input) => {
          const w = input as Work & { cache: string }
          w.controller = startController(w, w.cache)
          const first = await w.controller.cycle(() => true, 'the first cycle', 0, 300_000)
          const created = first.report.variants.filter((v) => v.status === 'created').length
          if (created !== targets)
            throw new Error(
              `the first cycle created ${created} drafts, not ${targets}: ${JSON.stringify(first.report.variants.filter((v) => v.status === 'failed').slice(0, 3))}`,
            )
          w.cycles.push(first)
        },
        figures: (input) => {
          const w = input as Work
          const cycles = w.cycles.splice(0)
          return {
            'first cycle alone (median)': `${median(cycles.map((c) => c.doneAt - c.startedAt))} ms`,
            ...phaseMedians(cycles),
            'controller RSS after it': `${mib(median(cycles.map((c) => c.memory.rss)))} MiB`,
          }
        },
        teardown: (input) => stopController(input as Work),
        baseline: {
          name: '`render --cluster --git` of the same fleet into the same fresh state (the CronJob)',
          iterations: 3,
          beforeEach: (input) => {
            const w = input as Work & { cache: string }
            w.cache = fresh(w)
          },
          run: (input) => {
            const w = input as Work & { cache: string }
            const run = spawnSync(
              process.execPath,
              [launcher, 'render', '--cluster', '--git', '--cache', w.cache, '--no-progress'],
              {
                cwd: w.fleet,
                env: w.env,
                encoding: 'utf8',
                maxBuffer: 64 * 2 ** 20,
              },
            )
            if (run.status !== 0)
              throw new Error(`render --cluster --git: exit ${run.status}\n${run.stderr.slice(-2000)}`)
          },
        },
      },
      {
        name: `controller: one of ${targets.toLocaleString('en')} targets relabelled, its one variant re-rendered (the label's write to the cycle's end)`,
        goal: { maxMs: 500, label: '< 0.5 s' },
        setup: async () => {
          const w = await workOnce()
          await syncedController(w)
          return Object.assign(w, { round: 0 })
        },
        iterations: 15,
        run: async (input) => {
          const w = input as Work & { round: number }
          const cycle = await relabel(w, (w.round++ * 37) % targets)
          const rendered = cycle.report.variants.map((v) => `${v.subject} ${v.status}`)
          if (rendered.length !== 1 || !rendered[0]!.endsWith(' updated'))
            throw new Error(`expected one variant updated, the cycle rendered: ${rendered.slice(0, 5).join(', ')}`)
          w.cycles.push(cycle)
        },
        figures: (input) => {
          const w = input as Work
          const cycles = w.cycles.splice(0)
          return {
            'watch event to done (median)': `${median(cycles.map((c) => c.doneAt - c.firstChangeAt!))} ms`,
            'the cycle alone (median)': `${median(cycles.map((c) => c.doneAt - c.startedAt))} ms`,
            'event loop delay (max)': `${Math.max(...cycles.map((c) => c.eventLoopDelayMs))} ms`,
            ...phaseMedians(cycles),
          }
        },
        baseline: {
          name: `a full render of the ${targets.toLocaleString('en')} unchanged variants (SIGHUP: a resync)`,
          iterations: 5,
          run: async (input) => {
            const w = input as Work
            const after = w.controller!.lastCycle
            w.controller!.signal('SIGHUP')
            await w.controller!.cycle((c) => c.trigger.includes('resync'), 'the resync', after, 300_000)
          },
        },
        teardown: (input) => stopController(input as Work),
      },
      {
        name: `controller: soak, ${soakMinutes} min of churn on ${targets.toLocaleString('en')} targets (relabels; targets leaving and rejoining the set)`,
        goal: {
          maxFigure: { name: 'heap growth (MiB)', max: 16 },
          label: 'heap flat: last quarter within 16 MiB of the first',
        },
        iterations: 1,
        warmUp: false,
        setup: async () => {
          const w = await workOnce()
          // --expose-gc: each cycle's memory is measured after a full collection (controller.ts liveMemory), the live heap.
          await syncedController(w, ['--expose-gc'])
          return w
        },
        run: async (input) => {
          const w = input as Work
          const deadline = Date.now() + soakMinutes * 60_000
          for (let round = 0; Date.now() < deadline; round++) {
            // Every fifth change takes a target out of the set (its variant goes); the target's next change brings it back.
            w.cycles.push(await relabel(w, (round * 101) % targets, round % 5 === 3 ? 'core' : 'edge'))
          }
        },
        figures: (input) => {
          const w = input as Work
          const cycles = w.cycles.splice(0)
          const quarter = Math.max(1, Math.floor(cycles.length / 4))
          const first = cycles.slice(0, quarter)
          const last = cycles.slice(-quarter)
          const heap = (cs: CycleLine[]) => median(cs.map((c) => c.memory.heapUsed))
          const rss = (cs: CycleLine[]) => median(cs.map((c) => c.memory.rss))
          return {
            cycles: cycles.length,
            'heap, first quarter (MiB)': mib(heap(first)),
            'heap, last quarter (MiB)': mib(heap(last)),
            'heap growth (MiB)': mib(heap(last) - heap(first)),
            'RSS, first quarter (MiB)': mib(rss(first)),
            'RSS, last quarter (MiB)': mib(rss(last)),
            'RSS growth (MiB)': mib(rss(last) - rss(first)),
            'watch event to done (median)': `${median(cycles.map((c) => c.doneAt - (c.firstChangeAt ?? c.startedAt)))} ms`,
          }
        },
        teardown: async (input) => {
          await stopController(input as Work)
          await stopServer()
        },
      },
    ]
