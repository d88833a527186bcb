/** A worker thread of `kpt-variants render` (see runRenderWorker). */
import { runRenderWorker } from './threads.js'

await runRenderWorker()
