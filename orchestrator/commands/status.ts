/**
 * `kpt-variants status FLEET [--out DIR]`: plans the fleet as a render does,
 * opens the same output (the downstream repositories, or with `--out` the
 * directory), reads it, prints a line per variant and dependency.
 */
import { existsSync, statSync } from 'node:fs'
import { relative, resolve } from 'node:path'
import { defaultCacheDir } from '../cache/layout.js'
import { directoryFailureKey, readLastFailures } from '../output/last-failures.js'
import { RenderMemo } from '../run/memo.js'
import { fleetIdOf } from '../run/settings.js'
import { setUpRun } from '../run/setup.js'
import { fleetStatus, formatStatus } from '../status/fleet-status.js'
import { readOutput } from '../status/read-output.js'
import { checkReportFile, writeStatusPage } from './page-file.js'
import { existingOutDir, readSettings } from './read-settings.js'
import { UsageError } from './cli-io.js'
import type { CliIO } from './cli-io.js'

/** The options commander parsed. */
export interface StatusOptions {
  /** `--out DIR`: the output directory a render wrote (default: the fleet's downstream repositories). */
  out?: string
  cache?: string
  json?: boolean
  /** `--html FILE`: write the fleet page. */
  html?: string
  lockTimeout: number
  namespace?: string
}

/** Prints the status; resolves to 0, or 1 when a variant failed last time or cannot be planned. */
export async function statusCommand(fleet: string, options: StatusOptions, io: CliIO): Promise<number> {
  const fleetDir = resolve(io.cwd, fleet)
  if (!existsSync(fleetDir) || !statSync(fleetDir).isDirectory())
    throw new UsageError(`fleet directory ${fleet} does not exist`)
  const outDir = existingOutDir(options.out, io)
  const cacheDir = resolve(io.cwd, options.cache ?? defaultCacheDir(io.env))
  if (options.html !== undefined) checkReportFile(resolve(io.cwd, options.html), '--html')
  // The settings of a render of the same output, which is opened as that render opens it and only read.
  const lockTimeoutMs = options.lockTimeout * 1000
  const settings = readSettings({ fleetDir, outDir, cacheDir, lockTimeoutMs, namespace: options.namespace, io })
  const run = await setUpRun(settings)
  try {
    const read = await readOutput(run, settings.memo ? RenderMemo.read(settings.memo) : {})
    const failures = readLastFailures(
      cacheDir,
      outDir === undefined ? fleetIdOf(settings) : directoryFailureKey(fleetIdOf(settings), outDir),
    )
    const status = fleetStatus(run.plan, read, failures)
    io.stdout(options.json ? `${JSON.stringify(status, null, 2)}\n` : formatStatus(status))
    if (options.html !== undefined) {
      const title = `kpt-variants status ${relative(io.cwd, fleetDir) || '.'}${outDir === undefined ? '' : ` --out ${relative(io.cwd, outDir) || '.'}`}`
      writeStatusPage(resolve(io.cwd, options.html), status, title, io)
    }
    return status.variants.some((r) => r.lastFailure) ? 1 : 0
  } finally {
    run.close()
  }
}
