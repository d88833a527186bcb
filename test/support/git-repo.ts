/** Test git repositories built from inline file maps (changesets' `gitdir`), and whole trees read back with modes. */
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, sep } from 'node:path'
import { execa } from 'execa'
import { gitIdentity } from '../e2e/runner.js'

/** File contents by path; `{ link }` makes a symbolic link, `{ text, executable }` an executable file. */
export type TreeSpec = Record<string, string | { link: string } | { text: string; executable: true }>

/** Writes a tree under `dir`. */
export function writeTree(dir: string, tree: TreeSpec): void {
  for (const [path, content] of Object.entries(tree)) {
    const full = join(dir, path)
    mkdirSync(dirname(full), { recursive: true })
    rmSync(full, { force: true })
    if (typeof content === 'string') writeFileSync(full, content)
    else if ('link' in content) symlinkSync(content.link, full)
    else {
      writeFileSync(full, content.text)
      chmodSync(full, 0o755)
    }
  }
}

/** Runs git in `cwd` with a fixed identity. */
export async function git(cwd: string, ...args: string[]): Promise<string> {
  return (await execa('git', args, { cwd, env: gitIdentity })).stdout
}

/** Creates a git repository at `dir` (branch main) with one commit per entry of `revisions`, each tagged with its key. */
export async function createRepo(dir: string, revisions: [tag: string, tree: TreeSpec][]): Promise<void> {
  mkdirSync(dir, { recursive: true })
  await git(dir, 'init', '-q', '-b', 'main')
  for (const [tag, tree] of revisions) {
    writeTree(dir, tree)
    await git(dir, 'add', '-A')
    await git(dir, 'commit', '-q', '--allow-empty', '-m', tag)
    await git(dir, 'tag', tag)
  }
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
