/**
 * The one way kpt-variants replaces a file it owns (a cache record, the fleet
 * page, a fleet file it edits): written beside it and renamed into place, so
 * that a reader, or a crash, finds the old file or the new one, never a part.
 *
 * No fsync: a record torn by a power loss reads as damaged, which every
 * reader takes for a miss, and the cost would fall on every run.
 */
import { chmodSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { threadId } from 'node:worker_threads'

export interface AtomicWriteOptions {
  /** The file's mode (the one it replaces, say); else the process's default. */
  mode?: number
  /** Called once the data is written, before the rename: it may throw to leave the old file in place. */
  beforeRename?: () => void
}

/**
 * Replaces `file` with `data` (making its directory when missing). A failure (the disk full) removes the temporary
 * file and throws an error naming `file`: Node's own says only `ENOSPC: no
 * space left on device, write`. What `beforeRename` throws is thrown as it is.
 */
export function writeFileAtomic(file: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): void {
  // Same directory, so the rename is atomic; the thread's own name, since render threads of one process write the same records.
  const temporary = join(dirname(file), `.${basename(file)}.${process.pid}.${threadId}.tmp`)
  try {
    attempt(file, () => {
      mkdirSync(dirname(file), { recursive: true })
      writeFileSync(temporary, data)
      if (options.mode !== undefined) chmodSync(temporary, options.mode)
    })
    options.beforeRename?.()
    attempt(file, () => renameSync(temporary, file))
  } finally {
    rmSync(temporary, { force: true })
  }
}

function attempt(file: string, step: () => void): void {
  try {
    step()
  } catch (err) {
    throw new Error(`cannot write ${file}: ${(err as Error).message}`)
  }
}
