/** The thread of read-ahead.ts: reads the package directories it is given, in order, never more than `window` ahead of those taken. */
import { parentPort, workerData } from 'node:worker_threads'
import { readPackageDirectory } from './directory.js'
import type { ReadAheadMessage } from './read-ahead.js'
import { packFiles } from './write-files.js'

const { dirs, taken, window } = workerData as { dirs: string[]; taken: Int32Array; window: number }

for (let index = 0; index < dirs.length; index++) {
  for (let count = Atomics.load(taken, 0); index >= count + window; count = Atomics.load(taken, 0)) Atomics.wait(taken, 0, count)
  let message: ReadAheadMessage
  try {
    const files = dirs[index] ? readPackageDirectory(dirs[index]) : undefined
    message = dirs[index] ? (files ? { index, files: packFiles(files) } : { index }) : { index, failed: true }
  } catch {
    message = { index, failed: true }
  }
  parentPort!.postMessage(message, message.files ? [message.files.bytes] : [])
}
