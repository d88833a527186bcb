/**
 * Where a rollout's approvals and pauses are recorded: in the Rollout object
 * itself, so they are reviewable like any other change to the fleet and
 * survive a killed run and a new machine (docs/rollouts.md, "Records").
 *
 * - `rollout approve NAME STEP` adds `{step, revision, time}` to
 *   `status.approvals`; an approval counts only for its upstream revision, so
 *   approvals of other revisions are dropped then (a later rollback to one of
 *   them asks again);
 * - `rollout pause` / `resume` set `spec.paused`: a pause is the user's
 *   intent, which belongs in the spec (as `kubectl rollout pause` sets a
 *   Deployment's `spec.paused`).
 *
 * This module is pure: it computes an edit from the Rollout as read, applies
 * it to the object's YAML nodes (comments and layout kept), or turns it into
 * the patches an API server takes. fleet-file.ts writes a fleet file.
 */
import { formatRfc3339 } from '../../functions/api/rfc3339.js'
import type { Rollout, RolloutApprovalSpec } from '../../functions/api/rollout.js'
import type { KubeObject } from '../../functions/krm/index.js'
import { rolloutName } from './evaluate.js'

/** What a `kpt-variants rollout` command asks for. */
export type RolloutCommand =
  { action: 'approve'; step: string; revision: string; time: Date } | { action: 'pause' } | { action: 'resume' }

/** The fields a command sets, and what to tell the user. */
export interface RolloutEdit {
  /** False: the object already says so; nothing to write. */
  changed: boolean
  /** e.g. `approved step eu of rollout edge-monitor for nginx/v2@1a2b3c4d5e6f`. */
  message: string
  /** `spec.paused`, when the command sets it. */
  paused?: boolean
  /** The whole new `status.approvals`, when the command sets it. */
  approvals?: RolloutApprovalSpec[]
}

/** The edit a command makes to a Rollout, or why it cannot (an unknown step). */
export function planRolloutEdit(
  rollout: Rollout,
  command: RolloutCommand,
): { ok: true; edit: RolloutEdit } | { ok: false; error: string } {
  const name = rolloutName(rollout)
  if (command.action === 'pause' || command.action === 'resume') {
    const paused = command.action === 'pause'
    if (rollout.paused === paused)
      return {
        ok: true,
        edit: { changed: false, message: `rollout ${name} is already ${paused ? 'paused' : 'running'}` },
      }
    return { ok: true, edit: { changed: true, message: `${paused ? 'paused' : 'resumed'} rollout ${name}`, paused } }
  }
  const { step, revision, time } = command
  if (!rollout.steps.some((s) => s.name === step)) {
    return {
      ok: false,
      error: `rollout ${name} has no step ${JSON.stringify(step)}: its steps are ${rollout.steps.map((s) => s.name).join(', ')}`,
    }
  }
  const current = rollout.status.approvals ?? []
  const existing = current.find((a) => a.step === step && a.revision === revision)
  const others = current.filter((a) => a.revision === revision && a.step !== step)
  const dropped = current.filter((a) => a.revision !== revision).length
  if (existing && dropped === 0) {
    return {
      ok: true,
      edit: {
        changed: false,
        message: `step ${step} of rollout ${name} was already approved for ${revision} at ${existing.time}`,
      },
    }
  }
  const approvals = [...others, existing ?? { step, revision, time: formatRfc3339(time) }]
  const note = rollout.approval === 'auto' ? ` (its gates.approval is auto: approvals only count with manual)` : ''
  return {
    ok: true,
    edit: { changed: true, message: `approved step ${step} of rollout ${name} for ${revision}${note}`, approvals },
  }
}

/** Applies an edit to the Rollout's own nodes: every other byte of its file stays as it was. */
export function applyRolloutEdit(object: KubeObject, edit: RolloutEdit): void {
  if (edit.paused !== undefined) object.set(['spec', 'paused'], edit.paused)
  if (edit.approvals !== undefined)
    object.set(
      ['status', 'approvals'],
      edit.approvals.map((a) => ({ step: a.step, revision: a.revision, time: a.time })),
    )
}

/** A JSON merge patch for an API server, and whether it goes to the status subresource. */
export interface RolloutPatch {
  subresource?: 'status'
  patch: Record<string, unknown>
}

/**
 * The patches `--cluster` sends for an edit: `spec.paused` on the object,
 * `status.approvals` on its status subresource. A merge patch replaces a
 * list whole, so the approvals patch carries the `resourceVersion` the
 * edit was computed from: two approvals at once cannot lose one (the API
 * server answers 409 Conflict to the later; read again and retry).
 */
export function rolloutPatches(edit: RolloutEdit, resourceVersion?: string): RolloutPatch[] {
  const patches: RolloutPatch[] = []
  if (edit.paused !== undefined) patches.push({ patch: { spec: { paused: edit.paused } } })
  if (edit.approvals !== undefined) {
    patches.push({
      subresource: 'status',
      patch: { ...(resourceVersion ? { metadata: { resourceVersion } } : {}), status: { approvals: edit.approvals } },
    })
  }
  return patches
}
