/**
 * The rollout evaluator (pure): from a Rollout, its set's variants and the
 * time of the run, which waiting drafts may be published now, and why each
 * other one is held (docs/rollouts.md, "Semantics").
 *
 * Steps go in order. A variant belongs to the first step whose selector
 * matches its target. A step is done when each of its variants is published
 * at the revision with nothing left to publish, each target is healthy and
 * the soak has passed since the step's last publish; the next step starts
 * only then (and, with `approval: manual`, once approved for this
 * revision). Within the started step, at most `maxConcurrent` variants are
 * published and not yet healthy at once. A failed target anywhere halts the
 * whole rollout; a target whose variant cannot be rendered halts its step
 * and every later one (a broken canary never lets the next wave out);
 * `paused` holds everything, and so does a closed window.
 */
import { formatDuration } from '../../functions/api/duration.js'
import { formatRfc3339 } from '../../functions/api/rfc3339.js'
import type { MaxConcurrent, Rollout } from '../../functions/api/rollout.js'
import { windowsAt, zonedTime } from '../../functions/api/rollout-windows.js'
import { targetHealth } from './health.js'
import type { TargetHealth } from './health.js'
import type {
  RolloutEvaluation,
  RolloutInput,
  RolloutState,
  RolloutVariant,
  StepReport,
  VariantDecision,
} from './types.js'

/** How a step's variants stand against its gates. */
interface StepProgress {
  /** Sorted by key. */
  members: RolloutVariant[]
  /** Not published at the revision, or with a draft waiting: what keeps the step from being published. */
  unpublished: RolloutVariant[]
  /** Published at the revision, not healthy (pending or failed), with why. */
  unhealthy: { variant: RolloutVariant; health: Exclude<TargetHealth, { state: 'healthy' }> }[]
  failed: { variant: RolloutVariant; health: Extract<TargetHealth, { state: 'failed' }> }[]
  /** Targets whose variant cannot be rendered (`failure`): the step cannot finish. */
  broken: RolloutVariant[]
  atRevision: number
  /** The latest publish time among the variants at the revision. */
  lastPublish?: Date
}

/** What the walk over the steps carries from one step to the next, and what it decides for the drafts. */
interface StepWalk {
  input: RolloutInput
  progress: StepProgress[]
  /** Why every draft waits, whatever its step (a failed target, `paused`, a closed window), if one does. */
  globalHold: string | undefined
  /** The first step with a failed target, -1 if none. */
  haltedStep: number
  /** Why each draft not published waits, by key. */
  held: Map<string, string>
  publish: Set<string>
  /** The last step that keeps the steps after it from starting, and why (completing "starts after <step> …"). */
  blockedBy?: { step: string; why: string }
}

/** One step of the walk: its place, its progress, its report and its variants with a draft waiting. */
interface StepAt {
  index: number
  step: Rollout['steps'][number]
  progress: StepProgress
  report: StepReport
  candidates: RolloutVariant[]
}

/** Decides, for each variant with a draft waiting, whether this run publishes it. */
export function evaluateRollout(input: RolloutInput): RolloutEvaluation {
  const { rollout, revision, now } = input
  const { members, stepOf, unmatched } = assignSteps(input)
  const progress = members.map((list) => stepProgress(list, input))
  const failed = progress.flatMap((p) => p.failed)
  const windows = rollout.windows.length > 0 ? windowsAt(rollout.windows, now) : undefined
  const walk: StepWalk = {
    input,
    progress,
    globalHold: globalHoldOf(rollout, failed, windows),
    // The step right after a halted one says why in its own words: "step eu starts after canary is healthy: edge-01 Ready is False".
    haltedStep: progress.findIndex((p) => p.failed.length > 0),
    held: new Map<string, string>(),
    publish: new Set<string>(),
  }
  const steps = rollout.steps.map((_, i) => decideStep(walk, i))
  holdUnmatched(walk, unmatched)
  const decisions = decisionsOf(walk, stepOf)
  const { state, reason } = rolloutState(rollout, steps, failed, windows, revision, progress)
  return {
    rollout: `${rollout.namespace}/${rollout.name}`,
    revision,
    state,
    reason,
    steps,
    decisions,
    publish: decisions.filter((d) => d.publish).map((d) => d.key),
    unmatched: unmatched.map((v) => v.key),
  }
}

