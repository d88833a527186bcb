/**
 * Work on many repositories at once: a repository's git processes run one
 * after another, but those of different repositories need not. Most of a
 * small repository's time is spent starting processes and waiting on them,
 * so a few at a time keep both cores busy (see bench/RESULTS.md, 'publish
 * --fleet: 1,000 drafts across 100 repositories in one run').
 */

/** Repositories worked on at once. */
export const repositoriesAtOnce = 6

/** Calls `work` on every item, at most `limit` at once; resolves when all are done, rejects with the first failure once none is running. */
export async function forEachConcurrently<T>(
  items: Iterable<T>,
  work: (item: T) => Promise<void>,
  limit = repositoriesAtOnce,
): Promise<void> {
  const queue = [...items]
  let failure: { error: unknown } | undefined
  const worker = async () => {
    while (queue.length > 0 && !failure) {
      try {
        await work(queue.shift()!)
      } catch (error) {
        failure ??= { error }
      }
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, queue.length)) }, worker))
  if (failure) throw failure.error
}
