/** `bin/kpt-variants` run as a user runs it, in a test's directory: its exit code and output, or a failure that shows them. */
import { join } from 'node:path'
import { execa } from 'execa'
import { gitIdentity, repoRoot } from '../e2e/runner.js'

export const bin = join(repoRoot, 'bin', 'kpt-variants')

export interface Run {
  exitCode: number
  stdout: string
  stderr: string
}

/** Runs `kpt-variants ARGS` in `cwd` with a git identity and no stdin. */
export async function runCli(cwd: string, args: readonly string[]): Promise<Run> {
  const run = await execa('node', [bin, ...args], {
    cwd,
    env: { ...process.env, ...gitIdentity },
    reject: false,
    stdin: 'ignore',
  })
  return { exitCode: run.exitCode ?? -1, stdout: String(run.stdout), stderr: String(run.stderr) }
}

/** runCli, throwing with both outputs unless it exits 0. */
export async function runCliOk(cwd: string, args: readonly string[]): Promise<Run> {
  const run = await runCli(cwd, args)
  if (run.exitCode !== 0)
    throw new Error(
      `kpt-variants ${args.join(' ')} exited ${run.exitCode}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`,
    )
  return run
}
