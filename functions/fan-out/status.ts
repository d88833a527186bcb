/**
 * The PackageVariantSet's `status.conditions` (docs/upstream-behaviour.md, "Set reconciliation and status"):
 * `Stalled` and `Ready` with Porch's reasons and messages.
 */
import type { KubeObject } from '../krm/index.js'

/** Why a run stopped: Porch's condition reasons. */
export type FailureReason = 'ValidationError' | 'UpstreamNotFound' | 'NoMatchingTargets' | 'UnexpectedError'

/** How a run ended, as the conditions report it. */
export type Outcome = { ok: true } | { ok: false; reason: FailureReason; message: string }

/** One `metav1.Condition` (observedGeneration is never set, as in Porch). */
export interface Condition {
  type: string
  status: 'True' | 'False'
  lastTransitionTime?: string
  reason: string
  message: string
}

/** The two conditions Porch writes for an outcome, Stalled first. */
export function conditionsFor(outcome: Outcome): Condition[] {
  if (outcome.ok) {
    return [
      { type: 'Stalled', status: 'False', reason: 'Valid', message: 'all validation checks passed' },
      { type: 'Ready', status: 'True', reason: 'Reconciled', message: 'package variants successfully reconciled' },
    ]
  }
  return [
    { type: 'Stalled', status: 'True', reason: outcome.reason, message: outcome.message },
    { type: 'Ready', status: 'False', reason: outcome.reason, message: outcome.message },
  ]
}

/**
 * `meta.SetStatusCondition` without a clock: a condition whose status is
 * unchanged keeps its `lastTransitionTime`; a changed or new one has none
 * (a function may not read the time). Other conditions are kept in place.
 * Returns true when the object changed.
 */
export function setConditions(object: KubeObject, outcome: Outcome): boolean {
  const before = object.get(['status', 'conditions'])
  const current: Record<string, unknown>[] = Array.isArray(before)
    ? before.filter((c): c is Record<string, unknown> => typeof c === 'object' && c !== null && !Array.isArray(c))
    : []
  const next = current.map((c) => ({ ...c }))
  for (const wanted of conditionsFor(outcome)) {
    const index = next.findIndex((c) => c['type'] === wanted.type)
    const existing = index >= 0 ? next[index]! : undefined
    const condition: Record<string, unknown> = { type: wanted.type, status: wanted.status }
    if (existing && existing['status'] === wanted.status && existing['lastTransitionTime'] !== undefined) {
      condition['lastTransitionTime'] = existing['lastTransitionTime']
    }
    condition['reason'] = wanted.reason
    condition['message'] = wanted.message
    if (index >= 0) next[index] = condition
    else next.push(condition)
  }
  if (JSON.stringify(next) === JSON.stringify(current) && Array.isArray(before) && before.length === current.length)
    return false
  object.set(['status', 'conditions'], next)
  return true
}
