/**
 * The git plumbing the orchestrator needs, over the `git` program: run a
 * command, and read many objects in one `git cat-file --batch` process. All
 * reads are plumbing commands, so a repository is never changed by reading it.
 */
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { runProgram } from './spawner.js'

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
  const run = await runProgram('git', args, {
    cwd: options.cwd,
    env: { ...quietGitEnv, ...options.env },
    ...(options.input !== undefined ? { input: options.input } : {}),
  })
  if (run.exitCode !== 0) throw new GitError(args, run.stderr.toString('utf8'))
  return run.stdout
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

/**
 * Resolves object names (`<commit>:<path>` and the like) to object ids with
 * one `git cat-file --batch-check` process, reading no content; a name that
 * resolves to nothing is undefined.
 */
export async function resolveObjects(repo: string, names: readonly string[]): Promise<(string | undefined)[]> {
  if (names.length === 0) return []
  const out = await git(['cat-file', '--batch-check=%(objectname)'], { cwd: repo, input: `${names.join('\n')}\n` })
  // A name that resolves to nothing is echoed back: `<name> missing` (or `ambiguous`).
  const lines = out.split('\n')
  if (lines.length !== names.length)
    throw new GitError(['cat-file', '--batch-check'], `${lines.length} answers to ${names.length} names`)
  return lines.map((line) => (/^[0-9a-f]{40,64}$/.test(line) ? line : undefined))
}

/** One entry of `git ls-tree -r -z`: mode, type, object id and path. */
export interface TreeEntry {
  mode: string
  type: string
  oid: string
  path: string
}

/** Lists the files below `dir` (all files when `dir` is empty) at a commit, recursively; with `trees`, its directories instead (`dir` itself included). */
export async function listTree(repo: string, commit: string, dir: string, trees = false): Promise<TreeEntry[]> {
  const args = ['ls-tree', '-r', ...(trees ? ['-d'] : []), '-z', '--full-tree', commit]
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

/** The refs matching `patterns` (e.g. `refs/heads/drafts/`), by full name, with the object each points at. */
export async function listRefs(repo: string, patterns: readonly string[]): Promise<Map<string, string>> {
  const out = await git(['for-each-ref', '--format=%(objectname) %(refname)', ...patterns], { cwd: repo })
  const refs = new Map<string, string>()
  for (const line of out.split('\n')) {
    const space = line.indexOf(' ')
    if (space > 0) refs.set(line.slice(space + 1), line.slice(0, space))
  }
  return refs
}

/**
 * `listRefs`, with each ref's committer date (seconds since the epoch): of
 * the commit it names, or for an annotated tag of the commit the tag names.
 */
export async function listRefsWithDates(
  repo: string,
  patterns: readonly string[],
): Promise<{ refs: Map<string, string>; dates: Map<string, number> }> {
  const out = await git(
    [
      'for-each-ref',
      '--format=%(objectname)%00%(refname)%00%(committerdate:unix)%00%(*objectname)%00%(*committerdate:unix)',
      ...patterns,
    ],
    { cwd: repo },
  )
  const refs = new Map<string, string>()
  const dates = new Map<string, number>()
  for (const line of out.split('\n')) {
    const [oid, ref, date, peeled, peeledDate] = line.split('\0')
    if (!oid || !ref) continue
    refs.set(ref, oid)
    const when = peeled ? peeledDate : date
    if (when) dates.set(ref, Number(when))
  }
  return { refs, dates }
}

/** Applies `update-ref --stdin` commands (`update <ref> <new> [<old>]`, `delete <ref> [<old>]`) in one transaction: all or none. */
export async function updateRefs(repo: string, commands: readonly string[]): Promise<void> {
  if (commands.length === 0) return
  await git(['update-ref', '--stdin'], { cwd: repo, input: `start\n${commands.join('\n')}\nprepare\ncommit\n` })
}

/** Deletes every ref below `prefixes` (the private refs a run left, e.g. after a crash). */
export async function removeRefs(repo: string, prefixes: readonly string[]): Promise<void> {
  await updateRefs(
    repo,
    [...(await listRefs(repo, prefixes)).keys()].map((ref) => `delete ${ref}`),
  )
}

/**
 * fast-import keeps what it writes as one pack: by default it unpacks fewer
 * than 100 objects into loose files with a second process (`unpack-objects`),
 * one per small import, which `publish --fleet` over many repositories paid
 * again and again (see bench/RESULTS.md, 'publish --fleet: 1,000 drafts
 * across 100 repositories in one run'). Packs stay few: git's
 * automatic maintenance, which every fetch runs, repacks them past
 * `gc.autoPackLimit`.
 */
const keepPack = ['-c', 'fastimport.unpackLimit=0']

/**
 * Writes the commits of a `git fast-import` stream into `repo` in one process;
 * its refs are updated only after every object is written, so an interrupted
 * import leaves no ref pointing at a partial commit.
 */
export async function fastImport(repo: string, stream: Buffer, env?: Record<string, string>): Promise<void> {
  await gitBytes([...keepPack, 'fast-import', '--quiet', '--force', '--done'], {
    cwd: repo,
    input: stream,
    ...(env ? { env } : {}),
  })
}

/** `fastImport`, then the object each mark of the stream names (`--export-marks`), by mark. */
export async function fastImportMarks(repo: string, stream: Buffer): Promise<Map<number, string>> {
  const file = join(repo, `kpt-variants-marks-${process.pid}`)
  try {
    await gitBytes([...keepPack, 'fast-import', '--quiet', '--force', '--done', `--export-marks=${file}`], {
      cwd: repo,
      input: stream,
    })
    const marks = new Map<number, string>()
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const match = /^:(\d+) ([0-9a-f]+)$/.exec(line)
      if (match) marks.set(Number(match[1]), match[2]!)
    }
    return marks
  } finally {
    rmSync(file, { force: true })
  }
}

