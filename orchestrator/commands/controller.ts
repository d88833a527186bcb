/**
 * `kpt-variants controller`: options to settings; then, as long as the
 * process runs, a replica that waits for the Lease, and once it leads the
 * controller (controller/controller.ts) until it stops or loses the Lease.
 */
import type { DeletionLimit } from '../plan/deletion-guard.js'
import { deletionGuardOf } from './deletion-options.js'
import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { hostname } from 'node:os'
import { resolve } from 'node:path'
import type { Server } from 'node:http'
import { UsageError } from './cli-io.js'
import type { CliIO } from './cli-io.js'
import { ClusterClient, ClusterError } from '../fleet/cluster-client.js'
import { defaultCacheDir, renderRecordFile } from '../cache/layout.js'
import type { ConflictPolicy } from '../merge/update.js'
import { Controller } from '../controller/controller.js'
import type { ControllerSettings } from '../controller/controller.js'
import type { Cycle } from '../controller/cycle.js'
import { checkTiming, LeaderElector } from '../controller/lease.js'
import { leaseApi } from '../controller/lease-api.js'
import { podLabel } from '../controller/leader-label.js'
import type { PodLabel } from '../controller/leader-label.js'
import { listen } from '../controller/webhook.js'

/** The options commander parsed (durations in milliseconds). */
export interface ControllerOptions {
  kubeconfig?: string
  context?: string
  namespace?: string
  out?: string
  git?: boolean
  cache?: string
  lockTimeout: number
  onConflict: ConflictPolicy
  allowExec?: boolean
  imageFunctions: 'run' | 'skip'
  dependencies: 'install' | 'check' | 'off'
  threads?: number
  maxDeletions?: DeletionLimit
  allowDeletions?: boolean
  resync: number
  poll: number
  listen?: string
  webhookSecretFile?: string
  leaderElection: boolean
  lease: string
  leaseDuration: number
  renewDeadline: number
  retryPeriod: number
  identity?: string
  labelPod?: string
  json?: boolean
}

/** Runs until SIGTERM or SIGINT (0), or until this replica loses its lease (1). */
export async function controllerCommand(options: ControllerOptions, io: CliIO): Promise<number> {
  const { outDir, timing, lease, secret } = checkOptions(options, io)
  const cacheDir = resolve(io.cwd, options.cache ?? defaultCacheDir(io.env))
  const log = (line: string) => io.stderr(`kpt-variants controller: ${line}\n`)
  const client = await connect(options, io)
  const settings = controllerSettings(options, io, { client, outDir, cacheDir, log })
  const identity = options.identity ?? `${hostname()}-${randomBytes(3).toString('hex')}`
  const elector = options.leaderElection
    ? new LeaderElector(leaseApi(client, lease[1]!, lease[2]!), identity, timing, undefined, log)
    : undefined
  const label = labelOf(client, options.labelPod)
  const replica: Replica = { stopping: false }
  // A leader finishes the cycle under way, then gives the lease up (finally, below); a standby stops waiting for it.
  const stop = () => {
    if (replica.stopping) return
    replica.stopping = true
    log('stopping')
    if (replica.controller) replica.controller.stop()
    else void elector?.stop()
  }
  const resync = () => replica.controller?.resync()
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
  process.on('SIGHUP', resync)
  try {
    replica.server = await startWebhook({ address: options.listen, secret, replica, log })
    log(
      `${identity}: watching ${options.namespace ? `namespace ${options.namespace} of ` : ''}${client.server}${elector ? `, leading through lease ${options.lease}` : ''}`,
    )
    await markPod(label, false, log)
    if (elector && !(await elector.acquire())) return 0
    if (replica.stopping) return 0
    await markPod(label, true, log)
    replica.controller = new Controller(client, settings)
    return await lead(replica.controller, elector, replica)
  } finally {
    process.off('SIGTERM', stop)
    process.off('SIGINT', stop)
    process.off('SIGHUP', resync)
    await elector?.stop()
    if (replica.controller) await markPod(label, false, log)
    replica.server?.close()
    replica.server?.closeAllConnections()
  }
}

/** What the signal handlers and the webhook share with the run: the controller once this replica leads, and whether it is stopping. */
interface Replica {
  controller?: Controller
  server?: Server
  stopping: boolean
}

/** Refuses options that do not go together, before connecting to anything. */
function checkOptions(options: ControllerOptions, io: CliIO) {
  if (Boolean(options.git) === Boolean(options.out)) throw new UsageError('give either --out DIR or --git')
  const outDir = resolve(io.cwd, options.out ?? '.')
  if (options.out && existsSync(outDir) && !statSync(outDir).isDirectory())
    throw new UsageError(`--out ${options.out} is not a directory`)
  const timing = {
    leaseDurationMs: options.leaseDuration,
    renewDeadlineMs: options.renewDeadline,
    retryPeriodMs: options.retryPeriod,
  }
  const timingProblem = options.leaderElection ? checkTiming(timing) : undefined
  if (timingProblem) throw new UsageError(`--lease-duration, --renew-deadline, --retry-period: ${timingProblem}`)
  const lease = /^([^/]+)\/([^/]+)$/.exec(options.lease)
  if (!lease) throw new UsageError(`--lease ${options.lease}: expected NAMESPACE/NAME`)
  if (options.resync <= 0) throw new UsageError('--resync must be longer than 0')
  const secret =
    options.webhookSecretFile === undefined ? undefined : readSecret(resolve(io.cwd, options.webhookSecretFile))
  return { outDir, timing, lease, secret }
}

