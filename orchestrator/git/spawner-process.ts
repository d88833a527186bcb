/**
 * The process that starts a run's git processes for it (see spawner.ts): a
 * small Node process, so each fork copies little, and one whose waiting for
 * a child to start never holds up the run's own thread. Each request is a
 * program, its arguments, working directory, extra environment and input;
 * each answer its exit code and output.
 *
 * When the run ends it sends SIGTERM (execa's cleanup): the running children
 * are stopped too, as the run would stop its own. When the run is killed
 * outright (the channel closes), the running children finish, as they would
 * have without this process, and it exits after them.
 */
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import type { SpawnAnswer, SpawnRequest } from './spawner.js'

const running = new Set<ChildProcess>()
let disconnected = false

process.on('message', (message: SpawnRequest) => {
  const out: Buffer[] = []
  const err: Buffer[] = []
  let child: ChildProcess
  try {
    child = spawn(message.file, message.args, {
      cwd: message.cwd,
      env: { ...process.env, ...message.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
  } catch (error) {
    answer({
      id: message.id,
      exitCode: -1,
      stdout: Buffer.alloc(0),
      stderr: Buffer.alloc(0),
      error: (error as Error).message,
    })
    return
  }
  running.add(child)
  child.stdout!.on('data', (chunk: Buffer) => out.push(chunk))
  child.stderr!.on('data', (chunk: Buffer) => err.push(chunk))
  // A program that exits before reading all its input closes the pipe: its exit code says what went wrong.
  child.stdin!.on('error', () => {})
  child.on('error', (error) => {
    running.delete(child)
    answer({ id: message.id, exitCode: -1, stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), error: error.message })
  })
  child.on('close', (code, signal) => {
    running.delete(child)
    answer({
      id: message.id,
      exitCode: code ?? (signal ? 128 : -1),
      stdout: Buffer.concat(out),
      stderr: Buffer.concat(err),
    })
  })
  child.stdin!.end(message.input ?? '')
})

function answer(message: SpawnAnswer): void {
  if (!disconnected) process.send!(message)
  else if (running.size === 0) process.exit(0)
}

process.on('disconnect', () => {
  disconnected = true
  if (running.size === 0) process.exit(0)
})

process.on('SIGTERM', () => {
  for (const child of running) child.kill('SIGTERM')
  process.exit(143)
})
