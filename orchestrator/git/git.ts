/**
 * The git plumbing the orchestrator needs, over the `git` program: run a
 * command, and read many objects in one `git cat-file --batch` process. All
 * reads are plumbing commands, so a repository is never changed by reading it.
 */
import { execa } from 'execa'

/** A git command failed; the message is git's own first line of stderr. */
export class GitError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly stderr: string,
  ) {
    super(`git ${args.join(' ')}: ${firstLine(stderr) || 'failed'}`)
    this.name = 'GitError'
  }
}

/** Options of one git command. */
export interface GitOptions {
  /** Working directory (or git directory) the command runs in. */
  cwd: string
  /** Bytes written to stdin. */
  input?: string | Buffer
  /** Extra environment, e.g. author identity. */
  env?: Record<string, string>
}

/** Runs `git args...` and returns stdout as a Buffer; throws GitError on a non-zero exit. */
export async function gitBytes(args: readonly string[], options: GitOptions): Promise<Buffer> {
  const run = await execa('git', args, {
    cwd: options.cwd,
    input: options.input,
    env: { ...quietGitEnv, ...options.env },
    encoding: 'buffer',
    reject: false,
    stripFinalNewline: false,
  })
  if (run.exitCode !== 0) throw new GitError(args, Buffer.from(run.stderr).toString('utf8'))
  return Buffer.from(run.stdout)
}

/** Runs `git args...` and returns stdout as text without its final newline. */
export async function git(args: readonly string[], options: GitOptions): Promise<string> {
  return (await gitBytes(args, options)).toString('utf8').replace(/\n$/, '')
}

/** One object read by `catFileBatch`: its type and content, or `missing`. */
export type GitObject = { oid: string; type: string; content: Buffer } | { oid: string; type: 'missing' }

/**
 * Reads objects with one `git cat-file --batch` process: each `<oid> <type>
 * <size>` header is followed by exactly `size` bytes and a newline, so binary
 * content is read exactly.
 */
export async function catFileBatch(repo: string, oids: readonly string[]): Promise<GitObject[]> {
  if (oids.length === 0) return []
  const out = await gitBytes(['cat-file', '--batch'], { cwd: repo, input: `${oids.join('\n')}\n` })
  const objects: GitObject[] = []
  let at = 0
  while (at < out.length) {
    const eol = out.indexOf(0x0a, at)
    const header = out.subarray(at, eol).toString('utf8').split(' ')
    at = eol + 1
    if (header[1] === 'missing') {
      objects.push({ oid: header[0]!, type: 'missing' })
      continue
    }
    const size = Number(header[2])
    objects.push({ oid: header[0]!, type: header[1]!, content: out.subarray(at, at + size) })
    at += size + 1
  }
  return objects
}

/** One entry of `git ls-tree -r -z`: mode, type, object id and path. */
export interface TreeEntry {
  mode: string
  type: string
  oid: string
  path: string
}

/** Lists the files below `dir` (all files when `dir` is empty) at a commit, recursively. */
export async function listTree(repo: string, commit: string, dir: string): Promise<TreeEntry[]> {
  const args = ['ls-tree', '-r', '-z', '--full-tree', commit]
  if (dir !== '') args.push('--', `${dir}/`)
  const out = (await gitBytes(args, { cwd: repo })).toString('utf8')
  return out
    .split('\0')
    .filter(Boolean)
    .map((line) => {
      const tab = line.indexOf('\t')
      const [mode, type, oid] = line.slice(0, tab).split(' ') as [string, string, string]
      return { mode, type, oid, path: line.slice(tab + 1) }
    })
}

/** Git never asks for credentials on a terminal and never uses the user's pager. */
const quietGitEnv: Record<string, string> = { GIT_TERMINAL_PROMPT: '0', GIT_PAGER: 'cat', LC_ALL: 'C' }

function firstLine(text: string): string {
  return text.trim().split('\n').find((line) => line.trim() !== '')?.replace(/^(fatal|error): /, '') ?? ''
}
