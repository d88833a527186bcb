/** A worker thread of `kpt-variants render`: sets up the same run as the main thread and renders its share. */
import { parentPort, workerData } from 'node:worker_threads'
import { renderShare, startRun } from './render.js'
import type { PostedPending, RenderSettings } from './render.js'
import type { Pending } from './render-variant.js'

const { settings, index, threads } = workerData as { settings: RenderSettings; index: number; threads: number }
const post = (pending: Pending): PostedPending => ({ ...pending, dependencies: pending.dependencies.map((o) => o.toItemText()) })

const run = await startRun(settings, index)
try {
  // Progress needs only the report; the packages go once, with the rest of the share.
  const done = await renderShare(run, index, threads, (pending) => parentPort!.postMessage({ type: 'progress', report: pending.report }))
  parentPort!.postMessage({ type: 'done', pending: done.map(post) })
} finally {
  // Staged packages stay for the main thread to commit; only scratch files go.
  run.close()
}
