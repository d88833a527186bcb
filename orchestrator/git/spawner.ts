/**
 * Starting git processes. Node's spawn blocks the calling thread until the
 * child has started, longer the bigger the process that forks: a run that
 * starts hundreds of git processes (publishing 100 repositories starts 500)
 * spent half its time there, most of it waiting on a busy machine. So once a
 * run has started a few, the rest are started by a small helper process
 * (spawner-process.ts), several at once, while the run goes on. Where the
 * helper's compiled module is missing (the unit tests run the sources), or
 * it cannot start, git is started directly.
 */
import { fastPath } from '../../functions/krm/fast-paths.js'
import { execa, execaNode } from 'execa'
import type { ChildProcess } from 'node:child_process'
import { compiledThread } from '../util/threads.js'

/** A program to run: what the helper is sent. */
export interface SpawnRequest {
  id: number
  file: string
  args: readonly string[]
  cwd: string
  /** Added to the environment. */
  env: Record<string, string>
  input?: string | Buffer
}

/** A program's outcome: what the helper answers. */
export interface SpawnAnswer {
  id: number
  exitCode: number
  stdout: Buffer
  stderr: Buffer
  /** It could not be started. */
  error?: string
}

/** Programs started directly before the helper is worth its start (a Node process): a small run never starts it. */
const directFirst = 24

const helperModule = new URL('./spawner-process.js', import.meta.url)

let started = 0
let helper: Helper | undefined | null

/** Runs `file args...`; resolves to its exit code and output (never rejects for a non-zero exit). */
export async function runProgram(
  file: string,
  args: readonly string[],
  options: { cwd: string; env: Record<string, string>; input?: string | Buffer },
): Promise<{ exitCode: number; stdout: Buffer; stderr: Buffer }> {
  if (++started > directFirst && helper === undefined) helper = fastPath('spawner') ? Helper.start() : null
  if (helper) return helper.run(file, args, options)
  const run = await execa(file, args, {
    cwd: options.cwd,
    input: options.input,
    env: options.env,
    encoding: 'buffer',
    reject: false,
    stripFinalNewline: false,
  })
  if (run.failed && run.exitCode === undefined) throw new Error(`${file}: ${run.shortMessage}`)
  return { exitCode: run.exitCode ?? -1, stdout: Buffer.from(run.stdout), stderr: Buffer.from(run.stderr) }
}

/** The helper process, and the requests it has not answered yet. */
class Helper {
  readonly #pending = new Map<number, { resolve: (answer: SpawnAnswer) => void; reject: (error: Error) => void }>()
  #next = 0

  private constructor(private readonly child: ChildProcess) {
    child.on('message', (answer: SpawnAnswer) => {
      const waiting = this.#pending.get(answer.id)
      this.#pending.delete(answer.id)
      this.#idle()
      if (answer.error !== undefined) waiting?.reject(new Error(answer.error))
      else waiting?.resolve({ ...answer, stdout: Buffer.from(answer.stdout), stderr: Buffer.from(answer.stderr) })
    })
    child.on('exit', () => {
      for (const waiting of this.#pending.values())
        waiting.reject(new Error('the process that starts git processes ended'))
      this.#pending.clear()
      if (helper === this) helper = null
    })
    this.#idle()
  }

  /** Starts the helper; null when its module is not here. */
  static start(): Helper | null {
    if (!compiledThread(helperModule)) return null
    try {
      // execa's cleanup stops it (and so its children) when the run ends.
      // None of this process's Node options (`-e SCRIPT` would run the script again).
      const child = execaNode(helperModule, [], {
        nodeOptions: [],
        serialization: 'advanced',
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
        reject: false,
        buffer: false,
      })
      child.catch(() => {})
      return new Helper(child)
    } catch {
      return null
    }
  }

  run(
    file: string,
    args: readonly string[],
    options: { cwd: string; env: Record<string, string>; input?: string | Buffer },
  ): Promise<SpawnAnswer> {
    const id = this.#next++
    const request: SpawnRequest = {
      id,
      file,
      args,
      cwd: options.cwd,
      env: options.env,
      ...(options.input !== undefined ? { input: options.input } : {}),
    }
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject })
      this.#busy()
      this.child.send(request)
    })
  }

  // The helper keeps the run alive only while it has work: an idle one must not stop the run from ending.
  #busy(): void {
    this.child.ref()
    this.child.channel?.ref()
  }

  #idle(): void {
    if (this.#pending.size > 0) return
    this.child.unref()
    this.child.channel?.unref()
  }
}
