/**
 * The render threads of a run. Every thread loads and plans the whole fleet
 * (deterministically: the same plan) and renders its share; the main thread
 * collects what they staged and commits it. Threads start before the main
 * thread has planned when the fleet is big, and list the upstream revisions
 * at the refs the main thread listed (`pin`).
 */
import { fastPath } from '../../functions/krm/fast-paths.js'
import { availableParallelism } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'
import { KubeObject } from '../../functions/krm/index.js'
import type { VariantReport } from '../report/report.js'
import type { UpstreamPins } from '../upstream/upstreams.js'
import { startThread } from '../util/threads.js'
import { renderShare } from './render-share.js'
import type { Pending } from './render-variant.js'
import type { RenderSettings } from './settings.js'
import { setUpRun } from './setup.js'

/**
 * Fleets of this many bytes of YAML or more (about 9,000 variants of the bench's fleet) may be worth more
 * render threads: on 2 CPUs two did not beat one at 7,000 variants (2.8 MB), and did at 10,000 (bench/RESULTS.md,
 * 'Fast paths': the threads row).
 */
const manyThreadsBytes = 3.5 * 1024 * 1024

/** What a run without `--threads` will mostly do, which decides how many render threads pay. */
export interface ThreadNeeds {
  /** The size of the fleet's YAML (see fleetBytes). */
  fleetBytes: number
  /** A record of an earlier run exists: most variants will be skipped. */
  recorded: boolean
  /** Every package goes to disk through a staging thread: a first render into an empty output directory. */
  writesAll: boolean
}

/**
 * Render threads when `--threads` is not given. Every render thread loads and
 * plans the whole fleet and warms up its own compiled code, so more render
 * threads pay only when there is much to render: a big fleet with no record
 * of an earlier run (a first render, or `--force`). Each render thread that
 * writes packages has a staging thread beside it on another core, so a first
 * render into an empty directory takes one render thread per two CPUs.
 * Measured on 2 CPUs: 10,000 new variants render sooner with one render
 * thread than with two, and re-render with --force over their output sooner
 * with two (bench/RESULTS.md measures the choice made here: 'render 10,000
 * new variants' and 're-render 10,000 unchanged variants --force').
 */
export function defaultThreads(needs: ThreadNeeds, cpus = availableParallelism()): number {
  if (!fastPath('threads')) return 1
  if (needs.recorded || needs.fleetBytes < manyThreadsBytes) return 1
  return Math.max(1, needs.writesAll ? Math.floor(cpus / 2) : cpus)
}

/** A pending variant as a thread posts it: dependency objects as YAML text. */
interface PostedPending extends Omit<Pending, 'dependencies'> {
  dependencies: string[]
}

/** What a render thread posts: a variant's report as it is done, then its whole share. */
type RenderThreadMessage = { type: 'done'; pending: PostedPending[] } | { type: 'progress'; report: VariantReport }

/** A render thread: its results, and the upstream refs it waits for when started before they were listed. */
export interface RenderThread {
  done: Promise<Pending[]>
  pin(pins: UpstreamPins): void
  stop(): void
}

/**
 * Starts render thread `index` of `threads`; it renders its share (if the
 * plan gives it one) and `done` resolves to the results. Without `pins` it
 * waits for them (`pin`) before listing the upstream revisions.
 */
export function startRenderThread(
  settings: RenderSettings,
  index: number,
  threads: number,
  onDone: (report: VariantReport) => void,
  pins?: UpstreamPins,
): RenderThread {
  const worker = startThread(new URL('./render-worker.js', import.meta.url), {
    settings,
    index,
    threads,
    ...(pins ? { pins } : {}),
  })
  const done = new Promise<Pending[]>((resolvePending, reject) => {
    let result: Pending[] | undefined
    worker.on('message', (message: RenderThreadMessage) => {
      if (message.type === 'progress') onDone(message.report)
      else result = message.pending.map(revive)
    })
    worker.on('error', reject)
    worker.on('exit', (code) =>
      result ? resolvePending(result) : reject(new Error(`render worker ${index} exited with code ${code}`)),
    )
  })
  return {
    done,
    pin: (listed) => worker.postMessage({ type: 'pins', pins: listed }),
    stop: () => void worker.terminate(),
  }
}

/**
 * The body of a render thread (render-worker.js): sets up the same run as the
 * main thread and renders its share. It lives here, not in the worker's
 * module, so that a bundled kpt-variants has one copy of the code for every
 * thread: the worker module only imports and calls it.
 */
export async function runRenderWorker(): Promise<void> {
  const { settings, index, threads, pins } = workerData as {
    settings: RenderSettings
    index: number
    threads: number
    pins?: UpstreamPins
  }
  const post = (pending: Pending): PostedPending => ({
    ...pending,
    dependencies: pending.dependencies.map((o) => o.toItemText()),
  })
  // Started early, the thread gets the refs the main thread listed when it has listed them.
  const pinned = pins
    ? Promise.resolve(pins)
    : new Promise<UpstreamPins>((resolve) =>
        parentPort!.once('message', (message: { pins: UpstreamPins }) => resolve(message.pins)),
      )
  const run = await setUpRun(settings, { thread: index, pinned })
  try {
    // Progress needs only the report; the packages go once, with the rest of the share.
    const done = await renderShare(run, index, threads, (pending) =>
      parentPort!.postMessage({ type: 'progress', report: pending.report } satisfies RenderThreadMessage),
    )
    parentPort!.postMessage({ type: 'done', pending: done.map(post) } satisfies RenderThreadMessage)
  } finally {
    // Staged packages stay for the main thread to commit; only scratch files go.
    run.close()
  }
}

function revive(posted: PostedPending): Pending {
  return { ...posted, dependencies: posted.dependencies.map((text, i) => KubeObject.fromItemSource(text, i)) }
}
