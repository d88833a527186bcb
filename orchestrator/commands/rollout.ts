/**
 * `kpt-variants rollout status|approve|pause|resume NAME`: where a Rollout
 * stands and why, and the records a person adds to it. In a fleet directory
 * the Rollout's file is edited in place (commit it like any fleet change);
 * with `--cluster` the object is patched (docs/rollouts.md, "Records").
 */
import { existsSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Rollout } from '../../functions/api/rollout.js'
import type { KubeObject } from '../../functions/krm/index.js'
import type { ClusterFleet } from '../fleet/cluster.js'
import { buildFleet } from '../fleet/fleet.js'
import { loadFleetDirectory } from '../fleet/load.js'
import { defaultCacheDir } from '../cache/layout.js'
import { rolloutName } from '../rollout/evaluate.js'
import { editFleetObject, FleetEditError } from '../rollout/fleet-file.js'
import { applyRolloutEdit, planRolloutEdit, rolloutPatches } from '../rollout/record.js'
import type { RolloutCommand, RolloutEdit } from '../rollout/record.js'
import type { RolloutEvaluation } from '../rollout/types.js'
import {
  evaluateFleetRollout,
  findRollout,
  planForRollout,
  RolloutCommandError,
  setRevision,
} from '../run/rollout-status.js'
import type { PlanSettings } from '../run/setup.js'
import { UsageError } from './cli-io.js'
import { readClusterFleet } from './cluster-fleet.js'
import type { CliIO } from './cli-io.js'
import { nowOf } from './now.js'
import { alignColumns } from '../util/columns.js'

/** The options commander parsed. */
export interface RolloutOptions {
  fleet?: string
  cluster?: boolean
  kubeconfig?: string
  context?: string
  namespace?: string
  cache?: string
  lockTimeout: number
  now?: string
  json?: boolean
}

export type RolloutAction = 'status' | 'approve' | 'pause' | 'resume'

/** Runs a rollout command; resolves to its exit code. */
export async function rolloutCommand(
  action: RolloutAction,
  name: string,
  step: string | undefined,
  options: RolloutOptions,
  io: CliIO,
): Promise<number> {
  if (Boolean(options.fleet) === Boolean(options.cluster)) throw new UsageError('give either --fleet DIR or --cluster')
  if (!options.cluster && (options.kubeconfig !== undefined || options.context !== undefined))
    throw new UsageError('--kubeconfig and --context need --cluster')
  const now = nowOf(options.now)
  const cacheDir = resolve(io.cwd, options.cache ?? defaultCacheDir(io.env))
  const slash = name.indexOf('/')
  const namespace = slash >= 0 ? name.slice(0, slash) : (options.namespace ?? 'default')
  const bare = slash >= 0 ? name.slice(slash + 1) : name
  const cluster = options.cluster ? await readClusterFleet(options, cacheDir, io, { printWarnings: false }) : undefined
  try {
    const fleetDir = cluster ? cluster.dir : resolve(io.cwd, options.fleet!)
    if (!existsSync(fleetDir) || !statSync(fleetDir).isDirectory())
      throw new UsageError(`fleet directory ${options.fleet} does not exist`)
    const planSettings: PlanSettings = {
      fleetDir,
      cwd: io.cwd,
      upstreamCache: { dir: cacheDir, lockTimeoutMs: options.lockTimeout * 1000 },
      ...(options.namespace ? { namespace: options.namespace } : {}),
      ...(cluster
        ? { repositoryBase: io.cwd, clusterScoped: cluster.clusterScoped, servedKinds: cluster.servedKinds }
        : {}),
    }
    return await run(action, { namespace, name: bare }, step, { planSettings, cacheDir, now, cluster }, options, io)
  } catch (err) {
    if (err instanceof RolloutCommandError) {
      io.stderr(`kpt-variants: ${err.message}\n`)
      return err.exitCode
    }
    if (err instanceof FleetEditError) {
      io.stderr(`kpt-variants: ${err.message}\n`)
      return 1
    }
    throw err
  } finally {
    cluster?.close()
  }
}

interface Context {
  planSettings: PlanSettings
  cacheDir: string
  now: Date
  cluster: ClusterFleet | undefined
}