/** Each variant in the first step whose selector matches its target; the variants no step selects apart. */
function assignSteps(input: RolloutInput) {
  const { rollout } = input
  const members: RolloutVariant[][] = rollout.steps.map(() => [])
  const stepOf = new Map<string, string>()
  const unmatched: RolloutVariant[] = []
  for (const variant of input.variants) {
    const index = rollout.steps.findIndex((step) => !step.matches || step.matches(variant.target.labels))
    if (index < 0) unmatched.push(variant)
    else {
      members[index]!.push(variant)
      stepOf.set(variant.key, rollout.steps[index]!.name)
    }
  }
  return { members, stepOf, unmatched }
}

/** Why every draft waits, whatever its step: a failed target, then `paused`, then a closed window. */
function globalHoldOf(
  rollout: Rollout,
  failed: StepProgress['failed'],
  windows: ReturnType<typeof windowsAt> | undefined,
): string | undefined {
  if (failed.length > 0) return `halted: ${failed[0]!.health.detail}`
  if (rollout.paused) return `paused: ${pausedText(rollout)}`
  if (windows && !windows.open) return `waiting: ${closedText(windows.next)}`
  return undefined
}

/** Step `index`'s report, holding or publishing its drafts, once the steps before it are decided. */
function decideStep(walk: StepWalk, index: number): StepReport {
  const step = walk.input.rollout.steps[index]!
  const p = walk.progress[index]!
  const report: StepReport = {
    name: step.name,
    state: 'waiting',
    reason: '',
    variants: p.members.map((v) => v.key),
    published: p.atRevision,
    healthy: p.atRevision - p.unhealthy.length,
    publishing: 0,
  }
  const at: StepAt = { index, step, progress: p, report, candidates: p.members.filter((v) => v.draft) }
  if (!walk.blockedBy && p.broken.length > 0) haltBrokenStep(walk, at)
  else if (walk.blockedBy) holdBehind(walk, at, walk.blockedBy)
  else if (p.members.length === 0) {
    report.state = 'done'
    report.reason = 'no variant is in this step'
  } else runStartedStep(walk, at)
  return report
}

/** A target of this step cannot be rendered: none of the step is published, no later step starts. */
function haltBrokenStep(walk: StepWalk, { step, progress, report, candidates }: StepAt): void {
  report.state = 'halted'
  report.reason = brokenText(progress)
  for (const v of candidates) walk.held.set(v.key, `held: step ${step.name}: ${report.reason}`)
  walk.blockedBy = { step: step.name, why: `renders every variant: ${report.reason}` }
}

/** A step after one not done waits for it, saying why; the steps after it wait for it in turn. */
function holdBehind(walk: StepWalk, at: StepAt, blockedBy: { step: string; why: string }): void {
  const { index: i, step, progress: p, report } = at
  const previous = walk.input.rollout.steps[i - 1]!.name
  const why = blockedBy.step === previous ? blockedBy.why : 'is done'
  report.reason = p.failed.length > 0 ? failedText(p) : `starts after ${previous} ${why}`
  if (p.failed.length > 0) report.state = 'halted'
  const waiting = `waiting: step ${step.name} starts after ${previous} ${why}`
  for (const v of at.candidates)
    walk.held.set(v.key, walk.haltedStep === i - 1 ? waiting : (walk.globalHold ?? waiting))
  walk.blockedBy = { step: step.name, why: 'is done' }
}

/** The started step: done once published, healthy and soaked; else it publishes what its gates let through. */
function runStartedStep(walk: StepWalk, at: StepAt): void {
  const { rollout, revision, now } = walk.input
  const { index: i, step, progress: p, report, candidates } = at
  const soakLeft = p.lastPublish ? p.lastPublish.getTime() + rollout.soakMs - now.getTime() : 0
  if (p.unpublished.length === 0 && p.unhealthy.length === 0 && soakLeft <= 0) {
    report.state = 'done'
    report.reason = `${p.members.length} variant(s) published at ${revision} and healthy`
    return
  }
  const needsApproval =
    rollout.approval === 'manual' &&
    i > 0 &&
    candidates.length > 0 &&
    !rollout.approvals.some((a) => a.step === step.name && a.revision === revision)
  const approveText = `needs approval: kpt-variants rollout approve ${rolloutName(rollout)} ${step.name}`
  report.state = p.failed.length > 0 ? 'halted' : needsApproval ? 'waiting' : 'active'
  const limit = concurrencyLimit(step.maxConcurrent, p.members.length)
  const slots = Math.max(0, limit - p.unhealthy.length)
  const sorted = [...candidates].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
  sorted.forEach((v, k) => {
    if (walk.globalHold) walk.held.set(v.key, walk.globalHold)
    else if (needsApproval) walk.held.set(v.key, `waiting: step ${step.name} ${approveText}`)
    else if (k < slots) walk.publish.add(v.key)
    else walk.held.set(v.key, `waiting: ${concurrencyText(rollout, step.name, limit, p, sorted.slice(0, slots))}`)
  })
  report.publishing = sorted.filter((v) => walk.publish.has(v.key)).length
  report.reason =
    p.failed.length > 0
      ? failedText(p)
      : needsApproval
        ? approveText
        : activeText(p, report.publishing, soakLeft, rollout, revision)
  walk.blockedBy = { step: step.name, why: notDoneText(p, soakLeft, rollout, revision) }
}

