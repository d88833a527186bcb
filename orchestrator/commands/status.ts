/** `kpt-variants status FLEET --cache DIR`: plans the fleet, reads its downstream repositories, prints a line per variant. */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { defaultCacheDir } from '../git/clones.js'
import { openRepositories } from '../output/git/git-output.js'
import { readLastFailures } from '../output/last-failures.js'
import { withoutUnavailable } from '../plan/plan.js'
import { checkReportFile, writeStatusPage } from './page-file.js'
import { loadAndPlan } from '../run/setup.js'
import { fleetStatus, formatStatus } from '../status/fleet-status.js'
import { UsageError } from './cli-io.js'
import type { CliIO } from './cli-io.js'

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
  const lockTimeoutMs = options.lockTimeout * 1000
  const scratch = mkdtempSync(join(tmpdir(), 'kpt-variants-'))
  try {
    const { fleet: loaded, plan } = await loadAndPlan(
      { fleetDir, cwd: io.cwd, upstreamCache: { dir: cacheDir, lockTimeoutMs }, ...(options.namespace ? { namespace: options.namespace } : {}) },
      scratch,
    )
    const { shared, locks } = await openRepositories(loaded, plan, { cacheDir, lockTimeoutMs, publish: false })
    try {
      const rows = await fleetStatus(withoutUnavailable(plan, shared.unavailable), shared.snapshots, readLastFailures(cacheDir, fleetDir))
      io.stdout(
        options.json
          ? `${JSON.stringify({ apiVersion: 'kpt-variants.dev/v1alpha1', kind: 'FleetStatus', variants: rows }, null, 2)}
`
          : formatStatus(rows),
      )
      if (options.html !== undefined) writeStatusPage(resolve(io.cwd, options.html), { variants: rows }, `kpt-variants status ${relative(io.cwd, fleetDir) || '.'}`, io)
      return rows.some((r) => r.lastFailure) ? 1 : 0
    } finally {
      for (const lock of locks) lock.release()
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}