async function run(
  action: RolloutAction,
  id: { namespace: string; name: string },
  step: string | undefined,
  context: Context,
  options: RolloutOptions,
  io: CliIO,
): Promise<number> {
  const { planSettings, now } = context
  // Pausing needs the Rollout only; status and approve plan the fleet (approve names the set's upstream revision).
  const planned = action === 'pause' || action === 'resume' ? undefined : await planForRollout(planSettings)
  const fleet =
    planned?.fleet ??
    buildFleet(
      loadFleetDirectory(planSettings.fleetDir),
      planSettings.namespace,
      context.cluster
        ? { base: io.cwd, clusterScoped: context.cluster.clusterScoped, servedKinds: context.cluster.servedKinds }
        : {},
    )
  const found = findRollout(fleet, id.namespace, id.name)
  if ('errors' in found)
    throw new RolloutCommandError(`Rollout ${id.namespace}/${id.name} is invalid: ${found.errors.join('; ')}`, 1)
  const { rollout } = found
  if (action === 'status') {
    const { evaluation, paths, unavailable } = await evaluateFleetRollout(fleet, planned!.plan, rollout, {
      cacheDir: context.cacheDir,
      lockTimeoutMs: options.lockTimeout * 1000,
      now,
    })
    if (options.json)
      io.stdout(
        `${JSON.stringify({ apiVersion: 'kpt-variants.dev/v1alpha1', kind: 'RolloutStatus', paused: rollout.paused, ...evaluation, packages: Object.fromEntries(paths), unavailable }, null, 2)}\n`,
      )
    else io.stdout(formatRolloutStatus(rollout, evaluation, paths))
    for (const [repo, reason] of Object.entries(unavailable))
      io.stderr(`kpt-variants: repository ${repo} cannot be read: ${reason}\n`)
    return Object.keys(unavailable).length > 0 ? 1 : 0
  }
  const command: RolloutCommand =
    action === 'approve'
      ? { action, step: step!, revision: setRevision(planned!.plan, rollout), time: now }
      : { action }
  const proposed = planRolloutEdit(rollout, command)
  if (!proposed.ok) throw new RolloutCommandError(proposed.error)
  const edit = proposed.edit
  if (edit.changed) {
    if (context.cluster) await patchCluster(context.cluster, found.object, edit)
    else writeFleetFile(planSettings.fleetDir, found.object, edit)
  }
  io.stderr(
    `${edit.message}${edit.changed ? (context.cluster ? ` (patched on ${context.cluster.server})` : ` (${found.object.origin?.file}: commit the change)`) : ''}\n`,
  )
  return 0
}

function writeFleetFile(fleetDir: string, object: KubeObject, edit: RolloutEdit): void {
  const origin = object.origin
  if (!origin?.file) throw new RolloutCommandError(`Rollout ${object.namespace}/${object.name} has no file to edit`, 1)
  editFleetObject(
    fleetDir,
    { apiVersion: object.apiVersion, kind: object.kind, name: object.name, namespace: object.namespace, origin },
    (o) => applyRolloutEdit(o, edit),
  )
}

async function patchCluster(cluster: ClusterFleet, object: KubeObject, edit: RolloutEdit): Promise<void> {
  const listed = cluster.rollouts.find(
    (r) => r.object.metadata?.['name'] === object.name && (r.object.metadata?.['namespace'] ?? '') === object.namespace,
  )
  if (!listed)
    throw new RolloutCommandError(`Rollout ${object.namespace}/${object.name} was not listed from ${cluster.server}`, 1)
  const resourceVersion = listed.object.metadata?.['resourceVersion']
  const { ClusterError } = await import('../fleet/cluster.js')
  try {
    for (const p of rolloutPatches(edit, typeof resourceVersion === 'string' ? resourceVersion : undefined))
      await cluster.patch(listed, p.patch, p.subresource)
  } catch (err) {
    if (err instanceof ClusterError) throw new RolloutCommandError(err.message, 1)
    throw err
  }
}

/** The status as a table of steps, then the variants a publish now would hold, with why. */
export function formatRolloutStatus(
  rollout: Rollout,
  e: RolloutEvaluation,
  paths: ReadonlyMap<string, string>,
): string {
  const lines = [
    `Rollout ${rolloutName(rollout)} of set ${rollout.spec.packageVariantSet} at ${e.revision}: ${e.state}: ${e.reason}`,
    '',
  ]
  const rows = e.steps.map((s) => [
    s.name,
    s.state,
    String(s.variants.length),
    String(s.published),
    String(s.healthy),
    s.reason,
  ])
  const header = ['STEP', 'STATE', 'VARIANTS', 'PUBLISHED', 'HEALTHY', 'WHY']
  lines.push(...alignColumns(header, rows))
  const publishing = e.decisions.filter((d) => d.publish)
  const held = e.decisions.filter((d) => !d.publish)
  if (publishing.length > 0)
    lines.push('', `A publish now takes: ${publishing.map((d) => paths.get(d.key) ?? d.key).join(', ')}`)
  if (held.length > 0) {
    lines.push('', 'Held back:')
    for (const d of held) lines.push(`  ${paths.get(d.key) ?? d.key}: ${(d as { reason: string }).reason}`)
  }
  return `${lines.join('\n')}\n`
}
