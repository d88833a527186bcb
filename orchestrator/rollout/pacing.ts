/**
 * Which drafts a publish may take now (pure): `render --git --publish`,
 * `publish REPO` and `publish --fleet` all ask this one function. A variant
 * of a set that a Rollout paces is published when its rollout says so
 * (evaluate.ts); a set whose Rollout cannot be used holds every draft; any
 * other variant is published as before. Then, for an automatic publish, a
 * draft that reports conflicts or removes its package waits for a person
 * unless the run says otherwise (`--publish-conflicts`, `--publish-deletions`),
 * and a draft whose readiness gates are not all True waits for them.
 */
import { evaluateRollout } from './evaluate.js'
import type { FleetRollouts } from './gather.js'
import type { PublishedRevision, RolloutEvaluation, RolloutTarget, RolloutVariant } from './types.js'

/** One package that may have a draft to publish, with what pacing it needs to know. */
export interface PublishCandidate {
  /** `<repo>/<package>`: how decisions are keyed. */
  path: string
  /** The PackageVariant's identity (`namespace/name`). */
  key: string
  /** The PackageVariantSet that generated it (`namespace/name`). */
  set?: string
  /** Its target; absent, a target named after the variant without labels or status (only a step without `targets` takes it). */
  target?: RolloutTarget
  /** The upstream revision it renders now (`rolloutRevision`). */
  revision: string
  /** A draft is open, or will be after this run's write. */
  draft: boolean
  /** Its latest published revision. */
  published?: PublishedRevision
  /** The draft records conflicts (a 3-way merge took a side). */
  conflicts?: boolean
  /** The draft removes the package. */
  removes?: boolean
  /** Why the draft's package is not ready (readiness gates not all True): it is held, whatever the rollout says. */
  notReady?: string
  /** Why its variant cannot be rendered now: a rollout holds its step (RolloutVariant.failure). */
  failure?: string
}

/** How a publish is paced. */
export interface PacingOptions {
  /** The time the run acts at (`--now`). */
  now: Date
  /** `--skip-rollout`: publish every draft, as without Rollouts. */
  skipRollout?: boolean
  /** Hold drafts with conflicts unless `publishConflicts`, drafts removing a package unless `publishDeletions` (an automatic publish). */
  holdConflicts?: boolean
  holdDeletions?: boolean
  /** `publish --force`: publish drafts whose readiness gates are not all True too. */
  publishNotReady?: boolean
}

/** Why an automatic publish holds a draft that reports conflicts, or that deletes its package. */
export const heldForConflicts =
  'held: the draft reports conflicts: review it, then `kpt-variants publish`, or render with --publish-conflicts'
export const heldForDeletion =
  'held: the draft deletes the package: review it, then `kpt-variants publish`, or render with --publish-deletions'

/** Publish now, or why not. */
export type PublishDecision = { publish: true } | { publish: false; reason: string }

/** What a publish may take: a decision per candidate with a draft, and each rollout's evaluation. */
export interface Pacing {
  decisions: Map<string, PublishDecision>
  evaluations: RolloutEvaluation[]
}

/** Decides, for each candidate with a draft, whether this run publishes it. */
export function pacePublishing(
  candidates: readonly PublishCandidate[],
  rollouts: FleetRollouts,
  options: PacingOptions,
): Pacing {
  const decisions = new Map<string, PublishDecision>()
  const evaluations: RolloutEvaluation[] = []
  const bySet = new Map<string, PublishCandidate[]>()
  for (const c of candidates) {
    const pacing = c.set !== undefined && !options.skipRollout ? rollouts.bySet.get(c.set) : undefined
    if (!pacing) {
      if (c.draft) decisions.set(c.path, { publish: true })
    } else if ('held' in pacing) {
      if (c.draft) decisions.set(c.path, { publish: false, reason: pacing.held })
    } else (bySet.get(c.set!) ?? bySet.set(c.set!, []).get(c.set!)!).push(c)
  }
  for (const [set, members] of bySet) {
    const pacing = rollouts.bySet.get(set) as { rollout: Parameters<typeof evaluateRollout>[0]['rollout'] }
    const byKey = new Map(members.map((c) => [c.key, c]))
    const variants: RolloutVariant[] = members.map((c) => ({
      key: c.key,
      target: c.target ?? { name: c.key.slice(c.key.indexOf('/') + 1), labels: {}, annotations: {}, conditions: [] },
      draft: c.draft,
      ...(c.published ? { published: c.published } : {}),
      ...(c.failure !== undefined ? { failure: c.failure } : {}),
    }))
    const evaluation = evaluateRollout({
      rollout: pacing.rollout,
      // A variant that could not be planned has no revision: the set's is its other variants'.
      revision: members.find((c) => c.revision !== '')?.revision ?? '',
      variants,
      now: options.now,
    })
    evaluations.push(evaluation)
    for (const d of evaluation.decisions)
      decisions.set(byKey.get(d.key)!.path, d.publish ? { publish: true } : { publish: false, reason: d.reason })
  }
  for (const c of candidates) {
    if (decisions.get(c.path)?.publish !== true) continue
    // Porch neither proposes nor approves a revision whose readiness gates are not all True.
    if (c.notReady && !options.publishNotReady) decisions.set(c.path, { publish: false, reason: c.notReady })
    else if (options.holdConflicts && c.conflicts)
      decisions.set(c.path, {
        publish: false,
        reason:
          'held: the draft reports conflicts: review it, then `kpt-variants publish`, or render with --publish-conflicts',
      })
    else if (options.holdDeletions && c.removes)
      decisions.set(c.path, {
        publish: false,
        reason:
          'held: the draft deletes the package: review it, then `kpt-variants publish`, or render with --publish-deletions',
      })
  }
  return { decisions, evaluations }
}