/** The cluster of --kubeconfig and --context; one that cannot be reached is a usage error, not a stack trace. */
async function connect(options: ControllerOptions, io: CliIO): Promise<ClusterClient> {
  try {
    return await ClusterClient.connect({
      ...(options.kubeconfig ? { kubeconfig: options.kubeconfig } : {}),
      ...(options.context ? { context: options.context } : {}),
      cwd: io.cwd,
      env: io.env,
    })
  } catch (err) {
    if (err instanceof ClusterError) throw new UsageError(err.message)
    throw err
  }
}

/** The controller's settings, and within them each cycle's render settings, as `render --cluster` would make them. */
function controllerSettings(
  options: ControllerOptions,
  io: CliIO,
  run: { client: ClusterClient; outDir: string; cacheDir: string; log: (line: string) => void },
): ControllerSettings {
  const { client, outDir, cacheDir, log } = run
  const fleetId = `cluster ${client.server} ${options.namespace ?? '*'}`
  const git = options.git ? { cacheDir, lockTimeoutMs: options.lockTimeout, publish: false } : undefined
  // One record with `render --cluster`'s of the same output.
  const memo = renderRecordFile(cacheDir, git ? `git ${fleetId}` : outDir)
  return {
    render: {
      // As `render --cluster`: records by the server, repository paths by the working directory.
      fleetId,
      repositoryBase: io.cwd,
      outDir,
      dryRun: false,
      diff: false,
      onConflict: options.onConflict,
      allowExec: Boolean(options.allowExec),
      imageFunctions: options.imageFunctions,
      dependencies: options.dependencies,
      ...(options.threads ? { threads: options.threads } : {}),
      ...deletionGuardOf(options),
      ...(git ? { git } : {}),
      upstreamCache: { dir: cacheDir, lockTimeoutMs: options.lockTimeout },
      cacheDir,
      memo,
      ...(options.namespace ? { namespace: options.namespace } : {}),
      cwd: io.cwd,
      env: io.env,
    },
    memo,
    ...(options.namespace ? { namespace: options.namespace } : {}),
    cacheDir,
    resyncMs: options.resync,
    pollMs: options.poll,
    log,
    ...(options.json ? { onCycle: (cycle: Cycle) => io.stdout(`${JSON.stringify(cycle)}\n`) } : {}),
  }
}

/** The webhook server of --listen, if given; it answers for this replica only while it leads. */
async function startWebhook(webhook: {
  address: string | undefined
  secret: string | undefined
  replica: Replica
  log: (line: string) => void
}): Promise<Server | undefined> {
  const { address, secret, replica, log } = webhook
  if (!address) return undefined
  try {
    const listening = await listen(address, secret, {
      leading: () => replica.controller !== undefined && !replica.stopping,
      pushed: () => replica.controller?.upstreamChanged(),
    })
    log(`listening on ${address.replace(/:\d+$/, '')}:${listening.port}`)
    return listening.server
  } catch (err) {
    throw new UsageError(`--listen ${address}: ${(err as Error).message}`)
  }
}

/** Runs the controller until it ends (0, or its error thrown) or the lease is lost. */
async function lead(controller: Controller, elector: LeaderElector | undefined, replica: Replica): Promise<number> {
  const running = controller.run().then(
    () => undefined,
    (err: unknown) => err,
  )
  const lost = elector ? elector.lost.then((why) => ({ why })) : new Promise<never>(() => {})
  const ended = await Promise.race([running.then((error) => ({ error })), lost])
  if ('why' in ended) {
    // Another replica may lead now. As client-go's leaders do, this one ends at once, with the cycle under way:
    // finishing it could write beside the new leader (an end mid-cycle is what a crash is, which a render survives).
    if (!replica.stopping) process.exit(1)
    controller.stop()
    await running
    return 0
  }
  if (ended.error) {
    if (ended.error instanceof ClusterError) throw new UsageError(ended.error.message)
    throw ended.error instanceof Error ? ended.error : new Error(String(ended.error))
  }
  return 0
}

function labelOf(client: ClusterClient, pod: string | undefined): PodLabel | undefined {
  if (pod === undefined) return undefined
  const match = /^([^/]+)\/([^/]+)$/.exec(pod)
  if (!match) throw new UsageError(`--label-pod ${pod}: expected NAMESPACE/NAME`)
  return podLabel(client, match[1]!, match[2]!)
}

/** A label that cannot be written is logged, not fatal: the leader still renders; webhooks wait for its next poll. */
async function markPod(label: PodLabel | undefined, leading: boolean, log: (line: string) => void): Promise<void> {
  try {
    await label?.mark(leading)
  } catch (err) {
    log(`${(err as Error).message}: webhook calls may miss this replica`)
  }
}

function readSecret(file: string): string {
  try {
    const secret = readFileSync(file, 'utf8').trim()
    if (secret === '') throw new UsageError(`--webhook-secret-file ${file} is empty`)
    return secret
  } catch (err) {
    if (err instanceof UsageError) throw err
    throw new UsageError(
      `--webhook-secret-file: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    )
  }
}
