/**
 * The status `render --cluster` writes back, computed from the run (pure):
 * PackageVariant and PackageVariantSet `status.conditions` with Porch's types,
 * reasons and messages (Stalled, Ready), as Porch's controllers would set them
 * after a reconcile. cluster.ts sends them through the status subresource.
 */
import { conditionsFor } from '../../functions/fan-out/status.js'
import type { Condition, FailureReason } from '../../functions/fan-out/status.js'
import type { PlanFailure } from '../plan/plan.js'
import type { RunReport } from '../report/report.js'
import { messagesOf } from '../report/failure.js'
import type { FailureCode } from '../report/failure.js'
import { describe, nextStatus } from '../fleet/cluster-objects.js'
import type { ListedObject, StatusUpdate } from '../fleet/cluster-objects.js'

/** What the run decided, as far as status goes. */
export interface RunOutcome {
  /** The planned variants: identity, the set that generated it, downstream. */
  variants: readonly { key: string; set?: string }[]
  failures: readonly PlanFailure[]
  report: RunReport
  /** With `--shard`, a set's variants are spread over runs: its status then reports only what every shard sees alike. */
  sharded: boolean
}

const valid: Condition = { type: 'Stalled', status: 'False', reason: 'Valid', message: 'all validation checks passed' }

/**
 * The PackageVariant conditions of Porch's reconcile (porch-packagevariant.md
 * §1.1): a variant that could not be planned (invalid, upstream or repository
 * not found) is Stalled with reason `ValidationError` and not Ready; one whose
 * render failed is valid but not Ready (reason `Error`, the reasons as the
 * message); a rendered one whose package's readiness gates are not all True
 * is not Ready (`NotReady`, which gates and why); a rendered one is Ready
 * (`NoErrors`) and names its downstream package in `downstreamTargets`.
 */
export function variantConditions(
  key: string,
  outcome: RunOutcome,
): { conditions: Condition[]; downstreamTargets?: { name: string }[] } | undefined {
  const subject = `PackageVariant ${key}`
  const failure = outcome.failures.find((f) => f.subject === subject)
  if (failure) {
    return {
      conditions: [
        { type: 'Stalled', status: 'True', reason: 'ValidationError', message: failure.message },
        { type: 'Ready', status: 'False', reason: 'Error', message: 'invalid packagevariant object' },
      ],
    }
  }
  const report = outcome.report.variants.find((v) => v.subject === subject)
  if (!report || report.status === 'deleted' || report.status === 'orphaned') return undefined
  if (report.status === 'failed')
    return {
      conditions: [valid, { type: 'Ready', status: 'False', reason: 'Error', message: messagesOf(report.reasons) }],
    }
  // Rendered, but its package may not be published until its readiness gates are True.
  if (report.notReady)
    return {
      conditions: [valid, { type: 'Ready', status: 'False', reason: 'NotReady', message: report.notReady }],
      ...(report.path ? { downstreamTargets: [{ name: report.path }] } : {}),
    }
  return {
    conditions: [
      valid,
      { type: 'Ready', status: 'True', reason: 'NoErrors', message: 'successfully ensured downstream package variant' },
    ],
    ...(report.path ? { downstreamTargets: [{ name: report.path }] } : {}),
  }
}

/**
 * The PackageVariantSet conditions (porch-packagevariantset.md §7): the
 * first failure of the set itself (validation, upstream, a target) with
 * fan-out's reason; else the first failure of one of its PackageVariants,
 * which exist only in the run here, as `UnexpectedError` (Porch's reason for
 * a set whose variants could not be ensured); else Reconciled.
 */
export function setConditions(key: string, outcome: RunOutcome): Condition[] {
  const own = outcome.failures.filter(
    (f) => f.subject === `PackageVariantSet ${key}` || f.subject.startsWith(`PackageVariantSet ${key} `),
  )
  if (own.length > 0)
    return conditionsFor({
      ok: false,
      reason: porchReason(own[0]!.code),
      message: withMore(own[0]!.message, own.length),
    })
  if (outcome.sharded) return conditionsFor({ ok: true })
  const members = new Set(outcome.variants.filter((v) => v.set === key).map((v) => `PackageVariant ${v.key}`))
  for (const f of outcome.failures) if (f.set === key && f.key) members.add(f.subject)
  const failed = outcome.report.variants.filter((v) => v.status === 'failed' && members.has(v.subject))
  if (failed.length === 0) return conditionsFor({ ok: true })
  const first = failed[0]!
  return conditionsFor({
    ok: false,
    reason: 'UnexpectedError',
    message: withMore(`${first.subject}: ${messagesOf(first.reasons)}`, failed.length),
  })
}

/** A set's condition reason: its failure's code where Porch has it, else Porch's catch-all. */
function porchReason(code: FailureCode): FailureReason {
  const porch: readonly string[] = ['ValidationError', 'UpstreamNotFound', 'NoMatchingTargets', 'UnexpectedError']
  return porch.includes(code) ? (code as FailureReason) : 'UnexpectedError'
}

function withMore(message: string, count: number): string {
  return count > 1 ? `${message} (and ${count - 1} more failure(s): see the render report)` : message
}

/**
 * The status updates of a run, only for objects whose status changes (see
 * `nextStatus`). Variants the run did not render (another shard's) get none.
 */
export function statusUpdates(
  variants: readonly ListedObject[],
  sets: readonly ListedObject[],
  outcome: RunOutcome,
  now: string,
): StatusUpdate[] {
  const updates: StatusUpdate[] = []
  const push = (listed: ListedObject, conditions: Condition[], extra: Record<string, unknown>) => {
    const wanted = { conditions, extra, now }
    const status = nextStatus(listed.object['status'], wanted)
    if (!status) return
    const metadata = listed.object.metadata ?? {}
    const resourceVersion = metadata['resourceVersion']
    updates.push({
      apiVersion: listed.apiVersion,
      kind: listed.kind,
      namespace: String(metadata['namespace'] ?? ''),
      name: String(metadata['name'] ?? ''),
      subject: `${listed.kind} ${describe(listed.object)}`,
      status,
      ...(typeof resourceVersion === 'string' ? { resourceVersion } : {}),
      wanted,
    })
  }
  for (const listed of variants) {
    const wanted = variantConditions(describe(listed.object), outcome)
    if (wanted)
      push(listed, wanted.conditions, wanted.downstreamTargets ? { downstreamTargets: wanted.downstreamTargets } : {})
  }
  for (const listed of sets) push(listed, setConditions(describe(listed.object), outcome), {})
  return updates
}
