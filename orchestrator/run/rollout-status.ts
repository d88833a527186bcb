/**
 * `kpt-variants rollout status`: where one Rollout stands, read as a publish
 * would read it (publish-gate.ts) from the fleet, its targets and the
 * downstream repositories of its set's variants; and the upstream revision
 * the set renders now, which `rollout approve` approves.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isRollout, readRollout } from '../../functions/api/rollout.js'
import type { Rollout } from '../../functions/api/rollout.js'
import type { KubeObject } from '../../functions/krm/index.js'
import type { Fleet } from '../fleet/fleet.js'
import { GitOutput, openRepositories } from '../output/git/git-output.js'
import type { FleetPlan } from '../plan/plan.js'
import { rolloutRevision } from '../rollout/gather.js'
import type { RolloutEvaluation } from '../rollout/types.js'
import { gatePublishing } from './publish-gate.js'
import { loadAndPlan } from './setup.js'
import type { PlanSettings } from './setup.js'

/** A Rollout found in the fleet: its object, and what reading it gave. */
export type FoundRollout = { object: KubeObject; rollout: Rollout } | { object: KubeObject; errors: string[] }

/** Why a rollout command cannot go on (a user's mistake: exit 2, or 1 for an invalid Rollout). */
export class RolloutCommandError extends Error {
  override name = 'RolloutCommandError'
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 2,
  ) {
    super(message)
  }
}

/** The Rollout `namespace/name` of the fleet, read; an error when there is none. */
export function findRollout(fleet: Fleet, namespace: string, name: string): FoundRollout {
  const object = fleet.objects.find((o) => isRollout(o) && o.name === name && o.namespace === namespace)
  if (!object) {
    const others = fleet.objects
      .filter(isRollout)
      .map((o) => (o.namespace === 'default' ? o.name : `${o.namespace}/${o.name}`))
    throw new RolloutCommandError(
      `no Rollout ${namespace}/${name} in the fleet${others.length > 0 ? `: it has ${others.join(', ')}` : ''}`,
    )
  }
  const read = readRollout(object)
  return read.ok ? { object, rollout: read.value } : { object, errors: read.errors.map((e) => e.message) }
}

/** The upstream revision the Rollout's set renders now (as approvals name it); an error when the set has no variant. */
export function setRevision(plan: FleetPlan, rollout: Rollout): string {
  const set = `${rollout.namespace}/${rollout.spec.packageVariantSet}`
  const variant = plan.variants.find((v) => v.set === set)
  if (!variant)
    throw new RolloutCommandError(
      `set ${set} of rollout ${rollout.name} has no variant to roll out (is the set in the fleet, and does it select targets?)`,
      1,
    )
  return rolloutRevision(variant.upstream)
}

/** Loads and plans the fleet, with a scratch directory for remote upstreams that are not cached. */
export async function planForRollout(settings: PlanSettings): Promise<{ fleet: Fleet; plan: FleetPlan }> {
  const scratch = mkdtempSync(join(tmpdir(), 'kpt-variants-'))
  try {
    return await loadAndPlan(settings, scratch)
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

/** Evaluates the Rollout as a publish at `now` would, reading the repositories of its set's variants. */
export async function evaluateFleetRollout(
  fleet: Fleet,
  plan: FleetPlan,
  rollout: Rollout,
  settings: { cacheDir: string; lockTimeoutMs: number; now: Date },
): Promise<{ evaluation: RolloutEvaluation; paths: Map<string, string>; unavailable: Record<string, string> }> {
  const set = `${rollout.namespace}/${rollout.spec.packageVariantSet}`
  const variants = plan.variants.filter((v) => v.set === set)
  const only = new Set(variants.map((v) => v.downstream.repo))
  const { shared, locks } = await openRepositories(
    fleet,
    { ...plan, variants },
    { cacheDir: settings.cacheDir, lockTimeoutMs: settings.lockTimeoutMs, publish: false },
    only,
  )
  const output = new GitOutput(shared, settings.cacheDir, {
    locks,
    env: {},
    cacheDir: settings.cacheDir,
    failureKey: '',
  })
  try {
    const gate = await gatePublishing(
      fleet,
      { ...plan, variants },
      output,
      { changed: new Map(), failed: new Map() },
      { now: settings.now },
    )
    const evaluation = gate.evaluations.find((e) => e.rollout === `${rollout.namespace}/${rollout.name}`)
    if (!evaluation)
      throw new RolloutCommandError(`set ${set} of rollout ${rollout.name} has no variant to roll out`, 1)
    return {
      evaluation,
      paths: new Map(variants.map((v) => [v.key, `${v.downstream.repo}/${v.downstream.package}`])),
      unavailable: shared.unavailable,
    }
  } finally {
    output.close()
  }
}
