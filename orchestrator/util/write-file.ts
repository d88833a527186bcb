/** Writing one of a run's record files (in the cache) whole, or failing with a message that names it. */
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { threadId } from 'node:worker_threads'

/**
 * Writes `data` to `file` through a temporary file renamed into place, so
 * that a reader, or a crash, finds the old file or the new one. A failure
 * (the disk full) removes the temporary file and throws an error naming
 * `file`: Node's own says only `ENOSPC: no space left on device, write`.
 */
export function writeFileWhole(file: string, data: string): void {
  // Render threads of one process write the same files (the catalog cache): the temporary file is the thread's own.
  const temporary = `${file}.${process.pid}.${threadId}.tmp`
  try {
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(temporary, data)
    renameSync(temporary, file)
  } catch (err) {
    rmSync(temporary, { force: true })
    throw new Error(`cannot write ${file}: ${(err as Error).message}`)
  }
}
