import { forEachConcurrently } from './concurrency.js'

describe('forEachConcurrently', () => {
  test('does every item, never more than the limit at once', async () => {
    let running = 0
    let most = 0
    const done: number[] = []
    const gates: (() => void)[] = []
    const work = forEachConcurrently(
      [1, 2, 3, 4, 5],
      async (n) => {
        most = Math.max(most, ++running)
        await new Promise<void>((resolve) => gates.push(resolve))
        running--
        done.push(n)
      },
      2,
    )
    while (done.length < 5) {
      await new Promise((resolve) => setImmediate(resolve))
      gates.shift()?.()
    }
    await work
    expect(done.sort()).toEqual([1, 2, 3, 4, 5])
    expect(most).toBe(2)
  })

  test('rejects with the first failure, after the running ones end, starting no more', async () => {
    const started: number[] = []
    await expect(
      forEachConcurrently(
        [1, 2, 3, 4],
        async (n) => {
          started.push(n)
          if (n === 1) throw new Error('one')
        },
        1,
      ),
    ).rejects.toThrow('one')
    expect(started).toEqual([1])
  })
})
