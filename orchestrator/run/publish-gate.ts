/**
 * What a run may publish now: the one place `render --git --publish`,
 * `render --out` (with Rollouts), `publish REPO` and `publish --fleet` ask.
 * Gathers, for every planned variant that has (or gets) a draft, its target,
 * the upstream revision it renders, its latest published revision and its
 * draft, and hands them to rollout/pacing.ts.
 */
import type { Fleet } from '../fleet/fleet.js'
import type { RunOutput } from '../output/output.js'
import type { FleetPlan } from '../plan/plan.js'
import { readFleetRollouts, rolloutRevision } from '../rollout/gather.js'
import { rolloutTarget } from '../rollout/health.js'
import { pacePublishing } from '../rollout/pacing.js'
import type { PacingOptions, PublishCandidate, PublishDecision } from '../rollout/pacing.js'
import type { RolloutEvaluation } from '../rollout/types.js'
import type { RunReport, RolloutSummary, VariantReport } from '../report/report.js'
import { messagesOf } from '../report/failure.js'
import type { Pending } from './render-variant.js'
import type { Run } from './setup.js'

/** What this run changes: each path whose draft is (or, with --out, whose package is) this run's change. */
export interface RunChanges {
  /** Path -> what the change is. */
  changed: ReadonlyMap<string, { conflicts: boolean; removes: boolean; notReady?: string }>
  /** Paths whose render failed, with why: an older open draft of theirs is not published, and a rollout holds their step. */
  failed: ReadonlyMap<string, string>
}

/** The gate's answer: a decision per path with a draft, the rollouts' evaluations, and the fleet's Rollout problems. */
export interface Gate {
  decisions: Map<string, PublishDecision>
  evaluations: RolloutEvaluation[]
  /** Invalid Rollouts (`file: message`): their sets are held. */
  problems: string[]
  warnings: string[]
}

/** True when the fleet has a Rollout (else, with directory output, nothing needs pacing). */
export function hasRollouts(fleet: Fleet): boolean {
  return readFleetRollouts(fleet.objects).bySet.size > 0
}

/**
 * Decides what may be published of the plan's variants: those of `changes`
 * and, with an output that keeps drafts, those with an open draft.
 */
export async function gatePublishing(
  fleet: Fleet,
  plan: FleetPlan,
  output: RunOutput,
  changes: RunChanges,
  options: PacingOptions,
): Promise<Gate> {
  const rollouts = readFleetRollouts(fleet.objects)
  const paced = (set: string | undefined) => set !== undefined && !options.skipRollout && rollouts.bySet.has(set)
  const pathOf = (v: FleetPlan['variants'][number]) => `${v.downstream.repo}/${v.downstream.package}`
  const paths = plan.variants.map(pathOf)
  const holds = Boolean(options.holdConflicts || options.holdDeletions)
  const states = await output.packageStates(paths, {
    upstreams: new Set(plan.variants.filter((v) => paced(v.set)).map(pathOf)),
    drafts: new Set(holds ? paths.filter((p) => !changes.changed.has(p)) : []),
  })
  const candidates: PublishCandidate[] = plan.variants.map((v) => {
    const path = pathOf(v)
    const state = states.get(path)
    const change = changes.changed.get(path)
    const draft = change !== undefined || (output.drafts && state?.draft !== undefined && !changes.failed.has(path))
    const candidate: PublishCandidate = { path, key: v.key, revision: rolloutRevision(v.upstream), draft }
    const failure = changes.failed.get(path)
    if (failure !== undefined) candidate.failure = failure
    if (v.set) candidate.set = v.set
    if (v.target) candidate.target = rolloutTarget(v.target)
    if (state?.published) candidate.published = state.published
    const conflicts = change ? change.conflicts : state?.draft?.conflicts
    const removes = change ? change.removes : state?.draft?.removes
    const notReady = change ? change.notReady : state?.draft?.notReady
    if (conflicts) candidate.conflicts = true
    if (removes) candidate.removes = true
    if (notReady) candidate.notReady = notReady
    return candidate
  })
  // A paced set's target whose variant could not be planned holds its step: it is a variant of the set that failed.
  for (const f of plan.failures) {
    if (!f.set || !paced(f.set) || !f.target || plan.variants.some((v) => v.key === f.key)) continue
    candidates.push({
      path: f.downstream ?? `${f.subject}`,
      key: f.key ?? f.subject,
      set: f.set,
      target: rolloutTarget(f.target),
      revision: '',
      draft: false,
      failure: f.message,
    })
  }
  const { decisions, evaluations } = pacePublishing(candidates, rollouts, options)
  const problems = rollouts.problems.map((p) => `${p.file}: ${p.message}`)
  return { decisions, evaluations, problems, warnings: rollouts.warnings.map((p) => `${p.file}: ${p.message}`) }
}

