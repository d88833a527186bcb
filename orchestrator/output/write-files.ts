/** Writing a package's files into a directory: shared by DirectoryWriter.stage and the staging thread (staging-worker.ts). */
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'

/** A file as written: its bytes (a Buffer, or the Uint8Array a thread receives) and whether it is executable. */
export interface FileToWrite {
  content: Uint8Array
  executable?: boolean
}

/** Writes `files` (slash-separated paths) below `dir`, which is made if missing. */
export function writePackageFiles(dir: string, files: ReadonlyMap<string, FileToWrite>): void {
  mkdirSync(dir, { recursive: true })
  // One mkdir per directory, not per file: most packages are one flat directory.
  const made = new Set([dir])
  for (const [file, { content, executable }] of files) {
    const full = join(dir, ...file.split('/'))
    const parent = dirname(full)
    if (!made.has(parent)) {
      mkdirSync(parent, { recursive: true })
      made.add(parent)
    }
    writeFileSync(full, content, { mode: executable ? 0o755 : 0o644 })
  }
}
