/**
 * The fleet's PackageVariantSets expanded by the fan-out transform itself
 * (pure), the first phase of a plan (plan.ts): the PackageVariants each set
 * makes, one target's failure isolated from the others, and the sets that
 * could not be expanded, completely or at all.
 */
import { runFanOut } from '../../functions/fan-out/index.js'
import type { Repository } from '../../functions/api/repository.js'
import { ResourceList } from '../../functions/krm/index.js'
import type { KubeObject } from '../../functions/krm/index.js'
import { findRepository, objectKey, repositoryKey } from '../fleet/fleet.js'
import type { Fleet } from '../fleet/fleet.js'
import type { FailureCode } from '../report/failure.js'
import type { VersionFollower } from './follow-versions.js'

/** The upstream revisions as fan-out reads them, and the upstream repositories that could not be read (see Upstreams). */
export interface SetSources {
  objects: readonly KubeObject[]
  /** `namespace|name` of a Repository -> why it could not be read. */
  problems: ReadonlyMap<string, string>
}

/** A set that could not be expanded, or one of its targets: a PlanFailure (plan.ts) of that set. */
export interface SetFailure {
  subject: string
  code: FailureCode
  message: string
  set: string
  target?: KubeObject
  downstream?: string
  downstreamRepo?: string
}

/** A PackageVariant to plan: one of the fleet's, or one a set made (`spec`: as fan-out rendered it) for a target. */
export interface Candidate {
  object: KubeObject
  set?: string
  spec?: Record<string, unknown>
  target?: KubeObject
}

/** What the fleet's sets expand to. */
export interface ExpandedSets {
  /** The PackageVariants they make, in order. */
  candidates: Candidate[]
  /** The fleet's PackageVariants a set owns (it updates, keeps or deletes them): none is planned as a standalone one. */
  claimed: Set<KubeObject>
  failures: SetFailure[]
  /** Sets that could not be expanded completely. */
  incomplete: Set<string>
  /** Each set's warnings about its upstream, by set: its variants carry them. */
  warnings: Map<string, string[]>
  /** Each set's targets whose kind is known but matched nothing, by set (see FleetPlan). */
  emptyMatches: Map<string, string[]>
}

/** Expands every set with the fan-out transform, the fleet's objects and the upstream revisions as its sources. */
export function expandSets(fleet: Fleet, upstreams: SetSources, follower: VersionFollower): ExpandedSets {
  const expanded: ExpandedSets = {
    candidates: [],
    claimed: new Set(),
    failures: [],
    incomplete: new Set(),
    warnings: new Map(),
    emptyMatches: new Map(),
  }
  const sources = [...fleet.objects, ...upstreams.objects]
  for (const fleetSet of fleet.sets) {
    const set = objectKey(fleetSet)
    const prepared = preparedSet(fleet, upstreams, follower, set, fleetSet)
    if ('failure' in prepared) {
      expanded.failures.push(prepared.failure)
      expanded.incomplete.add(set)
    } else expandSet(fleet, sources, set, prepared.object, expanded)
  }
  return expanded
}

/**
 * The set as fan-out is to expand it (the version it follows resolved), or
 * why it cannot be expanded at all: its upstream repository cannot be read,
 * or its version cannot be followed.
 */
function preparedSet(
  fleet: Fleet,
  upstreams: SetSources,
  follower: VersionFollower,
  set: string,
  fleetSet: KubeObject,
): { object: KubeObject } | { failure: SetFailure } {
  const upstreamName = fleetSet.get(['spec', 'upstream', 'repo'])
  const problem =
    typeof upstreamName === 'string'
      ? unreadable(upstreams, findRepository(fleet, fleetSet.namespace, upstreamName))
      : undefined
  const prepared = problem ? undefined : follower.prepareSet(set, fleetSet)
  if (problem || (prepared?.follows && 'failure' in prepared)) {
    return {
      failure: {
        subject: `PackageVariantSet ${set}`,
        message: problem
          ? `upstream repository ${JSON.stringify(upstreamName)} cannot be read: ${problem}`
          : (prepared as { failure: string }).failure,
        set,
        code: problem ? 'UpstreamNotFound' : (prepared as { code: FailureCode }).code,
      },
    }
  }
  return { object: prepared?.follows && 'object' in prepared ? prepared.object : fleetSet }
}

/** Expands one set, each target isolated from the others, into `expanded`: the PackageVariants it makes, and what failed. */
function expandSet(
  fleet: Fleet,
  sources: readonly KubeObject[],
  set: string,
  setObject: KubeObject,
  expanded: ExpandedSets,
): void {
  const fleetVariants = fleet.variants.filter((pv) => pv.namespace === setObject.namespace || pv.namespace === '')
  const rl = ResourceList.of([setObject, ...fleetVariants], setObject)
  const { summary, failures, emptyMatches } = runFanOut(
    rl,
    { sources },
    { isolateTargets: true, ...(fleet.servedKinds ? { servedKinds: fleet.servedKinds } : {}) },
  )
  if (emptyMatches.length > 0)
    expanded.emptyMatches.set(
      set,
      emptyMatches.map((e) => e.message),
    )
  expanded.warnings.set(
    set,
    rl.results.items
      .filter((r) => r.severity === 'warning' && r.field?.path.startsWith('spec.upstream'))
      .map((r) => `PackageVariantSet ${set}: ${r.message}`),
  )
  for (const failed of failures) {
    const failure = targetFailure(set, failed)
    // A target that rendered but cannot be named keeps just its package, one whose repository is missing that
    // repository's packages; otherwise any package of the set may be its.
    if (!failure.downstream && failure.downstreamRepo === undefined) expanded.incomplete.add(set)
    expanded.failures.push(failure)
  }
  if (!summary) return
  for (const object of [...summary.updated, ...summary.unchanged, ...summary.deleted]) expanded.claimed.add(object)
  for (const object of [...summary.created, ...summary.updated, ...summary.unchanged]) {
    const target = summary.targets.get(object)
    expanded.candidates.push({ object, set, spec: summary.specs.get(object)!, ...(target ? { target } : {}) })
  }
}

/** A failure of the set, or of one of its targets, as fan-out reports it. */
function targetFailure(set: string, failed: FanOutFailure): SetFailure {
  const { target, downstream, downstreamRepo, reason, message, targetObject } = failed
  const failure: SetFailure = {
    subject: `PackageVariantSet ${set}${target ? ` target ${target}` : ''}`,
    // Fan-out gives no reason only when it cannot read the set at all.
    code: reason ?? 'ValidationError',
    message,
    set,
  }
  if (targetObject) failure.target = targetObject
  if (downstream) failure.downstream = downstream
  else if (downstreamRepo !== undefined) failure.downstreamRepo = downstreamRepo
  return failure
}

/** A set's failure as fan-out reports it. */
type FanOutFailure = ReturnType<typeof runFanOut>['failures'][number]

/** Why an upstream repository could not be read, if it could not. */
export function unreadable(upstreams: SetSources, repo: Repository | undefined): string | undefined {
  return repo ? upstreams.problems.get(repositoryKey(repo)) : undefined
}