/**
 * The held drafts' reasons, and the rollouts' state, as they stand after a
 * write published some: a gate decides once, before the write, so its reasons
 * speak of the drafts it is about to publish as not yet published ("step eu
 * starts after canary is published"); asked again, a held draft says what it
 * waits for now ("after canary is healthy: edge-01 has no Ready condition").
 * A draft the second asking would publish keeps its first reason: a run
 * publishes what it decided, one batch.
 */
export async function afterWrite(
  fleet: Fleet,
  plan: FleetPlan,
  output: RunOutput,
  held: ReadonlyMap<string, string>,
  options: PacingOptions,
  failed: ReadonlyMap<string, string> = new Map(),
): Promise<{ reasons: Map<string, string>; evaluations: RolloutEvaluation[] }> {
  const gate = await gatePublishing(fleet, plan, output, { changed: new Map(), failed }, options)
  const reasons = new Map<string, string>()
  for (const [path, reason] of held) {
    const now = gate.decisions.get(path)
    reasons.set(path, now && !now.publish ? now.reason : reason)
  }
  return { reasons, evaluations: gate.evaluations }
}

/** What a render may publish (git) or write (directory output) of its changes, the reports marked. */
export interface RunGate {
  /** With --git --publish: the packages published in the run's write, with the report each publish is recorded on. */
  publish: Map<string, VariantReport>
  /** The paths held back: with --out, their changes are not written. */
  held: Set<string>
  /** Asks again after the write (see afterWrite), updating the held reports' reasons and the run's rollouts. */
  settle(): Promise<void>
}

/**
 * The gate of a render: with `--git --publish` over every draft, with `--out`
 * over the changes of sets a Rollout paces (none without Rollouts). Each held
 * variant's report says why, and the run's report gets the rollouts' state.
 */
export async function gateRender(
  run: Run,
  pending: readonly Pending[],
  report: RunReport,
): Promise<RunGate | undefined> {
  const { settings, fleet, plan, output } = run
  const publishing = settings.git?.publish === true
  if (!publishing && (settings.git || settings.skipRollout || !hasRollouts(fleet))) return undefined
  const changed = new Map<string, { conflicts: boolean; removes: boolean; notReady?: string }>()
  const failed = new Map<string, string>()
  const reports = new Map<string, VariantReport>()
  for (const p of pending) {
    reports.set(p.path, p.report)
    if (p.report.status === 'failed') failed.set(p.path, messagesOf(p.report.reasons))
    // A dry run stages nothing: its changes are the variants it would create or update.
    else if ((p.staged || settings.dryRun) && (p.report.status === 'created' || p.report.status === 'updated'))
      changed.set(p.path, {
        conflicts: p.report.conflicts.length > 0,
        removes: false,
        // A directory has no drafts: only a draft waits for its readiness gates.
        ...(p.report.notReady && settings.git ? { notReady: p.report.notReady } : {}),
      })
  }
  const options: PacingOptions = {
    now: settings.now ?? new Date(),
    skipRollout: settings.skipRollout === true,
    holdConflicts: publishing && !settings.git?.publishConflicts,
    holdDeletions: publishing && !settings.git?.publishDeletions,
  }
  const gate = await gatePublishing(fleet, plan, output, { changed, failed }, options)
  report.problems.push(...gate.problems)
  if (gate.warnings.length > 0) report.warnings = [...(report.warnings ?? []), ...gate.warnings]
  if (gate.evaluations.length > 0) report.rollouts = gate.evaluations.map(summarizeRollout)
  const result: RunGate = {
    publish: new Map(),
    held: new Set(),
    async settle() {
      // Only a git run that published into a paced set has anything new to say.
      if (
        !publishing ||
        settings.dryRun ||
        gate.evaluations.length === 0 ||
        ![...result.publish.values()].some((r) => r.published)
      )
        return
      const held = new Map([...result.held].map((path) => [path, reports.get(path)!.held!]))
      const again = await afterWrite(fleet, plan, output, held, options, failed)
      for (const [path, reason] of again.reasons) reports.get(path)!.held = reason
      if (again.evaluations.length > 0) report.rollouts = again.evaluations.map(summarizeRollout)
    },
  }
  for (const [path, decision] of gate.decisions) {
    const r = reports.get(path)
    if (!r) continue
    if (decision.publish) {
      if (publishing) result.publish.set(path, r)
    } else {
      r.held = decision.reason
      result.held.add(path)
    }
  }
  return result
}

/** A rollout's evaluation as the run's report shows it. */
export function summarizeRollout(e: RolloutEvaluation): RolloutSummary {
  return {
    rollout: e.rollout,
    revision: e.revision,
    state: e.state,
    reason: e.reason,
    steps: e.steps.map((s) => ({ name: s.name, state: s.state, reason: s.reason })),
  }
}
