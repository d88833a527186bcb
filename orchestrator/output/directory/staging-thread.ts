/**
 * Writing staged packages on a thread of their own. A new variant's fifty-odd
 * files cost nearly as much to write (open, write, close: system-call time)
 * as the variant costs to render, and the render thread need not wait for
 * them: it queues each package and renders the next while this thread writes,
 * so a second core does the writing (see bench/RESULTS.md, 'render 1,000
 * new variants (50 resources each)'). Node's own asynchronous fs was slower
 * than writing in line: a promise per file on the render thread costs more
 * than the write.
 *
 * When the thread falls behind, the render thread writes a package itself
 * (see `write`). `settle` waits for every package and names those that
 * could not be written, which the caller then discards and
 * reports as failed: nothing half-written is ever committed.
 */
import { fastPath } from '../../../functions/krm/fast-paths.js'
import type { Worker } from 'node:worker_threads'
import type { PackageFiles } from '../../package/files.js'
import { compiledThread, startThread } from '../../util/threads.js'
import { packFiles, writePackageFiles } from './write-files.js'

const workerFile = new URL('./staging-worker.js', import.meta.url)

/** A staging thread, or undefined where none can run (no compiled worker): the caller then writes in line. */
export function openStagingThread(): StagingThread | undefined {
  return fastPath('staging-thread') && compiledThread(workerFile) ? new StagingThread() : undefined
}

export class StagingThread {
  #worker: Worker | undefined
  /** Directories queued and not yet acknowledged, oldest first. */
  readonly #queued: string[] = []
  readonly #failures = new Map<string, string>()
  #wake: (() => void) | undefined

  /** `maxQueued` bounds the packages waiting for the thread (beyond it the caller writes in line); `worker` is the compiled staging-worker.js. */
  constructor(
    private readonly maxQueued = 32,
    private readonly worker = workerFile,
  ) {}

  /**
   * Queues `files` to be written below `dir`. When `maxQueued` packages are
   * already waiting, the calling thread writes this one itself instead of
   * waiting for the thread to catch up: neither thread idles while the other
   * has work (on 2 CPUs the writing of a new variant's files outlasts its render).
   */
  async write(dir: string, files: PackageFiles): Promise<void> {
    if (this.#queued.length >= this.maxQueued) {
      try {
        writePackageFiles(dir, files)
      } catch (err) {
        this.#failures.set(dir, (err as Error).message)
      }
      // The thread's acknowledgements are events: without a turn of the event loop, the queue would look full for good.
      await new Promise((resolve) => setImmediate(resolve))
      return
    }
    const worker = this.#start()
    const packed = packFiles(files)
    worker.postMessage({ dir, files: packed }, [packed.bytes])
    // Kept alive while it has work: the render may be awaiting nothing but this thread.
    if (this.#queued.push(dir) === 1) worker.ref()
  }

  /**
   * Queues the removal of the tree at `dir` (a replaced package, renamed
   * away: nothing reads it any more). Never done in line: a path costs no
   * memory to queue, and the caller commits packages without a pause in
   * which the thread's acknowledgements could arrive.
   */
  remove(dir: string): void {
    const worker = this.#start()
    worker.postMessage({ dir })
    if (this.#queued.push(dir) === 1) worker.ref()
  }

  /** Waits until every queued package is written (or tree removed); returns the directories that could not be, with the error. */
  async settle(): Promise<Map<string, string>> {
    while (this.#queued.length > 0) await this.#acknowledged()
    return this.#failures
  }

  /** Stops the thread (call after `settle`). */
  async close(): Promise<void> {
    const worker = this.#worker
    this.#worker = undefined
    if (worker) await worker.terminate()
  }

  #start(): Worker {
    if (this.#worker) return this.#worker
    const worker = startThread(this.worker)
    worker.on('message', ({ dir, error }: { dir: string; error?: string }) => {
      this.#queued.splice(this.#queued.indexOf(dir), 1)
      if (error !== undefined) this.#failures.set(dir, error)
      if (this.#queued.length === 0) worker.unref()
      this.#wakeUp()
    })
    // The thread itself failed (it cannot start, or ran out of memory): nothing queued was written.
    const lost = (message: string) => {
      if (this.#worker !== worker) return
      this.#worker = undefined
      for (const dir of this.#queued.splice(0)) this.#failures.set(dir, message)
      this.#wakeUp()
    }
    worker.on('error', (err) => lost(err.message))
    worker.on('exit', (code) => lost(`the staging thread stopped (exit code ${code})`))
    this.#worker = worker
    return worker
  }

  #acknowledged(): Promise<void> {
    return new Promise((resolve) => (this.#wake = resolve))
  }

  #wakeUp(): void {
    const wake = this.#wake
    this.#wake = undefined
    wake?.()
  }
}
