/** Unified diffs of a package change, for `--dry-run --diff` (paths relative to the output directory, as `git diff` shows them). */
import { createTwoFilesPatch } from 'diff'
import { sameFile } from '../package/files.js'
import type { PackageFile, PackageFiles } from '../package/files.js'

/** The diff from `before` to `after` (either may be absent: a created or deleted package), file by file in path order. */
export function packageDiff(path: string, before: PackageFiles | undefined, after: PackageFiles | undefined): string {
  const paths = [...new Set([...(before?.keys() ?? []), ...(after?.keys() ?? [])])].sort()
  let out = ''
  for (const file of paths) {
    const a = before?.get(file)
    const b = after?.get(file)
    if (a && b && sameFile(a, b)) continue
    out += fileDiff(`${path}/${file}`, a, b)
  }
  return out
}

function fileDiff(path: string, a: PackageFile | undefined, b: PackageFile | undefined): string {
  const from = a ? `a/${path}` : '/dev/null'
  const to = b ? `b/${path}` : '/dev/null'
  if ((a && isBinary(a)) || (b && isBinary(b))) return `--- ${from}\n+++ ${to}\nBinary files differ\n`
  const mode =
    a && b && Boolean(a.executable) !== Boolean(b.executable)
      ? `old mode ${a.executable ? '100755' : '100644'}\nnew mode ${b.executable ? '100755' : '100644'}\n`
      : ''
  const patch = createTwoFilesPatch(
    from,
    to,
    a ? a.content.toString('utf8') : '',
    b ? b.content.toString('utf8') : '',
    '',
    '',
    { context: 3 },
  )
  // Drop the library's `====` line and the tab it leaves after empty headers.
  const body = patch
    .split('\n')
    .filter((line) => !/^=+$/.test(line))
    .map((line) => line.replace(/^(---|\+\+\+) (.*)\t$/, '$1 $2'))
    .join('\n')
  return mode + body
}

function isBinary(file: PackageFile): boolean {
  return file.content.includes(0)
}
