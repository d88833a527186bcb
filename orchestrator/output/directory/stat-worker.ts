/** The worker of stat-thread.ts: the metadata digests of the directories it is given, in order. */
import { parentPort, workerData } from 'node:worker_threads'
import { statPackageDirectory } from '../../package/directory.js'

const { dirs, now } = workerData as { dirs: string[]; now?: number }
parentPort!.postMessage(dirs.map((dir) => statPackageDirectory(dir, now) ?? null))
