/**
 * What the fault tests (test/faults/) check after every fault: each
 * downstream repository holds complete commits only, at most one draft
 * branch per package, and exactly the refs a run either made whole or did
 * not make at all; and the runs' messages name what failed, without a
 * stack trace.
 */
import { chmodSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { git } from './git-repo.js'

/** The files of a rendered nginx package of test/support/fleet.ts, below its directory. */
export const nginxFiles = ['Kptfile', 'README.md', 'deployment.yaml', 'package-context.yaml', 'region-endpoints.yaml']

/** Every branch and tag of a repository, with the commit it names. */
export async function refsOf(remote: string): Promise<Record<string, string>> {
  const out = await git(remote, 'for-each-ref', '--format=%(refname) %(objectname)')
  return Object.fromEntries(
    out
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(' ') as [string, string]),
  )
}

/** The draft branches of a repository, short names (`drafts/nginx/packagevariant-1`), sorted. */
export async function draftsOf(remote: string): Promise<string[]> {
  return Object.keys(await refsOf(remote))
    .filter((ref) => ref.startsWith('refs/heads/drafts/'))
    .map((ref) => ref.slice('refs/heads/'.length))
    .sort()
}

/**
 * Checks a downstream repository after a fault: its objects are sound (`git
 * fsck`), every branch and tag that holds package `pkg` holds all of its
 * `files`, and the package has at most one draft branch. Resolves to the
 * repository's refs.
 */
export async function expectComplete(
  remote: string,
  pkg = 'nginx',
  files: readonly string[] = nginxFiles,
): Promise<Record<string, string>> {
  await git(remote, 'fsck', '--no-dangling', '--no-progress')
  const refs = await refsOf(remote)
  for (const ref of Object.keys(refs)) {
    const listed = (await git(remote, 'ls-tree', '-r', '--name-only', ref, '--', pkg)).split('\n').filter(Boolean)
    if (listed.length === 0) continue
    const missing = files.map((f) => `${pkg}/${f}`).filter((f) => !listed.includes(f))
    expect({ remote, ref, missing }).toEqual({ remote, ref, missing: [] })
  }
  const drafts = Object.keys(refs).filter((ref) => ref.startsWith(`refs/heads/drafts/${pkg}/`))
  expect({ remote, drafts: drafts.length <= 1 ? 'at most one' : drafts }).toEqual({ remote, drafts: 'at most one' })
  return refs
}

/** A `pre-receive` hook in a bare repository that refuses every push with `message` (`removeHook` takes it away). */
export function refusePushes(remote: string, message: string): void {
  const hook = join(remote, 'hooks', 'pre-receive')
  writeFileSync(hook, `#!/bin/sh\necho ${JSON.stringify(message)} >&2\nexit 1\n`)
  chmodSync(hook, 0o755)
}

export function removeHook(remote: string, name = 'pre-receive'): void {
  rmSync(join(remote, 'hooks', name), { force: true })
}

/** Lines of a stack trace (`    at fn (file:line:col)`) in a process's output: an environmental fault must print none. */
export function stackLines(output: string): string[] {
  return output.split('\n').filter((line) => /^\s+at .+[:(]/.test(line))
}
