import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { filesBelow } from '../e2e/runner.js'

/** Every file below `dir` (dot-entries skipped), by relative path, in sorted order. */
export function readTree(dir: string): Map<string, string> {
  const files = new Map<string, string>()
  const walk = (current: string) => {
    for (const name of readdirSync(current).sort()) {
      if (name.startsWith('.')) continue
      const full = join(current, name)
      if (statSync(full).isDirectory()) walk(full)
      else files.set(relative(dir, full), readFileSync(full, 'utf8'))
    }
  }
  walk(dir)
  return files
}

/** Every file below `dir` with its mode and bytes: two outputs compared byte for byte. */
export function treeWithModesAndBytes(dir: string): Record<string, string> {
  return Object.fromEntries(
    filesBelow(dir).map((path) => [
      path,
      `${(statSync(join(dir, path)).mode & 0o777).toString(8)} ${readFileSync(join(dir, path), 'base64')}`,
    ]),
  )
}
