/**
 * The health gate of a Rollout, per target (docs/rollouts.md, "Health"): a
 * target is healthy when it reports `status.conditions[type=<condition>]`
 * True and, with `revisionAnnotation`, runs the published revision. A
 * target without the condition, or Unknown, is not healthy yet (the rollout
 * waits); False fails (the rollout halts).
 */
import type { HealthGate } from '../../functions/api/rollout.js'
import type { KubeObject } from '../../functions/krm/index.js'
import type { PublishedRevision, RolloutTarget, TargetCondition } from './types.js'

/** A target's health for a published revision; `detail` names the target, e.g. `edge-01 Ready is False`. */
export type TargetHealth =
  { state: 'healthy' } | { state: 'pending'; detail: string } | { state: 'failed'; detail: string; message?: string }

/**
 * The health of `target` running `published`. With `revisionAnnotation`, a
 * target that does not report the published revision yet is pending whatever
 * its condition says: the condition is about what it runs, not about this revision.
 */
export function targetHealth(
  target: RolloutTarget,
  published: PublishedRevision,
  gate: HealthGate | undefined,
): TargetHealth {
  if (!gate) return { state: 'healthy' }
  if (gate.revisionAnnotation !== undefined) {
    const running = target.annotations[gate.revisionAnnotation]
    if (running === undefined)
      return { state: 'pending', detail: `${target.name} has no ${gate.revisionAnnotation} annotation` }
    if (running !== published.tag && running !== published.commit)
      return { state: 'pending', detail: `${target.name} runs ${running}, not ${published.tag}` }
  }
  const condition = target.conditions.find((c) => c.type === gate.condition)
  if (!condition) return { state: 'pending', detail: `${target.name} has no ${gate.condition} condition` }
  if (condition.status === 'True') return { state: 'healthy' }
  if (condition.status === 'False') {
    const why = [condition.reason, condition.message].filter((s) => s).join(': ')
    return { state: 'failed', detail: `${target.name} ${gate.condition} is False`, ...(why ? { message: why } : {}) }
  }
  return { state: 'pending', detail: `${target.name} ${gate.condition} is ${condition.status || 'Unknown'}` }
}

/**
 * A fleet object as a rollout target: its name, labels, annotations and
 * `status.conditions` (entries that are not maps with a string `type` are
 * skipped: a target's status is written by others, and a bad entry must not
 * stop a rollout, only fail to make it healthy).
 */
export function rolloutTarget(object: KubeObject): RolloutTarget {
  const raw = object.get(['status', 'conditions'])
  const conditions: TargetCondition[] = []
  if (Array.isArray(raw)) {
    for (const entry of raw as unknown[]) {
      if (typeof entry !== 'object' || entry === null) continue
      const c = entry as Record<string, unknown>
      if (typeof c['type'] !== 'string') continue
      conditions.push({
        type: c['type'],
        status: typeof c['status'] === 'string' ? c['status'] : 'Unknown',
        ...(typeof c['reason'] === 'string' ? { reason: c['reason'] } : {}),
        ...(typeof c['message'] === 'string' ? { message: c['message'] } : {}),
      })
    }
  }
  return { name: object.name, labels: object.labels(), annotations: object.annotations(), conditions }
}
