/** `kpt-variants render FLEET|--cluster --out DIR | --git`: options to settings, the run, the reports, status (`--cluster`) and the exit code. */
import { existsSync, statSync } from 'node:fs'
import { relative, resolve } from 'node:path'
import { UsageError } from './cli-io.js'
import { readClusterFleet } from './cluster-fleet.js'
import type { CliIO } from './cli-io.js'
import type { ClusterFleet } from '../fleet/cluster.js'
import type { ConflictPolicy } from '../merge/update.js'
import { renderFleet } from '../run/render-fleet.js'
import type { RenderSettings } from '../run/settings.js'
import type { FleetPlan, Shard } from '../plan/plan.js'
import { defaultCacheDir, renderRecordFile } from '../cache/layout.js'
import { exitCodeOf } from '../report/report.js'
import type { RunReport } from '../report/report.js'
import { formatJson, formatSummary } from '../report/summary.js'
import type { GitSettings } from '../output/git/git-output.js'
import type { DeletionLimit } from '../plan/deletion-guard.js'
import { deletionGuardOf } from './deletion-options.js'
import { nowOf } from './now.js'
import { checkReportFile, writeReportPage } from './page-file.js'
import { stopPoint } from '../util/stop-point.js'

/** The options commander parsed. */
export interface RenderOptions {
  out?: string
  git?: boolean
  publish?: boolean
  cache?: string
  lockTimeout: number
  namespace?: string
  imageFunctions: 'run' | 'skip'
  dependencies: 'install' | 'check' | 'off'
  dryRun?: boolean
  diff?: boolean
  json?: boolean
  /** `--format`: the summary on stderr as text (default), or also as Markdown on stdout (a pull-request comment). */
  format: 'text' | 'markdown'
  /** `--report FILE`: write the fleet page (one self-contained HTML file). */
  report?: string
  onConflict: ConflictPolicy
  shard?: Shard
  allowExec?: boolean
  threads?: number
  /** `--force`: render every variant, ignoring the record of earlier renders. */
  force?: boolean
  progress: boolean
  /** `--cluster`: the fleet comes from the Kubernetes API server of the kubeconfig's context. */
  cluster?: boolean
  kubeconfig?: string
  context?: string
  /** `--now RFC3339`: the time the run acts at (default: the clock). */
  now?: string
  skipRollout?: boolean
  publishConflicts?: boolean
  publishDeletions?: boolean
  /** `--max-deletions N|P%`: the deletion guard's limit per PackageVariantSet. */
  maxDeletions?: DeletionLimit
  /** `--allow-deletions`: no deletion guard for this run. */
  allowDeletions?: boolean
}

/** Runs a render; resolves to the exit code (0 all rendered, 1 something failed). */
export async function renderCommand(fleet: string | undefined, options: RenderOptions, io: CliIO): Promise<number> {
  if (options.cluster && fleet !== undefined)
    throw new UsageError('give either a FLEET directory or --cluster, not both')
  if (!options.cluster && fleet === undefined) throw new UsageError('give a FLEET directory, or --cluster')
  if (!options.cluster && (options.kubeconfig !== undefined || options.context !== undefined))
    throw new UsageError('--kubeconfig and --context need --cluster')
  const fleetDir = fleet === undefined ? undefined : resolve(io.cwd, fleet)
  if (fleetDir && (!existsSync(fleetDir) || !statSync(fleetDir).isDirectory()))
    throw new UsageError(`fleet directory ${fleet} does not exist`)
  if (options.diff && !options.dryRun) throw new UsageError('--diff needs --dry-run')
  if (options.format === 'markdown' && options.json)
    throw new UsageError('--format markdown and --json both print on stdout: give one')
  if (options.report !== undefined) checkReportFile(resolve(io.cwd, options.report), '--report')
  if (Boolean(options.git) === Boolean(options.out)) throw new UsageError('give either --out DIR or --git')
  if (options.publish && !options.git) throw new UsageError('--publish needs --git')
  if (options.allowDeletions && options.maxDeletions)
    throw new UsageError('--allow-deletions lifts the deletion guard, --max-deletions sets its limit: give one')
  if ((options.publishConflicts || options.publishDeletions) && !options.publish)
    throw new UsageError(
      `${options.publishConflicts ? '--publish-conflicts' : '--publish-deletions'} needs --git --publish`,
    )
  const now = nowOf(options.now)
  const outDir = resolve(io.cwd, options.out ?? '.')
  if (options.out) {
    if (existsSync(outDir) && !statSync(outDir).isDirectory())
      throw new UsageError(`--out ${options.out} is not a directory`)
    if (fleetDir && (outDir === fleetDir || fleetDir.startsWith(`${outDir}/`)))
      throw new UsageError('--out must not contain the fleet directory')
  }
  const cacheDir = resolve(io.cwd, options.cache ?? defaultCacheDir(io.env))
  const git = options.git
    ? {
        cacheDir,
        lockTimeoutMs: options.lockTimeout * 1000,
        publish: Boolean(options.publish),
        publishConflicts: Boolean(options.publishConflicts),
        publishDeletions: Boolean(options.publishDeletions),
      }
    : undefined
  const cluster = options.cluster ? await readClusterFleet(options, cacheDir, io) : undefined
  try {
    return await render({
      fleet: cluster ? { dir: cluster.dir, id: cluster.id } : { dir: fleetDir!, id: fleetDir! },
      outDir,
      cacheDir,
      git,
      cluster,
      now,
      options,
      io,
    })
  } finally {
    cluster?.close()
  }
}

