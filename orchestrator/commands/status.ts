/** `kpt-variants status FLEET --cache DIR`: plans the fleet, reads its downstream repositories, prints a line per variant. */
import { existsSync, statSync } from 'node:fs'
import { relative, resolve } from 'node:path'
import { UsageError } from '../cli.js'
import type { CliIO } from '../cli.js'
import { defaultCacheDir } from '../git/clones.js'
import { readLastFailures } from '../output/git/last-run.js'
import { startRun } from '../render.js'
import { fleetStatus, formatStatus } from '../status.js'
import { checkReportFile, writeStatusPage } from '../report/page/write.js'

/** The options commander parsed. */
export interface StatusOptions {
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
  if (!existsSync(fleetDir) || !statSync(fleetDir).isDirectory()) throw new UsageError(`fleet directory ${fleet} does not exist`)
  const cacheDir = resolve(io.cwd, options.cache ?? defaultCacheDir(io.env))
  if (options.html !== undefined) checkReportFile(resolve(io.cwd, options.html), '--html')
  const run = await startRun({
    fleetDir,
    outDir: fleetDir,
    dryRun: true,
    diff: false,
    onConflict: 'upstream',
    allowExec: false,
    cwd: io.cwd,
    env: io.env,
    git: { cacheDir, lockTimeoutMs: options.lockTimeout * 1000, publish: false },
    upstreamCache: { dir: cacheDir, lockTimeoutMs: options.lockTimeout * 1000 },
    ...(options.namespace ? { namespace: options.namespace } : {}),
  })
  try {
    const rows = await fleetStatus(run.plan, run.git!.shared.snapshots, readLastFailures(cacheDir, fleetDir))
    io.stdout(options.json ? `${JSON.stringify({ apiVersion: 'kpt-variants.dev/v1alpha1', kind: 'FleetStatus', variants: rows }, null, 2)}\n` : formatStatus(rows))
    if (options.html !== undefined) writeStatusPage(resolve(io.cwd, options.html), { variants: rows }, `kpt-variants status ${relative(io.cwd, fleetDir) || '.'}`, io)
    return rows.some((r) => r.lastFailure) ? 1 : 0
  } finally {
    run.close()
  }
}
