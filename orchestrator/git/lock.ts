/**
 * One render at a time per repository: a lock file in the repository's
 * working clone, created exclusively and holding the owner's process id and
 * host. A lock whose process is gone (a render that crashed or was killed) is
 * stale and taken over; a live one is waited for, up to a timeout.
 */
import { randomBytes } from 'node:crypto'
import { closeSync, linkSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs'
import { hostname } from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'

/** The lock file's name inside a clone's git directory. */
export const lockFileName = 'kpt-variants.lock'

/** A held lock; `release` is idempotent, and every held lock is released when the process exits. */
export interface Lock {
  release(): void
}

const held = new Set<string>()
let exitHookInstalled = false

/** The repository is locked by another live render and the wait timed out. */
export class LockedError extends Error {
  constructor(
    readonly file: string,
    readonly owner: string,
  ) {
    super(`another kpt-variants run (${owner}) holds the lock ${file}`)
    this.name = 'LockedError'
  }
}

/** Takes the lock `file`, waiting up to `timeoutMs` for a live owner to release it. */
export async function acquireLock(file: string, timeoutMs: number): Promise<Lock> {
  const deadline = Date.now() + timeoutMs
  for (let wait = 25; ; wait = Math.min(wait * 2, 500)) {
    if (tryCreate(file)) return holdLock(file)
    const owner = readOwner(file)
    if (owner && isStale(owner)) {
      // Removed only if it still names the dead owner: two runs taking over one stale lock race on the create above.
      if (readOwner(file)?.raw === owner.raw) rmSync(file, { force: true })
      continue
    }
    if (Date.now() >= deadline)
      throw new LockedError(file, owner ? `process ${owner.pid} on ${owner.host}` : 'unknown owner')
    await sleep(wait)
  }
}

/**
 * Creates the lock file with its owner in it, or returns false when it exists.
 * It is written whole under another name and linked into place, so that it
 * never exists empty: created empty and written after, another run reading it
 * in between would take it for garbage, remove it and take the lock too.
 * Where the file system has no hard links, it is created and then written.
 */
function tryCreate(file: string): boolean {
  const owner = `${process.pid} ${hostname()}\n`
  const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`
  try {
    writeFileSync(temporary, owner)
    linkSync(temporary, file)
    return true
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'EEXIST') return false
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS') throw err
  } finally {
    rmSync(temporary, { force: true })
  }
  let fd: number
  try {
    fd = openSync(file, 'wx')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw err
  }
  try {
    writeSync(fd, owner)
  } finally {
    closeSync(fd)
  }
  return true
}

function holdLock(file: string): Lock {
  held.add(file)
  if (!exitHookInstalled) {
    exitHookInstalled = true
    process.on('exit', () => {
      for (const f of held) rmSync(f, { force: true })
    })
  }
  return {
    release() {
      if (held.delete(file)) rmSync(file, { force: true })
    },
  }
}

interface Owner {
  raw: string
  pid: number
  host: string
}

function readOwner(file: string): Owner | undefined {
  let raw: string
  try {
    raw = readFileSync(file, 'utf8')
  } catch {
    return undefined
  }
  const [pid, host] = raw.trim().split(' ')
  return { raw, pid: Number(pid), host: host ?? '' }
}

/** A lock is stale when its owner ran on this host and is no longer running (or the file is unreadable garbage). */
function isStale(owner: Owner): boolean {
  if (!Number.isInteger(owner.pid) || owner.pid <= 0) return true
  if (owner.host !== hostname()) return false
  try {
    process.kill(owner.pid, 0)
    return false
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'EPERM'
  }
}
