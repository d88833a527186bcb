/** The thread of read-ahead.ts: reads the package directories it is given, in order, never more than `window` ahead of those taken. */
import { parentPort, workerData } from 'node:worker_threads'
import { readPackageAndDigest } from '../../package/directory.js'
import type { ReadAheadMessage } from './read-ahead.js'
import { packFiles } from './write-files.js'

const { dirs, taken, window } = workerData as { dirs: string[]; taken: Int32Array; window: number }

for (let index = 0; index < dirs.length; index++) {
  for (let count = Atomics.load(taken, 0); index >= count + window; count = Atomics.load(taken, 0)) {
    // Said before waiting: it is a window full, not a slow read (the tests wait for this).
    parentPort!.postMessage({ index, waiting: true } satisfies ReadAheadMessage)
    Atomics.wait(taken, 0, count)
  }
  // Not read (no directory: a path the writer refuses; or an error): the render thread reads it and meets the error.
  let message: ReadAheadMessage = { index, failed: true }
  const dir = dirs[index]
  if (dir) {
    try {
      const read = readPackageAndDigest(dir)
      message = read
        ? { index, files: packFiles(read.files), ...(read.digest ? { digest: read.digest } : {}) }
        : { index }
    } catch {
      // Left failed.
    }
  }
  parentPort!.postMessage(message, message.files ? [message.files.bytes] : [])
}