/** One render as the command made it ready: the fleet, where it goes, and the options and IO it runs with. */
interface RenderRun {
  fleet: { dir: string; id: string }
  outDir: string
  cacheDir: string
  git: GitSettings | undefined
  cluster: ClusterFleet | undefined
  now: Date
  options: RenderOptions
  io: CliIO
}

async function render(run: RenderRun): Promise<number> {
  const { cluster, now, options, io } = run
  const bar =
    options.progress && io.stderrIsTTY && io.stderrStream
      ? (await import('../report/progress.js')).progressBar(io.stderrStream)
      : undefined
  let report
  let plan: FleetPlan | undefined
  try {
    report = await renderFleet(
      renderSettings(run),
      bar,
      // Only --cluster writes status from the plan (and so needs one made: see quiet-run.ts).
      cluster ? (p) => (plan = p) : undefined,
    )
  } finally {
    bar?.stop()
  }
  await printReports(run, report)
  const statusFailed =
    cluster && plan && !options.dryRun ? await writeStatus(cluster, plan, report, now, options, io) : false
  return statusFailed ? 1 : exitCodeOf(report)
}

/** The run's settings from the command's options. */
function renderSettings(run: RenderRun): RenderSettings {
  const { fleet, outDir, cacheDir, git, cluster, options, io } = run
  return {
    fleetDir: fleet.dir,
    // A cluster's snapshot is a new directory each run: records go by the server, repository paths by the working directory.
    ...(cluster
      ? {
          fleetId: fleet.id,
          repositoryBase: io.cwd,
          clusterScoped: cluster.clusterScoped,
          servedKinds: cluster.servedKinds,
        }
      : {}),
    outDir,
    dryRun: Boolean(options.dryRun),
    // A dry run's diffs also go into the Markdown summary and the fleet page.
    diff: Boolean(options.diff || (options.dryRun && (options.format === 'markdown' || options.report !== undefined))),
    onConflict: options.onConflict,
    ...(options.shard ? { shard: options.shard } : {}),
    allowExec: Boolean(options.allowExec),
    imageFunctions: options.imageFunctions,
    dependencies: options.dependencies,
    ...(options.threads ? { threads: options.threads } : {}),
    ...(git ? { git } : {}),
    upstreamCache: { dir: cacheDir, lockTimeoutMs: options.lockTimeout * 1000 },
    cacheDir,
    // One record per output: the directory, or (with --git) the fleet's downstream repositories; --force only writes it.
    memo: renderRecordFile(cacheDir, git ? `git ${fleet.id}` : outDir),
    ...(options.force ? { force: true } : {}),
    ...(options.namespace ? { namespace: options.namespace } : {}),
    now: run.now,
    ...(options.skipRollout ? { skipRollout: true } : {}),
    ...deletionGuardOf(options),
    cwd: io.cwd,
    env: io.env,
  }
}

/** The diffs, the JSON or Markdown report on stdout, the summary on stderr, and the fleet page of --report. */
async function printReports(run: RenderRun, report: RunReport): Promise<void> {
  const { fleet, options, io } = run
  // With --json the diffs are in the report; else they go to stdout, the summary to stderr.
  if (options.diff && !options.json && options.format !== 'markdown')
    for (const v of report.variants) if (v.diff) io.stdout(v.diff)
  if (options.json) io.stdout(formatJson(report, { debug: io.debug === true }))
  if (options.format === 'markdown') io.stdout((await import('../report/markdown.js')).formatMarkdown(report))
  io.stderr(formatSummary(report, { debug: io.debug === true }))
  if (options.report !== undefined) {
    writeReportPage(
      resolve(io.cwd, options.report),
      report,
      `kpt-variants render ${fleet.id === fleet.dir ? relative(io.cwd, fleet.dir) || '.' : fleet.id}${options.dryRun ? ' --dry-run' : ''}`,
      io,
    )
  }
}

/** Writes the run's PackageVariant and PackageVariantSet status back; true when a write failed (each is reported). */
async function writeStatus(
  cluster: ClusterFleet,
  plan: FleetPlan,
  report: RunReport,
  now: Date,
  options: RenderOptions,
  io: CliIO,
): Promise<boolean> {
  const { statusUpdates } = await import('../status/cluster-status.js')
  const outcome = { variants: plan.variants, failures: plan.failures, report, sharded: options.shard !== undefined }
  const updates = statusUpdates(cluster.variants, cluster.sets, outcome, now.toISOString().replace(/\.\d+Z$/, 'Z'))
  await stopPoint('status-computed')
  const { written, failures } = await cluster.writeStatus(updates)
  for (const failure of failures) io.stderr(`kpt-variants: ${failure}\n`)
  io.stderr(
    `status: ${written} of ${updates.length} changed PackageVariant(s) and PackageVariantSet(s) written to ${cluster.server}\n`,
  )
  return failures.length > 0
}
