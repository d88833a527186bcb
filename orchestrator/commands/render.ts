/** `kpt-variants render FLEET --out DIR | --git`: options to settings, the run, the reports and the exit code. */
import { existsSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import { UsageError } from '../cli.js'
import type { CliIO } from '../cli.js'
import type { ConflictPolicy } from '../merge/update.js'
import { renderFleet } from '../render.js'
import type { Shard } from '../plan.js'
import { defaultCacheDir } from '../output/git/clone.js'
import { memoFileFor } from '../render-memo.js'
import { exitCodeOf } from '../report/report.js'
import { formatJson, formatSummary } from '../report/summary.js'

/** The options commander parsed. */
export interface RenderOptions {
  out?: string
  git?: boolean
  publish?: boolean
  cache?: string
  lockTimeout: number
  namespace?: string
  imageFunctions: 'run' | 'skip'
  dryRun?: boolean
  diff?: boolean
  json?: boolean
  onConflict: ConflictPolicy
  shard?: Shard
  allowExec?: boolean
  threads?: number
  /** `--force`: render every variant, ignoring the record of earlier renders. */
  force?: boolean
  progress: boolean
}

/** Runs a render; resolves to the exit code (0 all rendered, 1 something failed). */
export async function renderCommand(fleet: string, options: RenderOptions, io: CliIO): Promise<number> {
  const fleetDir = resolve(io.cwd, fleet)
  if (!existsSync(fleetDir) || !statSync(fleetDir).isDirectory()) throw new UsageError(`fleet directory ${fleet} does not exist`)
  if (options.diff && !options.dryRun) throw new UsageError('--diff needs --dry-run')
  if (Boolean(options.git) === Boolean(options.out)) throw new UsageError('give either --out DIR or --git')
  if (options.publish && !options.git) throw new UsageError('--publish needs --git')
  const outDir = resolve(io.cwd, options.out ?? '.')
  if (options.out) {
    if (existsSync(outDir) && !statSync(outDir).isDirectory()) throw new UsageError(`--out ${options.out} is not a directory`)
    if (outDir === fleetDir || fleetDir.startsWith(`${outDir}/`)) throw new UsageError('--out must not contain the fleet directory')
  }
  const cacheDir = resolve(io.cwd, options.cache ?? defaultCacheDir(io.env))
  const git = options.git ? { cacheDir, lockTimeoutMs: options.lockTimeout * 1000, publish: Boolean(options.publish) } : undefined
  // One record per output: the directory, or (with --git) the fleet's downstream repositories.
  const memo = options.force ? undefined : memoFileFor(cacheDir, git ? `git ${fleetDir}` : outDir)

  const bar = options.progress && io.stderrIsTTY && io.stderrStream ? (await import('../report/progress.js')).progressBar(io.stderrStream) : undefined
  let report
  try {
    report = await renderFleet(
      {
        fleetDir,
        outDir,
        dryRun: Boolean(options.dryRun),
        diff: Boolean(options.diff),
        onConflict: options.onConflict,
        ...(options.shard ? { shard: options.shard } : {}),
        allowExec: Boolean(options.allowExec),
        imageFunctions: options.imageFunctions,
        ...(options.threads ? { threads: options.threads } : {}),
        ...(git ? { git } : {}),
        ...(memo ? { memo } : {}),
        ...(options.namespace ? { namespace: options.namespace } : {}),
        cwd: io.cwd,
        env: io.env,
      },
      bar,
    )
  } finally {
    bar?.stop()
  }
  // With --json the diffs are in the report; else they go to stdout, the summary to stderr.
  if (options.diff && !options.json) for (const v of report.variants) if (v.diff) io.stdout(v.diff)
  if (options.json) io.stdout(formatJson(report))
  io.stderr(formatSummary(report))
  return exitCodeOf(report)
}
