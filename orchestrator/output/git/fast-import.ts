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
  /** The parent commit (an id, or a ref the stream wrote before); absent for the first commit of an empty repository. */
  parent?: string
  /** A commit without a parent even where its ref already holds one: a package's tree alone (see write.ts). */
  orphan?: boolean
  message: string
  /** The package directory in the repository, e.g. `nginx` or `packages/nginx`. */
  directory: string
  /** The package's files (replacing whatever the directory held)... */
  files?: PackageFiles
  /** ...or a tree already in the repository; with neither, the directory is removed. */
  tree?: string
  /** More package directories the same commit sets (to files or a tree) or removes: packages published together. */
  more?: DirectoryChange[]
}

/** One package directory a commit sets to `files` or to `tree`, or with neither removes. */
export type DirectoryChange = Pick<PackageCommit, 'directory' | 'files' | 'tree'>

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
export function fastImportStream(
  commits: readonly PackageCommit[],
  committer: Signature,
  tags: readonly { ref: string; commitIndex: number }[] = [],
): Buffer {
  return importStream(commits, committer, tags).stream
}

/** The stream of fastImportStream, and the mark of each commit (as `--export-marks` names them). */
export function importStream(
  commits: readonly PackageCommit[],
  committer: Signature,
  tags: readonly { ref: string; commitIndex: number }[] = [],
): { stream: Buffer; commitMarks: number[] } {
  // The stream is text but for the blobs' contents: text is gathered in a string and turned into bytes once
  // per blob (a Buffer per line would be hundreds of thousands of small objects for a big fleet).
  const chunks: Buffer[] = []
  let text = ''
  // Rendered packages share the Buffers of the files they did not change (a clone of the upstream's),
  // so most contents are found again by identity; only new Buffers are hashed to find equal contents.
  const byBuffer = new Map<Buffer, number>()
  const byContent = new Map<string, number>()
  let nextMark = 1
  const markOf = (content: Buffer): number => {
    let mark = byBuffer.get(content)
    if (mark !== undefined) return mark
    const key = createHash('sha1').update(content).digest('base64')
    mark = byContent.get(key)
    if (mark === undefined) {
      mark = nextMark++
      byContent.set(key, mark)
      chunks.push(Buffer.from(`${text}blob\nmark :${mark}\ndata ${content.length}\n`, 'utf8'), content)
      text = '\n'
    }
    byBuffer.set(content, mark)
    return mark
  }
  const changesOf = (commit: PackageCommit): DirectoryChange[] => [commit, ...(commit.more ?? [])]
  const entries = commits.map((commit) =>
    changesOf(commit).map((change) =>
      [...(change.files ?? [])].map(([path, file]) => ({
        path,
        mode: file.executable ? '100755' : '100644',
        mark: markOf(file.content),
      })),
    ),
  )
  const who = `${committer.name} <${committer.email}> ${Math.floor(committer.time)} +0000`
  const commitMarks: number[] = []
  commits.forEach((commit, i) => {
    commitMarks.push(nextMark)
    if (commit.orphan) text += `reset ${commit.ref}\n\n`
    text += `commit ${commit.ref}\nmark :${nextMark++}\nauthor ${who}\ncommitter ${who}\ndata ${Buffer.byteLength(commit.message)}\n${commit.message}\n`
    if (commit.parent) text += `from ${commit.parent}\n`
    changesOf(commit).forEach((change, k) => {
      text += `D ${quotePath(change.directory)}\n`
      if (change.tree) text += `M 040000 ${change.tree} ${quotePath(change.directory)}\n`
      for (const entry of entries[i]![k]!)
        text += `M ${entry.mode} :${entry.mark} ${quotePath(`${change.directory}/${entry.path}`)}\n`
    })
    text += '\n'
  })
  for (const tag of tags) text += `reset ${tag.ref}\nfrom :${commitMarks[tag.commitIndex]}\n\n`
  chunks.push(Buffer.from(`${text}done\n`, 'utf8'))
  return { stream: Buffer.concat(chunks), commitMarks }
}

/** A path as fast-import reads it: as is, or C-style quoted when it starts with `"` or holds a newline. */
export function quotePath(path: string): string {
  if (!/^"|\n/.test(path)) return path
  return `"${path.replace(/[\\"]/g, (c) => `\\${c}`).replace(/\n/g, '\\n')}"`
}
