/**
 * The `git fast-import` stream that writes a batch of package commits in one
 * process: each distinct file content is sent once as a blob, and each
 * commit replaces one package directory of its parent's tree (or removes it).
 * Pure: commits in, bytes out.
 */
import { createHash } from 'node:crypto'
import type { PackageFiles } from '../../package/files.js'

/** One commit that sets (or, without `files`, removes) a package directory on top of `parent`. */
export interface PackageCommit {
  /** The ref the commit is written to, e.g. `refs/kpt-variants/pending/0`. */
  ref: string
  /** The parent commit; absent for the first commit of an empty repository. */
  parent?: string
  message: string
  /** The package directory in the repository, e.g. `nginx` or `packages/nginx`. */
  directory: string
  /** The package's files (replacing whatever the directory held)... */
  files?: PackageFiles
  /** ...or a tree already in the repository; with neither, the directory is removed. */
  tree?: string
}

/** Who made the commits, and when. */
export interface Signature {
  name: string
  email: string
  /** Seconds since the epoch. */
  time: number
}

/**
 * The stream for `git fast-import --done`: blobs first (each content once),
 * then the commits in order (a commit to a ref the stream already wrote
 * continues from it), then `tags`: refs set to the commit at `commitIndex`.
 */
export function fastImportStream(commits: readonly PackageCommit[], committer: Signature, tags: readonly { ref: string; commitIndex: number }[] = []): Buffer {
  const chunks: Buffer[] = []
  const text = (s: string) => chunks.push(Buffer.from(s, 'utf8'))
  const data = (bytes: Buffer) => {
    text(`data ${bytes.length}\n`)
    chunks.push(bytes)
    text('\n')
  }
  const marks = new Map<string, number>()
  let nextMark = 1
  const markOf = (content: Buffer): number => {
    const key = createHash('sha1').update(content).digest('hex')
    let mark = marks.get(key)
    if (mark === undefined) {
      mark = nextMark++
      marks.set(key, mark)
      text(`blob\nmark :${mark}\n`)
      data(content)
    }
    return mark
  }
  const entries = commits.map((commit) => [...(commit.files ?? [])].map(([path, file]) => ({ path, mode: file.executable ? '100755' : '100644', mark: markOf(file.content) })))
  const who = `${committer.name} <${committer.email}> ${Math.floor(committer.time)} +0000`
  const commitMarks: number[] = []
  commits.forEach((commit, i) => {
    commitMarks.push(nextMark)
    text(`commit ${commit.ref}\nmark :${nextMark++}\nauthor ${who}\ncommitter ${who}\n`)
    data(Buffer.from(commit.message, 'utf8'))
    if (commit.parent) text(`from ${commit.parent}\n`)
    text(`D ${quotePath(commit.directory)}\n`)
    if (commit.tree) text(`M 040000 ${commit.tree} ${quotePath(commit.directory)}\n`)
    for (const entry of entries[i]!) text(`M ${entry.mode} :${entry.mark} ${quotePath(`${commit.directory}/${entry.path}`)}\n`)
    text('\n')
  })
  for (const tag of tags) text(`reset ${tag.ref}\nfrom :${commitMarks[tag.commitIndex]}\n\n`)
  text('done\n')
  return Buffer.concat(chunks)
}

/** A path as fast-import reads it: as is, or C-style quoted when it starts with `"` or holds a newline. */
export function quotePath(path: string): string {
  if (!/^"|\n/.test(path)) return path
  return `"${path.replace(/[\\"]/g, (c) => `\\${c}`).replace(/\n/g, '\\n')}"`
}
