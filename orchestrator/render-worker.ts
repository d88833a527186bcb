/** A worker thread of `kpt-variants render` (see runRenderWorker). */
import { runRenderWorker } from './render.js'

await runRenderWorker()
