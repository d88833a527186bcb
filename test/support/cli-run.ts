/**
 * `bin/kpt-variants` run as a user runs it, for every e2e test: its exit code and output, or a
 * failure that shows them. One way to start it, so that each test says only what differs.
 */
import { join } from 'node:path'
import { execa } from 'execa'
import type { ResultPromise } from 'execa'
import { gitIdentity, repoRoot } from '../e2e/runner.js'

export const bin = join(repoRoot, 'bin', 'kpt-variants')

export interface Run {
  exitCode: number
  stdout: string
  stderr: string
}

export interface CliOptions {
  /** Variables over the base environment. */
  env?: Readonly<Record<string, string | undefined>>
  /** The base environment, instead of this process's with the tests' git identity. */
  baseEnv?: Readonly<Record<string, string | undefined>>
  /** Text on stdin; without it stdin is closed. */
  input?: string
  /** The exit code the run must end with: another throws, showing both outputs. */
  exitCode?: number
  /** Milliseconds before the run is killed. */
  timeout?: number
  /** Keeps the output's last newline (a diff's belongs to it). */
  keepFinalNewline?: boolean
  /** Flags for the program's Node. */
  nodeFlags?: readonly string[]
}

/** The program and arguments that run `kpt-variants ARGS` under this Node. */
export function cliCommand(args: readonly string[], nodeFlags: readonly string[] = []): [string, string[]] {
  return [process.execPath, [...nodeFlags, bin, ...args]]
}

/** Starts `kpt-variants ARGS` in `cwd` and returns the running process (it resolves, never rejects). */
export function startCli(cwd: string, args: readonly string[], options: CliOptions = {}): ResultPromise {
  const [file, argv] = cliCommand(args, options.nodeFlags)
  return execa(file, argv, {
    cwd,
    env: { ...(options.baseEnv ?? { ...process.env, ...gitIdentity }), ...options.env },
    extendEnv: false,
    reject: false,
    ...(options.input === undefined ? { stdin: 'ignore' as const } : { input: options.input }),
    ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
    stripFinalNewline: !options.keepFinalNewline,
  })
}

/** Runs `kpt-variants ARGS` in `cwd`: with a git identity and no stdin unless told otherwise. */
export async function runCli(cwd: string, args: readonly string[], options: CliOptions = {}): Promise<Run> {
  const result = await startCli(cwd, args, options)
  const run = { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) }
  if (options.exitCode !== undefined && run.exitCode !== options.exitCode)
    throw new Error(
      `kpt-variants ${args.join(' ')} exited ${run.exitCode}, not ${options.exitCode}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`,
    )
  return run
}

/** runCli, throwing with both outputs unless it exits 0. */
export function runCliOk(cwd: string, args: readonly string[], options: CliOptions = {}): Promise<Run> {
  return runCli(cwd, args, { ...options, exitCode: 0 })
}
