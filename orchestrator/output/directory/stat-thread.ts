/**
 * The metadata digests of the packages an earlier render recorded, taken on
 * a second thread while the render thread loads and plans the fleet. A
 * re-render compares each unchanged variant's files with their record by
 * these digests (a `stat` of every file, a good part of a re-render: see
 * bench/RESULTS.md, 're-render 1,000 unchanged variants'), and by the time
 * the plan is made they are ready. A file changed after its digest was taken
 * is a change made after the run looked, as with any check.
 */
import { fastPath } from '../../../functions/krm/fast-paths.js'
import { compiledThread, startThread } from '../../util/threads.js'

const workerFile = new URL('./stat-worker.js', import.meta.url)

/**
 * How many packages of 51 files a thread could digest in the time it takes to
 * start (Node setting up the thread; measured on 2 CPUs): below this many,
 * the caller waits for the thread for nothing.
 */
const startupInPackages = 400

/**
 * How many of `count` packages to hand to a thread while this one digests the
 * rest, so that both finish together: none when the thread cannot pay for its
 * start, as a re-render of 100 unchanged variants would wait for a thread
 * that took half of them (see bench/RESULTS.md, 're-render 100 unchanged
 * variants').
 */
export function backgroundShare(count: number): number {
  return count < 2 * startupInPackages ? 0 : Math.floor((count - startupInPackages) / 2)
}

/**
 * Starts taking the digests of `dirs` (see statPackageDirectory); resolves to
 * each directory's digest (undefined where there is none). Undefined when no
 * thread can be started here (the TypeScript sources, under test, have no
 * compiled worker): the caller then takes each digest when it needs it.
 * `now` is the time the racy window is measured from (default: the clock's).
 */
export function digestInBackground(
  dirs: readonly string[],
  worker = workerFile,
  now?: number,
): Promise<Map<string, string | undefined>> | undefined {
  if (dirs.length === 0 || !fastPath('stat-thread') || !compiledThread(worker)) return undefined
  return new Promise((resolve) => {
    const thread = startThread(worker, now === undefined ? { dirs } : { dirs, now })
    let digests: Map<string, string | undefined> | undefined
    thread.on(
      'message',
      (list: (string | null)[]) => (digests = new Map(dirs.map((dir, i) => [dir, list[i] ?? undefined]))),
    )
    // A thread that fails only costs the time: each digest is then taken when needed.
    thread.on('error', () => undefined)
    thread.on('exit', () => resolve(digests ?? new Map()))
  })
}
