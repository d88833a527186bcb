/** Writing a package's files into a directory: shared by DirectoryWriter.stage and the staging thread (staging-worker.ts). */
import { mkdirSync, readdirSync, rmdirSync, unlinkSync, writeFileSync } from 'node:fs'
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

/**
 * Removes a directory and everything below it (links unfollowed). An update
 * removes each variant's previous package once the new one is in place:
 * `rmSync({ recursive: true })` stats every entry before removing it, this
 * unlinks what a directory listing says is a file, a system call fewer for
 * each.
 */
export function removeTree(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) removeTree(path)
    else unlinkSync(path)
  }
  rmdirSync(dir)
}

/**
 * A package's files as one message to another thread: the paths, and the
 * contents end to end in one buffer the message hands over rather than
 * copies. Posting the files themselves cloned an object and a buffer per file.
 */
export interface PackedFiles {
  paths: string[]
  /** Where each file's content ends in `bytes`. */
  ends: number[]
  /** Paths of the executable files. */
  executable: string[]
  bytes: ArrayBuffer
}

export function packFiles(files: ReadonlyMap<string, FileToWrite>): PackedFiles {
  let total = 0
  for (const { content } of files.values()) total += content.byteLength
  // A buffer of its own, never a slice of Node's shared pool: it is transferred, which detaches it.
  const buffer = new ArrayBuffer(total)
  const bytes = new Uint8Array(buffer)
  const packed: PackedFiles = { paths: [], ends: [], executable: [], bytes: buffer }
  let end = 0
  for (const [path, { content, executable }] of files) {
    bytes.set(content, end)
    end += content.byteLength
    packed.paths.push(path)
    packed.ends.push(end)
    if (executable) packed.executable.push(path)
  }
  return packed
}

export function unpackFiles(packed: PackedFiles): Map<string, FileToWrite> {
  const executable = new Set(packed.executable)
  const start = (i: number) => (i === 0 ? 0 : packed.ends[i - 1]!)
  const files = new Map<string, FileToWrite>()
  packed.paths.forEach((path, i) => {
    const content = new Uint8Array(packed.bytes, start(i), packed.ends[i]! - start(i))
    files.set(path, executable.has(path) ? { content, executable: true } : { content })
  })
  return files
}