/** The drafts of variants no step selects wait for a step that does. */
function holdUnmatched(walk: StepWalk, unmatched: readonly RolloutVariant[]): void {
  const { rollout } = walk.input
  for (const v of unmatched) {
    if (v.draft)
      walk.held.set(
        v.key,
        `held: no step of rollout ${rolloutName(rollout)} selects ${v.target.name}: add a step without \`targets\` to take the variants no other step selects`,
      )
  }
}

/** A decision for each variant with a draft waiting, in the input's order. */
function decisionsOf(walk: StepWalk, stepOf: ReadonlyMap<string, string>): VariantDecision[] {
  return walk.input.variants
    .filter((v) => v.draft)
    .map((v) => {
      const step = stepOf.get(v.key)
      const base = step === undefined ? { key: v.key } : { key: v.key, step }
      return walk.publish.has(v.key)
        ? { ...base, publish: true as const }
        : { ...base, publish: false as const, reason: walk.held.get(v.key)! }
    })
}

function stepProgress(list: RolloutVariant[], input: RolloutInput): StepProgress {
  const members = [...list].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
  const progress: StepProgress = { members, unpublished: [], unhealthy: [], failed: [], broken: [], atRevision: 0 }
  for (const variant of members) {
    if (variant.failure !== undefined) {
      progress.broken.push(variant)
      continue
    }
    const published = variant.published
    if (!published || published.upstream !== input.revision) {
      progress.unpublished.push(variant)
      continue
    }
    if (variant.draft) progress.unpublished.push(variant)
    progress.atRevision++
    if (!progress.lastPublish || published.time > progress.lastPublish) progress.lastPublish = published.time
    const health = targetHealth(variant.target, published, input.rollout.health)
    if (health.state === 'healthy') continue
    progress.unhealthy.push({ variant, health })
    if (health.state === 'failed') progress.failed.push({ variant, health })
  }
  return progress
}

/** The most a step may have published and not yet healthy: a percentage of its variants rounds down, but never below 1 (as Argo CD's maxUpdate). */
export function concurrencyLimit(max: MaxConcurrent | undefined, variants: number): number {
  if (!max) return Infinity
  if ('count' in max) return max.count
  return Math.max(1, Math.floor((variants * max.percent) / 100))
}

function rolloutState(
  rollout: Rollout,
  steps: readonly StepReport[],
  failed: StepProgress['failed'],
  windows: ReturnType<typeof windowsAt> | undefined,
  revision: string,
  progress: readonly StepProgress[],
): { state: RolloutState; reason: string } {
  const broken = steps.findIndex((s, i) => s.state === 'halted' && progress[i]!.broken.length > 0)
  if (failed.length === 0 && broken >= 0)
    return {
      state: 'halted',
      reason: `step ${steps[broken]!.name}: ${steps[broken]!.reason}: it and the steps after it wait until every one renders`,
    }
  if (failed.length > 0) {
    const first = failed[0]!
    const more = failed.length > 1 ? ` (and ${failed.length - 1} more)` : ''
    return {
      state: 'halted',
      reason: `${first.health.detail}${first.health.message ? `: ${first.health.message}` : ''}${more}: nothing is published until it recovers`,
    }
  }
  if (steps.every((s) => s.state === 'done')) return { state: 'complete', reason: `every step is done at ${revision}` }
  if (rollout.paused) return { state: 'paused', reason: pausedText(rollout) }
  if (windows && !windows.open) return { state: 'outside-window', reason: closedText(windows.next) }
  const current = steps.find((s) => s.state !== 'done')!
  return { state: 'progressing', reason: `step ${current.name}: ${current.reason}` }
}

