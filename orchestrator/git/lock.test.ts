import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import { acquireLock, LockedError } from './lock.js'

describe('acquireLock', () => {
  let dir: string
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'kpt-variants-lock-'))))
  afterEach(() => rmSync(dir, { recursive: true, force: true }))

  test('is exclusive until released, and records its owner', async () => {
    const file = join(dir, 'repo.lock')
    const lock = await acquireLock(file, 0)
    expect(readFileSync(file, 'utf8')).toBe(`${process.pid} ${hostname()}\n`)
    await expect(acquireLock(file, 50)).rejects.toThrow(LockedError)
    lock.release()
    lock.release()
    expect(existsSync(file)).toBe(false)
    ;(await acquireLock(file, 0)).release()
  })

  test('waits for a live owner to release it', async () => {
    const file = join(dir, 'repo.lock')
    const first = await acquireLock(file, 0)
    let settled = false
    // acquireLock tries at once, before it first waits: the lock is held, so it waits.
    const second = acquireLock(file, 5_000).finally(() => (settled = true))
    await new Promise(setImmediate)
    expect(settled).toBe(false)
    first.release()
    ;(await second).release()
  })

  test('takes over the lock of a process that is gone, and of an unreadable lock file', async () => {
    const file = join(dir, 'repo.lock')
    const gone = execa('true')
    await gone
    writeFileSync(file, `${gone.pid} ${hostname()}\n`)
    ;(await acquireLock(file, 0)).release()
    writeFileSync(file, 'garbage')
    ;(await acquireLock(file, 0)).release()
  })

  test("never takes over a lock of another host's process", async () => {
    const file = join(dir, 'repo.lock')
    writeFileSync(file, `1 another-host\n`)
    await expect(acquireLock(file, 50)).rejects.toThrow(
      'another kpt-variants run (process 1 on another-host) holds the lock',
    )
  })
})
