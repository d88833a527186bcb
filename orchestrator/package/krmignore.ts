/** `.krmignore`: files a package excludes from its resources (gitignore syntax, one file per package). */
import ignore from 'ignore'
import { fileText, owningPackage } from './files.js'
import type { PackageFiles } from './files.js'

/**
 * A predicate: true for a path (relative to the root package) that the
 * `.krmignore` of its own (innermost) package excludes; kpt reads each
 * package separately, so a parent's rules do not reach into a subpackage.
 */
export function krmIgnoreFilter(files: PackageFiles, packages: readonly string[]): (path: string) => boolean {
  const rules = new Map<string, ReturnType<typeof ignore>>()
  for (const dir of packages) {
    const file = files.get(dir === '' ? '.krmignore' : `${dir}/.krmignore`)
    if (file) rules.set(dir, ignore().add(fileText(file)))
  }
  if (rules.size === 0) return () => false
  return (path) => {
    const dir = owningPackage(path, packages)
    const rule = rules.get(dir)
    return rule !== undefined && rule.ignores(dir === '' ? path : path.slice(dir.length + 1))
  }
}
