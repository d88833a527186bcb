/**
 * Downstream packages read on a second thread, a few ahead of the render
 * thread. An update or a `--force` re-render reads every variant's package
 * before rendering it (52,000 files for 1,000 variants), while the second
 * core, with nothing to write, sits idle (see bench/RESULTS.md, 'upstream
 * update of 1,000 variants').
 * The thread reads the packages in the order they will be rendered, at most
 * `window` ahead of the last one taken, so memory stays flat at any fleet size.
 */
import { fastPath } from '../../../functions/krm/fast-paths.js'
import type { Worker } from 'node:worker_threads'
import type { PackageFiles } from '../../package/files.js'
import { compiledThread, startThread } from '../../util/threads.js'
import type { PackedFiles } from './write-files.js'
import { unpackFiles } from './write-files.js'

const workerFile = new URL('./read-ahead-worker.js', import.meta.url)

/** Packages read ahead and not yet taken, at most. */
const defaultWindow = 32

/**
 * What the thread posts for each directory, in order: its files, none (no
 * such directory), or that it could not read it; and `waiting` when its
 * window is full and it waits before reading `index`.
 */
export type ReadAheadMessage = { index: number; files?: PackedFiles; digest?: string; failed?: true; waiting?: true }

/** A package as read: its files, or undefined when the directory does not exist; its metadata digest if trusted (readPackageAndDigest). */
export type ReadPackage = { files: PackageFiles | undefined; digest?: string }

export class ReadAhead {
  readonly #thread: Worker
  /** How many packages have been taken (shared with the thread, which waits on it). */
  readonly #taken: Int32Array
  readonly #arrived = new Map<number, ReadAheadMessage>()
  readonly #waiting = new Map<number, (message: ReadAheadMessage | undefined) => void>()
  #stopped = false
  /** Who waits for the thread to find its window full (`full`). */
  readonly #full: ((index: number) => void)[] = []

  private constructor(dirs: readonly string[], worker: URL, window: number) {
    this.#taken = new Int32Array(new SharedArrayBuffer(4))
    this.#thread = startThread(worker, { dirs, taken: this.#taken, window })
    // The render never waits for the thread to end: an unfinished read-ahead is dropped at exit.
    this.#thread.unref()
    this.#thread.on('message', (message: ReadAheadMessage) => {
      if (message.waiting) {
        for (const resolve of this.#full.splice(0)) resolve(message.index)
        return
      }
      const waiter = this.#waiting.get(message.index)
      if (waiter) {
        this.#waiting.delete(message.index)
        waiter(message)
      } else this.#arrived.set(message.index, message)
    })
    // A thread that fails only costs the time: whoever waits reads the package itself.
    const stop = () => {
      this.#stopped = true
      for (const waiter of this.#waiting.values()) waiter(undefined)
      this.#waiting.clear()
    }
    this.#thread.on('error', stop)
    this.#thread.on('exit', stop)
  }

  /** Starts reading `dirs` in order; undefined when no thread can be started here (the TypeScript sources under test have no compiled worker). */
  static start(dirs: readonly string[], worker = workerFile, window = defaultWindow): ReadAhead | undefined {
    if (dirs.length === 0 || !fastPath('read-ahead') || !compiledThread(worker)) return undefined
    return new ReadAhead(dirs, worker, window)
  }

  /**
   * The package of `dirs[index]` as the thread read it; undefined when it
   * could not (the caller reads it itself, and meets the error, if any).
   * Taking one lets the thread read on; those before it are dropped.
   */
  async take(index: number): Promise<ReadPackage | undefined> {
    if (index + 1 > Atomics.load(this.#taken, 0)) {
      Atomics.store(this.#taken, 0, index + 1)
      Atomics.notify(this.#taken, 0)
    }
    for (const earlier of this.#arrived.keys()) if (earlier < index) this.#arrived.delete(earlier)
    let message = this.#arrived.get(index)
    this.#arrived.delete(index)
    if (!message && !this.#stopped)
      message = await new Promise<ReadAheadMessage | undefined>((resolve) => this.#waiting.set(index, resolve))
    if (!message || message.failed) return undefined
    if (!message.files) return { files: undefined }
    const files: PackageFiles = new Map()
    for (const [path, { content, executable }] of unpackFiles(message.files)) {
      const file = { content: Buffer.from(content.buffer, content.byteOffset, content.byteLength) }
      files.set(path, executable ? { ...file, executable: true } : file)
    }
    return message.digest === undefined ? { files } : { files, digest: message.digest }
  }

  /** Resolves the next time the thread finds its window full, to the index it waits to read. */
  full(): Promise<number> {
    return new Promise((resolve) => this.#full.push(resolve))
  }

  /** Stops the thread (a render that ends early leaves packages unread). */
  close(): void {
    this.#stopped = true
    void this.#thread.terminate()
  }
}