/** One changed path of `diffTrees`: the status letter (A, M, D, T), the new mode and object (`000000`/zeros when deleted). */
export interface TreeChange {
  status: string
  mode: string
  oid: string
  path: string
}

/**
 * Diffs many pairs in one `git diff-tree --stdin` process: for each
 * `[commit, base]`, the files that differ from `base` to `commit` (a commit
 * without `base` is diffed against the empty tree). Keyed by `commit`.
 */
export async function diffTrees(
  repo: string,
  pairs: readonly (readonly [commit: string, base?: string])[],
): Promise<Map<string, TreeChange[]>> {
  const changes = new Map<string, TreeChange[]>()
  if (pairs.length === 0) return changes
  const input = pairs.map(([commit, base]) => (base ? `${commit} ${base}` : commit)).join('\n')
  const out = (
    await gitBytes(['diff-tree', '-r', '-z', '--root', '--no-renames', '--stdin'], { cwd: repo, input: `${input}\n` })
  ).toString('utf8')
  const fields = out.split('\0')
  let current: TreeChange[] | undefined
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!
    if (field === '') continue
    if (!field.startsWith(':')) {
      // A commit header line: the changes that follow are this commit's.
      current = []
      changes.set(field.trim(), current)
      continue
    }
    const [, mode, , oid, status] = field.slice(1).split(' ') as [string, string, string, string, string]
    current?.push({ status: status.charAt(0), mode, oid, path: fields[++i]! })
  }
  return changes
}

/** One ref a push sets (`oid`) or deletes (no `oid`), only if the remote still has `expect` there (`''`: no such ref). */
export interface RefUpdate {
  ref: string
  oid?: string
  expect: string
}

/** The refs through which pushAtomic pushes (the new values) and leases (the values expected), by the ref's name past `refs/`. */
const pushPrefix = 'refs/kpt-variants/push/'
const leasePrefix = 'refs/kpt-variants/lease/'
/** The remote pushAtomic pushes to: the remote's URL, with the leases as its remote-tracking refs. */
const leaseRemote = 'kpt-variants-lease'

/**
 * Pushes `updates` to `remote` atomically (all refs or none) with a lease on
 * each, so a ref someone else moved since it was fetched is never
 * overwritten. Resolves to the remote's reasons when it rejects the push.
 *
 * git matches each explicit refspec, and each `--force-with-lease=<ref>:<value>`,
 * against every ref of the push: a push of N new drafts costs N squared.
 * So the new values and the expected ones are written as refs of two
 * namespaces first: one glob refspec pushes the first, and a bare
 * `--force-with-lease` finds each ref's expected value in the second, as the
 * remote-tracking ref of a remote whose fetch refspec maps there (a ref
 * expected not to exist has none, which is what git then expects).
 *
 * A deletion is a refspec of its own (`:<ref>`), matched against every ref
 * of the remote too: the deletions times the remote's refs. Many deletions
 * therefore go by `--prune` instead (see pruningPush), which deletes them in
 * one pass.
 */