function activeText(p: StepProgress, publishing: number, soakLeft: number, rollout: Rollout, revision: string): string {
  if (p.unpublished.length > 0) {
    const stuck = p.unpublished.filter((v) => !v.draft)
    const parts = [`${p.members.length - p.unpublished.length} of ${p.members.length} published`]
    if (publishing > 0) parts.push(`publishing ${publishing} now`)
    if (stuck.length > 0)
      parts.push(
        `${names(stuck.map((v) => v.target.name))} ${stuck.length === 1 ? 'has' : 'have'} no draft at ${revision} to publish`,
      )
    if (p.unhealthy.length > 0) parts.push(`waiting for ${names(p.unhealthy.map((u) => u.health.detail))}`)
    return parts.join('; ')
  }
  if (p.unhealthy.length > 0) return `waiting for ${names(p.unhealthy.map((u) => u.health.detail))}`
  return `soaking: ${formatDuration(soakLeft)} left of ${formatDuration(rollout.soakMs)} after the last publish (${formatRfc3339(p.lastPublish!)})`
}

/** Why the step after this one cannot start, completing "step eu starts after canary …". */
function notDoneText(p: StepProgress, soakLeft: number, rollout: Rollout, revision: string): string {
  if (p.failed.length > 0) return `is healthy: ${names(p.failed.map((f) => f.health.detail))}`
  if (p.unpublished.length > 0)
    return `is published at ${revision}: ${names(p.unpublished.map((v) => v.target.name))} ${p.unpublished.length === 1 ? 'is' : 'are'} not yet`
  if (p.unhealthy.length > 0) return `is healthy: ${names(p.unhealthy.map((u) => u.health.detail))}`
  return `has soaked ${formatDuration(rollout.soakMs)} since its last publish (${formatRfc3339(p.lastPublish!)}): ${formatDuration(soakLeft)} left`
}

/** Why a candidate of the started step waits for a place: those published and not yet healthy, and those this run publishes first. */
function concurrencyText(
  rollout: Rollout,
  step: string,
  limit: number,
  p: StepProgress,
  first: readonly RolloutVariant[],
): string {
  const unhealthy = p.unhealthy.map((u) => u.variant.target.name)
  const parts: string[] = []
  if (unhealthy.length > 0)
    parts.push(`${names(unhealthy)} ${unhealthy.length === 1 ? 'is' : 'are'} published and not yet healthy`)
  if (first.length > 0)
    parts.push(`${names(first.map((v) => v.target.name))} go${first.length === 1 ? 'es' : ''} first`)
  const pace = rollout.health ? '' : ', and without a health gate one batch a run'
  return `step ${step} publishes at most ${limit} at once${pace}: ${parts.join('; ')}`
}

function failedText(p: StepProgress): string {
  const first = p.failed[0]!
  const more = p.failed.length > 1 ? ` (and ${p.failed.length - 1} more)` : ''
  return `${first.health.detail}${first.health.message ? `: ${first.health.message}` : ''}${more}`
}

function brokenText(p: StepProgress): string {
  const first = p.broken[0]!
  const more = p.broken.length > 1 ? ` (and ${p.broken.length - 1} more)` : ''
  return `${first.target.name}'s variant cannot be rendered: ${first.failure}${more}`
}

function pausedText(rollout: Rollout): string {
  return `rollout ${rolloutName(rollout)} is paused: \`kpt-variants rollout resume ${rolloutName(rollout)}\` resumes it`
}

function closedText(next: { start: Date; window: { timeZone: string } } | undefined): string {
  if (!next) return "outside the rollout's windows, and none opens again"
  return `outside the rollout's windows: the next opens at ${formatRfc3339(next.start)} (${zonedTime(next.start, next.window.timeZone)})`
}

/** The Rollout as the CLI names it: `name`, or `namespace/name` outside the default namespace. */
export function rolloutName(rollout: Pick<Rollout, 'name' | 'namespace'>): string {
  return rollout.namespace && rollout.namespace !== 'default' ? `${rollout.namespace}/${rollout.name}` : rollout.name
}

/** `a, b, c and 2 more`. */
function names(list: readonly string[], shown = 3): string {
  if (list.length <= shown) return list.length === 2 ? `${list[0]} and ${list[1]}` : list.join(', ')
  return `${list.slice(0, shown).join(', ')} and ${list.length - shown} more`
}
