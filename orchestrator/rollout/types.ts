/**
 * What the rollout evaluator takes and gives (evaluate.ts). Everything is
 * data gathered beforehand: the evaluator reads no file, no git, no clock.
 */
import type { Rollout } from '../../functions/api/rollout.js'

/** One `status.conditions[]` entry of a target object. */
export interface TargetCondition {
  type: string
  /** `True`, `False` or `Unknown` (anything else counts as Unknown). */
  status: string
  reason?: string
  message?: string
}

/** The object a variant was made for (a PackageVariantSet target): steps select it by its labels, gates read its status. */
export interface RolloutTarget {
  /** How messages name it, e.g. `edge-01`. */
  name: string
  labels: Readonly<Record<string, string>>
  annotations: Readonly<Record<string, string>>
  conditions: readonly TargetCondition[]
}

/** The latest published revision of a variant's package. */
export interface PublishedRevision {
  /** Its tag, e.g. `nginx/v3`: what `gates.health.revisionAnnotation` is compared with. */
  tag: string
  /** Its commit, which the annotation may hold instead of the tag. */
  commit?: string
  /** The upstream revision it was rendered from, in the form of `RolloutInput.revision`. */
  upstream: string
  /** When it was published: the tag's date. */
  time: Date
}

/** One variant of the rollout's PackageVariantSet. */
export interface RolloutVariant {
  /** The PackageVariant's identity (`namespace/name`). */
  key: string
  target: RolloutTarget
  /** A changed draft is waiting to be published. */
  draft: boolean
  /** Absent: never published. */
  published?: PublishedRevision
  /**
   * Why its variant cannot be rendered now (its set's template fails for the
   * target, its repository is missing): its step cannot finish, so it holds
   * that step and every later one. A target that left the set is no variant.
   */
  failure?: string
}

/** Everything the evaluator looks at. */
export interface RolloutInput {
  rollout: Rollout
  /**
   * The upstream revision the set renders now (its variants' drafts are of
   * it), e.g. `nginx/v3@1a2b3c4d5e6f` (see `rolloutRevision`): approvals
   * count only for it, and every new one rolls out from the first step again.
   */
  revision: string
  variants: readonly RolloutVariant[]
  /** The time the run acts at (`--now`). */
  now: Date
}

/** Where a step stands. */
export type StepState = 'done' | 'active' | 'waiting' | 'halted'

/** One step's state and why. */
export interface StepReport {
  name: string
  state: StepState
  /** Why, e.g. `waiting for edge-01: Ready is Unknown`, `starts after canary is healthy: edge-01 Ready is False`. */
  reason: string
  /** The keys of the step's variants, sorted. */
  variants: string[]
  /** Variants published at the revision. */
  published: number
  /** Of those, healthy (all of them without a health gate). */
  healthy: number
  /** Variants this run publishes. */
  publishing: number
}

/** What to do with one variant that has a draft waiting. */
export type VariantDecision =
  { key: string; step?: string; publish: true } | { key: string; step?: string; publish: false; reason: string }

/** Where the whole rollout stands. */
export type RolloutState = 'complete' | 'progressing' | 'halted' | 'paused' | 'outside-window'

/** The evaluator's answer. */
export interface RolloutEvaluation {
  /** `namespace/name` of the Rollout. */
  rollout: string
  revision: string
  state: RolloutState
  /** One sentence: why the rollout is in this state. */
  reason: string
  steps: StepReport[]
  /** One per variant with a draft waiting, in input order. */
  decisions: VariantDecision[]
  /** The keys of the variants to publish now, in input order. */
  publish: string[]
  /** Variants no step selects: never published by this rollout. */
  unmatched: string[]
}