export async function pushAtomic(
  repo: string,
  remote: string,
  updates: readonly RefUpdate[],
  options: PushOptions = {},
): Promise<{ ok: true } | { ok: false; reason: string }> {
  if (updates.length === 0) return { ok: true }
  for (const u of updates)
    if (!u.ref.startsWith('refs/')) throw new Error(`pushAtomic: ${u.ref} is not a full ref name`)
  // The remote's push URL, unless the caller knows it (a git process less per push: publishing 100 repositories starts 100 fewer).
  const url = options.url ?? (await git(['remote', 'get-url', '--push', remote], { cwd: repo }))
  // A few refs are cheap to name one by one: no refs to make and remove first (a publish of ten packages pushes some 20).
  // Pushed through a remote whose fetch refspecs map each ref to itself, git sets them here too once the remote took them.
  if (updates.length <= directUpTo) {
    const leases = updates.map((u) => `--force-with-lease=${u.ref}:${u.expect}`)
    const mirror = options.mirror
      ? [
          '-c',
          `remote.${mirrorRemote}.url=${url}`,
          ...['heads', 'tags'].flatMap((ns) => ['-c', `remote.${mirrorRemote}.fetch=+refs/${ns}/*:refs/${ns}/*`]),
        ]
      : undefined
    return await runPush(repo, mirror ? mirrorRemote : url, {
      refspecs: updates.map((u) => `${u.oid ?? ''}:${u.ref}`),
      prune: false,
      leases,
      ...(mirror ? { config: mirror } : {}),
    })
  }
  await removeRefs(repo, [pushPrefix, leasePrefix])
  let pushed: { ok: true } | { ok: false; reason: string }
  try {
    const deletions = updates.filter((u) => !u.oid).length
    const push =
      (deletions >= pruneFrom && (await pruningPush(repo, url, updates))) || (await refspecPush(repo, updates))
    pushed = await runPush(repo, url, push)
  } finally {
    await removeRefs(repo, [pushPrefix, leasePrefix])
  }
  if (pushed.ok && options.mirror) {
    await updateRefs(
      repo,
      updates.map((u) => (u.oid ? `update ${u.ref} ${u.oid}` : `delete ${u.ref}`)),
    )
    // Packed: git reads each loose ref as a file at every listing and push (thousands of drafts, thousands of files).
    await git(['pack-refs', '--all'], { cwd: repo })
  }
  return pushed
}

/** How pushAtomic pushes. */
export interface PushOptions {
  /** The remote's push URL, when the caller knows it. */
  url?: string
  /** Set each pushed branch and tag in the pushing repository too, once the remote took it (a mirror-like clone). */
  mirror?: boolean
}

/** The remote a mirroring push of a few refs goes through (see pushAtomic). */
const mirrorRemote = 'kpt-variants-mirror'

/**
 * Deletions from this many on go by `--prune`. Each deletion refspec is
 * matched against every ref of the remote; pruning instead costs, per branch
 * and tag the remote keeps (a push ref and a lease ref made and removed
 * here), about as much as this many refspecs cost per ref (measured on
 * tmpfs), so from here on it is the cheaper whatever the remote's size.
 */
const pruneFrom = 256

/** The namespaces a pruning push mirrors whole: the branches and the tags. */
const prunedNamespaces = ['heads/', 'tags/']

/** Pushes of up to this many refs name each ref and its lease on the command line (see pushAtomic). */
const directUpTo = 64

/** What one `git push` is given past its options: its refspecs, whether it prunes, and its leases (default: each ref's in the lease namespace). */
interface PushArgs {
  refspecs: string[]
  prune: boolean
  leases?: string[]
  /** With `leases`: `-c` options of the remote pushed to (see pushAtomic). */
  config?: string[]
}

/** The ref of namespace `prefix` that stands for `ref` (`refs/heads/x` -> `<prefix>heads/x`). */
function inNamespace(prefix: string, ref: string): string {
  return `${prefix}${ref.slice('refs/'.length)}`
}

/** Refs of the push and lease namespaces for `updates`: each new value, and each expected one. */
function pushRefCommands(updates: readonly RefUpdate[]): string[] {
  return [
    ...updates.flatMap((u) => (u.oid ? [`create ${inNamespace(pushPrefix, u.ref)} ${u.oid}`] : [])),
    ...updates.flatMap((u) => (u.expect !== '' ? [`create ${inNamespace(leasePrefix, u.ref)} ${u.expect}`] : [])),
  ]
}

/** The new values by one glob refspec, each deletion by a refspec of its own. */
async function refspecPush(repo: string, updates: readonly RefUpdate[]): Promise<PushArgs> {
  await updateRefs(repo, pushRefCommands(updates))
  const refspecs = updates.some((u) => u.oid) ? [`${pushPrefix}*:refs/*`] : []
  for (const u of updates) if (!u.oid) refspecs.push(`:${u.ref}`)
  return { refspecs, prune: false }
}

