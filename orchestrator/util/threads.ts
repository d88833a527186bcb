/**
 * Starting the threads of a run (render, staging, read-ahead, stat). A
 * thread runs a compiled module found beside the code that starts it (in
 * dist/, or in the bundle's folder); the TypeScript sources, as the unit
 * tests run them, have none, and a caller that can do the work itself asks
 * `compiledThread` first.
 */
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'

/** Whether each module exists, looked up once. */
const compiled = new Map<string, boolean>()

/** True when the thread module `module` exists here. */
export function compiledThread(module: URL): boolean {
  let found = compiled.get(module.href)
  if (found === undefined) compiled.set(module.href, (found = existsSync(fileURLToPath(module))))
  return found
}

/** Starts a thread running `module` with `workerData`. */
export function startThread(module: URL, workerData?: unknown): Worker {
  return new Worker(module, workerData === undefined ? {} : { workerData })
}
