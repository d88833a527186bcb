/**
 * Package directories on disk: a package read as files, the digest of its
 * files' metadata (which tells an untouched package without reading it), and
 * the packages found below a directory. Only reads.
 */
import { createHash } from 'node:crypto'
import { closeSync, fstatSync, lstatSync, openSync, readdirSync, readSync } from 'node:fs'
import type { BigIntStats } from 'node:fs'
import { join, relative, sep } from 'node:path'
import type { PackageFile, PackageFiles } from './files.js'

/** Reads every file below a package directory (`.git` skipped); undefined when the directory does not exist. */
export function readPackageDirectory(dir: string): PackageFiles | undefined {
  return readPackageAndDigest(dir)?.files
}

/**
 * A package read from its directory, and the digest of its files' metadata
 * as statPackageDirectory takes it (undefined where that would be), from the
 * same system calls: each file is opened, its metadata read from the open
 * file, then its content. A package the run reads and then leaves as it is
 * (a --force re-render that changes nothing) is recorded by this digest
 * rather than walked again. Undefined when the directory does not exist.
 */
export function readPackageAndDigest(
  dir: string,
  now = Date.now(),
): { files: PackageFiles; digest: string | undefined } | undefined {
  let own
  try {
    // A missing directory (every new variant's) answers without an exception to build and catch.
    own = lstatSync(dir, { bigint: true, throwIfNoEntry: false })
  } catch {
    return undefined
  }
  if (!own) return undefined
  if (!own.isDirectory()) throw new Error(`${dir} exists and is not a directory`)
  const trusted = trustedAt(now)
  let racy = !trusted(own)
  const files: PackageFiles = new Map()
  const lines: string[] = []
  for (const { path, full } of packageFilePaths(dir)) {
    const fd = openSync(full, 'r')
    try {
      const stat = fstatSync(fd, { bigint: true })
      const content = readOpenFile(fd, Number(stat.size))
      const file: PackageFile = { content }
      if ((stat.mode & 0o111n) !== 0n) file.executable = true
      files.set(path, file)
      if (!trusted(stat)) racy = true
      lines.push(metadataLine(path, stat))
    } finally {
      closeSync(fd)
    }
  }
  return { files, digest: racy ? undefined : metadataDigest(lines) }
}

/** An open file's content: `size` bytes as its metadata says, fewer if it shrinks meanwhile (as readFileSync reads a regular file). */
function readOpenFile(fd: number, size: number): Buffer {
  const buffer = Buffer.allocUnsafe(size)
  let length = 0
  while (length < size) {
    const read = readSync(fd, buffer, length, size - length, null)
    if (read === 0) break
    length += read
  }
  return length === size ? buffer : buffer.subarray(0, length)
}

/** The regular files below a package directory (`.git` skipped): slash-separated paths relative to it, in sorted order, and full paths. */
function packageFilePaths(dir: string): { path: string; full: string }[] {
  const files: { path: string; full: string }[] = []
  // Paths joined by hand, not with path.join/relative: a re-render walks every unchanged package (statPackageDirectory).
  const walk = (full: string, path: string) => {
    for (const entry of readdirSync(full, { withFileTypes: true })) {
      if (entry.name === '.git') continue
      const entryFull = `${full}${sep}${entry.name}`
      const entryPath = path === '' ? entry.name : `${path}/${entry.name}`
      if (entry.isDirectory()) walk(entryFull, entryPath)
      else if (entry.isFile()) files.push({ path: entryPath, full: entryFull })
    }
  }
  walk(dir, '')
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
}

/** How long after a file's modification its metadata is trusted to show a later edit (git's racy-clean rule, with a margin for coarse clocks). */
const racyWindowMs = 2000

/**
 * A digest of the metadata of every file below a package directory (path,
 * size, modification and change times, inode, mode; `.git` skipped), which changes when
 * any file is edited, added, removed or replaced. Undefined when the
 * directory does not exist, or when a file was modified so recently that an
 * edit within the same clock tick would not show.
 */
export function statPackageDirectory(dir: string, now = Date.now()): string | undefined {
  const trusted = trustedAt(now)
  const lines: string[] = []
  try {
    // A package renamed into place (or a file added or removed) this recently changed its directory too: no need to walk it.
    const own = lstatSync(dir, { bigint: true })
    if (!trusted(own)) return undefined
    for (const { path, full } of packageFilePaths(dir)) {
      const stat = lstatSync(full, { bigint: true })
      if (!trusted(stat)) return undefined
      lines.push(metadataLine(path, stat))
    }
  } catch {
    return undefined
  }
  return metadataDigest(lines)
}

/** Whether a file's metadata, at `now`, would show a later edit: modified and changed before the racy window. */
function trustedAt(now: number): (stat: BigIntStats) => boolean {
  const newest = BigInt(now - racyWindowMs) * 1_000_000n
  return (stat) => stat.mtimeNs <= newest && stat.ctimeNs <= newest
}

function metadataLine(path: string, stat: BigIntStats): string {
  return `${path}\0${stat.size}\0${stat.mtimeNs}\0${stat.ctimeNs}\0${stat.ino}\0${stat.mode}\n`
}

function metadataDigest(lines: readonly string[]): string {
  // One hash of the whole text: the same digest as hashing line by line, for less.
  return createHash('sha256').update(lines.join('')).digest('hex')
}

function isRegularFile(path: string): boolean {
  try {
    return lstatSync(path, { throwIfNoEntry: false })?.isFile() ?? false
  } catch {
    return false
  }
}

/** The packages below `outDir` (directories with a Kptfile; their subdirectories belong to them), as slash paths. */
export function findPackages(outDir: string): string[] {
  const found: string[] = []
  const walk = (dir: string) => {
    // A package is found by its Kptfile alone: listing its fifty-odd files would cost more.
    if (dir !== outDir && isRegularFile(join(dir, 'Kptfile'))) {
      found.push(relative(outDir, dir).split(sep).join('/'))
      return
    }
    let entries
    try {
      entries = readdirSync(dir, { withFileTypes: true })
    } catch {
      return
    }
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (entry.isDirectory() && !entry.name.startsWith('.')) walk(join(dir, entry.name))
    }
  }
  walk(outDir)
  return found
}
