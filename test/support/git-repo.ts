/** Test git repositories built from inline file maps (changesets' `gitdir`), and whole trees read back with modes. */
import { lstatSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { execa } from 'execa'
import { createRepo as createRepoAs, writeTree } from '../../scripts/fleet-builder.js'
import type { Revision, TreeSpec } from '../../scripts/fleet-builder.js'
import { gitIdentity } from '../e2e/runner.js'

export { writeTree }
export type { TreeSpec }

/** Runs git in `cwd` with a fixed identity. */
export async function git(cwd: string, ...args: string[]): Promise<string> {
  return (await execa('git', args, { cwd, env: gitIdentity })).stdout
}

/** Creates a git repository at `dir` (branch main) with one commit per entry of `revisions`, each tagged with its key. */
export function createRepo(dir: string, revisions: Revision[]): Promise<void> {
  return createRepoAs(dir, revisions, gitIdentity)
}

/** Every file below `dir` (`.git` skipped, dot-files kept): text, and `+x` appended for executables; symbolic links as `-> target`. */
export function readTreeWithModes(dir: string): Map<string, string> {
  const out = new Map<string, string>()
  const walk = (current: string) => {
    for (const name of readdirSync(current).sort()) {
      if (name === '.git') continue
      const full = join(current, name)
      const stat = lstatSync(full)
      const rel = relative(dir, full).split(sep).join('/')
      if (stat.isSymbolicLink()) out.set(rel, '-> symlink')
      else if (stat.isDirectory()) walk(full)
      else out.set(rel, readFileSync(full, 'utf8') + ((stat.mode & 0o111) !== 0 ? '\n+x' : ''))
    }
  }
  walk(dir)
  return out
}
