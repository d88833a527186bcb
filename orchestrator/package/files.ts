/** A package as files: what is read from git or a directory and what is written back. */

/** One file of a package. */
export interface PackageFile {
  content: Buffer
  /** True for a file git or the file system records as executable. */
  executable?: boolean
}

/** A package's files by slash-separated path relative to the package root, in sorted order. */
export type PackageFiles = Map<string, PackageFile>

/** A text file (the content is UTF-8). */
export function textFile(text: string, executable = false): PackageFile {
  return executable ? { content: Buffer.from(text, 'utf8'), executable } : { content: Buffer.from(text, 'utf8') }
}

/** The text of a file. */
export function fileText(file: PackageFile): string {
  return file.content.toString('utf8')
}

/** True when two packages hold the same paths with the same bytes and modes. */
export function samePackageFiles(a: PackageFiles, b: PackageFiles): boolean {
  if (a.size !== b.size) return false
  for (const [path, file] of a) {
    const other = b.get(path)
    if (!other || !sameFile(file, other)) return false
  }
  return true
}

/** True when two files hold the same bytes and mode. */
export function sameFile(a: PackageFile, b: PackageFile): boolean {
  return a === b || (Boolean(a.executable) === Boolean(b.executable) && a.content.equals(b.content))
}

/** The files sorted by path (byte order, as git and kpt list them). */
export function sortedFiles(files: Iterable<[string, PackageFile]>): PackageFiles {
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}

/** The directories (relative paths, `""` for the root) that hold a Kptfile: the package and its subpackages. */
export function packageDirectories(files: PackageFiles): string[] {
  const dirs: string[] = []
  for (const path of files.keys()) {
    if (path === 'Kptfile') dirs.push('')
    else if (path.endsWith('/Kptfile')) dirs.push(path.slice(0, -'/Kptfile'.length))
  }
  return dirs.sort()
}

/** The innermost package directory (of `dirs`) that contains `path`. */
export function owningPackage(path: string, dirs: readonly string[]): string {
  let best = ''
  for (const dir of dirs) if (dir !== '' && path.startsWith(`${dir}/`) && dir.length > best.length) best = dir
  return best
}

/** Files as git stores them (`mode` 100644, 100755, 120000) as package files; symbolic links are left out, as kpt leaves them out. */
export function gitPackageFiles(files: ReadonlyMap<string, { mode: string; content: Buffer }>): PackageFiles {
  const out: PackageFiles = new Map()
  for (const [path, file] of files) {
    if (file.mode === '120000') continue
    out.set(path, file.mode === '100755' ? { content: file.content, executable: true } : { content: file.content })
  }
  return out
}