/**
 * The push namespace holds every branch and tag the remote should have after
 * the push: the new values, and each other branch and tag at the value the
 * remote lists now (under a lease at that value, so one that moves before the
 * push refuses it rather than being put back). Pushed with `--prune`, the
 * remote's branches and tags missing from it are deleted: the deletions, and
 * one someone creates meanwhile, which, having no lease, refuses the push.
 * Undefined, and the deletions are refspecs, when the remote has a commit
 * this repository lacks (a ref of the push namespace cannot name it) or lacks
 * a ref to delete.
 */
async function pruningPush(repo: string, url: string, updates: readonly RefUpdate[]): Promise<PushArgs | undefined> {
  const named = new Set(updates.map((u) => u.ref))
  const listed = new Set<string>()
  const others: RefUpdate[] = []
  for (const line of (await git(['ls-remote', '--refs', '--heads', '--tags', url], { cwd: repo })).split('\n')) {
    const [oid, ref] = line.split('\t')
    if (!oid || !ref) continue
    listed.add(ref)
    if (!named.has(ref)) others.push({ ref, oid, expect: oid })
  }
  // A ref to delete that is gone already would just not be pruned: as a refspec, its lease refuses the push.
  if (updates.some((u) => !u.oid && !listed.has(u.ref))) return undefined
  const pruned = (ref: string) => prunedNamespaces.some((ns) => ref.startsWith(`refs/${ns}`))
  try {
    await updateRefs(repo, pushRefCommands([...updates, ...others]))
  } catch {
    return undefined
  }
  const refspecs = prunedNamespaces.map((ns) => `${pushPrefix}${ns}*:refs/${ns}*`)
  for (const u of updates)
    if (!pruned(u.ref)) refspecs.push(u.oid ? `${inNamespace(pushPrefix, u.ref)}:${u.ref}` : `:${u.ref}`)
  return { refspecs, prune: true }
}

/** Runs the push (to `url`, or with `leases` to a remote its `config` names); a refusal names the refs git refused, by their own names. */
async function runPush(
  repo: string,
  url: string,
  push: PushArgs,
): Promise<{ ok: true } | { ok: false; reason: string }> {
  const config = ['-c', `remote.${leaseRemote}.url=${url}`, '-c', `remote.${leaseRemote}.fetch=+refs/*:${leasePrefix}*`]
  // Named leases push to the URL itself: through the lease remote, git would make remote-tracking refs of the pushed ones.
  const args = push.leases
    ? [...(push.config ?? []), 'push', '--atomic', '--porcelain', '--no-verify', ...push.leases, url, ...push.refspecs]
    : [
        ...config,
        'push',
        '--atomic',
        '--porcelain',
        '--no-verify',
        '--force-with-lease',
        ...(push.prune ? ['--prune'] : []),
        leaseRemote,
        ...push.refspecs,
      ]
  const run = await runProgram('git', args, { cwd: repo, env: quietGitEnv })
  if (run.exitCode === 0) return { ok: true }
  // Porcelain lines of refused refs start with `!`: `!\t<src>:<dst>\t[rejected] (stale info)`; the source is ours.
  const refused = String(run.stdout)
    .split('\n')
    .filter((line) => line.startsWith('!'))
    .map((line) => {
      const [, refspec = '', ...summary] = line.split('\t')
      return [refspec.slice(refspec.lastIndexOf(':') + 1), ...summary].join(' ').trim()
    })
  const reason =
    refused.length > 0 ? refused.join('; ') : pushFailure(String(run.stderr)) || `git push exited with ${run.exitCode}`
  return { ok: false, reason }
}

/** Git never asks for credentials on a terminal and never uses the user's pager. */
const quietGitEnv: Record<string, string> = { GIT_TERMINAL_PROMPT: '0', GIT_PAGER: 'cat', LC_ALL: 'C' }

/**
 * Why a push failed that no ref's line explains: git's first `fatal:` or
 * `error:` line (a remote that went away says `'<path>' does not appear to be
 * a git repository`; a connection lost, after the shell's `Killed` and
 * send-pack's own line, `the remote end hung up unexpectedly`), else the
 * first line.
 */
function pushFailure(text: string): string {
  const lines = text.split('\n').filter((line) => line.trim() !== '')
  return (lines.find((line) => /^(fatal|error): /.test(line)) ?? lines[0] ?? '').replace(/^(fatal|error): /, '').trim()
}

function firstLine(text: string): string {
  return (
    text
      .trim()
      .split('\n')
      .find((line) => line.trim() !== '')
      ?.replace(/^(fatal|error): /, '') ?? ''
  )
}
