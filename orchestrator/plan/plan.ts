/**
 * The pure planning core: from a fleet and the upstream revisions to the
 * PackageVariants to render, each with its downstream and resolved upstream,
 * and the failures found on the way. Sets are expanded by the fan-out
 * transform itself; no I/O happens here.
 */
import { createHash } from 'node:crypto'
import { readPackageVariantConfig } from '../../functions/api/package-variant-config.js'
import { packageVariantRules, validatePackageVariant } from '../../functions/api/package-variant.js'
import type { PackageVariant } from '../../functions/api/package-variant.js'
import type { Repository } from '../../functions/api/repository.js'
import { dns1123LabelErrors } from '../../functions/krm/index.js'
import type { KubeObject } from '../../functions/krm/index.js'
import { findRepository, objectKey, revisionKey } from '../fleet/fleet.js'
import type { Fleet } from '../fleet/fleet.js'
import type { FailureCode } from '../report/failure.js'
import type { PackageRevision, VersionIndex } from '../upstream/revisions.js'
import { expandSets, unreadable } from './expand-sets.js'
import type { Candidate } from './expand-sets.js'
import { VersionFollower } from './follow-versions.js'
import type { FollowedVariant } from './follow-versions.js'
import type { UpstreamVersion } from './upstream-version.js'

/** `--shard I/N`: this run renders the variants whose identity hashes to I modulo N. */
export interface Shard {
  index: number
  count: number
}

/** One PackageVariant to render. */
export interface PlannedVariant {
  pv: PackageVariant
  /** `namespace/name`, or `name` without a namespace: the identity recorded in the package. */
  key: string
  /** The PackageVariantSet that generated it (`namespace/name`), if any. */
  set?: string
  /**
   * The object the set made it for (a WorkloadCluster its objectSelector
   * selected; the downstream Repository for `repositories` targets): a
   * Rollout's steps select variants by its labels, its health gate reads its status.
   */
  target?: KubeObject
  upstreamRepo: Repository
  upstream: PackageRevision
  downstreamRepo: Repository
  /** Downstream repository and package: the output is `<repo>/<package>`. */
  downstream: { repo: string; package: string }
  /** Fields of the PackageVariant (or its set) read in an older form, each naming the current one. */
  warnings: string[]
  /** Set when it follows a version (`kpt-variants.dev/upstream-version`): the constraint, the version chosen, the newest beyond it. */
  version?: UpstreamVersion
  /**
   * Set for a dependency a render installs or moves (dependencies/repository-plan.ts), not
   * a PackageVariant's package: its `pv` only names the upstream and the
   * downstream, and its package is marked as installed as a dependency
   * (`asDependency`), or left as someone installed it.
   */
  dependency?: {
    asDependency: boolean
    deletionPolicy: 'delete' | 'orphan'
    /** The DependencyPolicy whose configuration its PackageVariant carries (package context, injectors, pipeline). */
    configured?: string
  }
}

/** The report subject of a planned variant: `PackageVariant ns/name`, or `Dependency repo/package`. */
export function subjectOf(variant: Pick<PlannedVariant, 'key' | 'dependency' | 'downstream'>): string {
  return variant.dependency
    ? `Dependency ${variant.downstream.repo}/${variant.downstream.package}`
    : `PackageVariant ${variant.key}`
}

/** Something that could not be planned: a set, a target of a set, or a PackageVariant. */
export interface PlanFailure {
  /** What failed, for the summary: `PackageVariant ns/name`, `PackageVariantSet ns/name target WorkloadCluster "c"`. */
  subject: string
  /** Why, as a code (report/failure.ts); a set's own failure carries Porch's condition reason as fan-out reports it. */
  code: FailureCode
  message: string
  /** The set it belongs to; its packages are then never deleted in this run. */
  set?: string
  /** The downstream it would have rendered, when known; that package is then never deleted. */
  downstream?: string
  /** The downstream repository, when only that is known (it does not exist); its packages are never deleted. */
  downstreamRepo?: string
  /** The PackageVariant's identity, when it failed as one: packages it owns are kept. */
  key?: string
  /** The object a set's failed target selected: a Rollout holds the step it is in. */
  target?: KubeObject
}

/** The plan of a run. */
export interface FleetPlan {
  variants: PlannedVariant[]
  failures: PlanFailure[]
  /** Sets that could not be expanded completely: packages they own are kept. */
  incompleteSets: Set<string>
  /**
   * Where every PackageVariant that could be read renders (`<repo>/<package>`),
   * by its identity, in every shard: a package its owner no longer renders
   * (the PackageVariant was retargeted) is abandoned.
   */
  downstreams: Map<string, string>
  /** Each set's targets whose kind is known but matched nothing, by set: worth a warning, and the guard's reason. */
  emptyMatches: Map<string, string[]>
}

/** Where published revisions are looked up: `namespace|repo|package` → revisions. */
export type RevisionIndex = ReadonlyMap<string, readonly PackageRevision[]>

/** The published revisions of the upstream repositories, and the repositories that could not be read. */
export interface Upstreams {
  revisions: RevisionIndex
  /** The revisions as PackageRevision objects, for fan-out. */
  objects: readonly KubeObject[]
  /** `namespace|name` of a Repository → why it could not be read. */
  problems: ReadonlyMap<string, string>
  /** The versions published revisions declare, for the packages some variant follows by version (follow-versions.ts). */
  versions?: VersionIndex
}

/** Expands every set, reads every PackageVariant, resolves upstreams and checks downstreams. */
export function planFleet(fleet: Fleet, upstreams: Upstreams, shard?: Shard): FleetPlan {
  const follower = new VersionFollower(fleet, upstreams.revisions, upstreams.versions)
  const sets = expandSets(fleet, upstreams, follower)
  // The fleet's own PackageVariants, but those a set adopted.
  const standalone = fleet.variants.filter((pv) => !sets.claimed.has(pv)).map((object) => ({ object }))
  const planner = new VariantPlanner(fleet, upstreams, follower, sets.warnings, shard)
  for (const candidate of [...sets.candidates, ...standalone]) planner.plan(candidate)
  return {
    variants: planner.variants,
    failures: [...sets.failures, ...planner.failures],
    incompleteSets: sets.incomplete,
    downstreams: planner.downstreams,
    emptyMatches: sets.emptyMatches,
  }
}

/** Why a variant is not planned, and the downstream it would have rendered where that is known. */
interface Unplanned {
  code: FailureCode
  message: string
  downstream?: string
}

/**
 * Plans PackageVariants one by one, in order: each is read, checked and
 * resolved to its upstream revision, and the first to take an identity or
 * a downstream package has it.
 */
class VariantPlanner {
  readonly variants: PlannedVariant[] = []
  readonly failures: PlanFailure[] = []
  /** Where each PackageVariant that could be read renders, by identity (see FleetPlan). */
  readonly downstreams = new Map<string, string>()
  readonly #byKey = new Map<string, PlannedVariant>()
  readonly #byDownstream = new Map<string, PlannedVariant>()

  constructor(
    private readonly fleet: Fleet,
    private readonly upstreams: Upstreams,
    private readonly follower: VersionFollower,
    /** Each set's warnings, which its variants carry. */
    private readonly setWarnings: ReadonlyMap<string, string[]>,
    private readonly shard?: Shard,
  ) {}

  plan(candidate: Candidate): void {
    const { object, spec } = candidate
    const key = objectKey(object)
    const read = spec ? renderedVariant(object, spec) : readPackageVariantConfig(object, packageVariantRules)
    // A shard takes whole downstream repositories (their packages are planned together); a
    // PackageVariant that cannot be read is every shard's failure (so none deletes its package).
    const mine = !this.shard || !read.ok || inShard(read.pv.spec.downstream!.repo!, this.shard)
    const planned: PlannedVariant | Unplanned = read.ok
      ? this.#planned(candidate, key, read.pv)
      : { code: 'ValidationError', message: read.results.map((r) => r.message).join('; ') }
    if ('code' in planned) {
      if (mine) this.failures.push(variantFailure(candidate, key, planned))
      return
    }
    if (mine) this.variants.push(planned)
    this.#byKey.set(key, planned)
    this.#byDownstream.set(`${planned.downstream.repo}/${planned.downstream.package}`, planned)
  }

  #planned({ set, target }: Candidate, key: string, pv: PackageVariant): PlannedVariant | Unplanned {
    const downstream = { repo: pv.spec.downstream!.repo!, package: pv.spec.downstream!.package! }
    const path = `${downstream.repo}/${downstream.package}`
    if (!this.downstreams.has(key)) this.downstreams.set(key, path)
    const downstreamRepo = this.#downstreamRepo(key, pv, downstream, path)
    if ('code' in downstreamRepo) return downstreamRepo
    const resolved = this.#upstream(pv, { set, target, downstreamRepo }, path)
    if ('code' in resolved) return resolved
    const { followed, upstreamRepo, upstream } = resolved
    const warnings = [
      ...(set ? (this.setWarnings.get(set) ?? []) : []),
      ...(pv.warnings ?? []).map((w) => w.message),
      ...followed.warnings,
    ]
    const planned: PlannedVariant = {
      pv: followed.pv,
      key,
      upstreamRepo,
      upstream,
      downstreamRepo,
      downstream,
      warnings,
    }
    if (followed.version) planned.version = followed.version
    if (set) planned.set = set
    if (target) planned.target = target
    return planned
  }

  /** The downstream Repository, where the package's name is valid and no variant planned before has this identity or package. */
  #downstreamRepo(
    key: string,
    pv: PackageVariant,
    downstream: { repo: string; package: string },
    path: string,
  ): Repository | Unplanned {
    const nameProblem = downstreamNameProblem(downstream)
    if (nameProblem) return { code: 'ValidationError', message: nameProblem }
    if (this.#byKey.has(key))
      return {
        code: 'DuplicateVariant',
        message: `another PackageVariant of the fleet has the same namespace and name`,
        downstream: path,
      }
    const other = this.#byDownstream.get(path)
    if (other)
      return {
        code: 'DuplicateVariant',
        message: `PackageVariant ${other.key} renders the same downstream package ${path}`,
        downstream: path,
      }
    return (
      findRepository(this.fleet, pv.namespace, downstream.repo) ?? {
        code: 'RepositoryNotFound',
        message: `downstream repository ${JSON.stringify(downstream.repo)} not found: no Repository of that name in the fleet`,
        downstream: path,
      }
    )
  }

  /**
   * The upstream revision: its Repository is the fleet's and could be read,
   * the version the variant follows is chosen, and the revision it names is there.
   */
  #upstream(
    pv: PackageVariant,
    { set, target, downstreamRepo }: { set?: string; target?: KubeObject; downstreamRepo: Repository },
    path: string,
  ): { followed: FollowedVariant & { ok: true }; upstreamRepo: Repository; upstream: PackageRevision } | Unplanned {
    const upstreamRepo = findRepository(this.fleet, pv.namespace, pv.spec.upstream!.repo!)
    if (!upstreamRepo)
      return {
        code: 'UpstreamNotFound',
        message: `upstream repository ${JSON.stringify(pv.spec.upstream!.repo)} not found: no Repository of that name in the fleet`,
        downstream: path,
      }
    const problem = unreadable(this.upstreams, upstreamRepo)
    if (problem)
      return {
        code: 'UpstreamNotFound',
        message: `upstream repository ${JSON.stringify(upstreamRepo.name)} cannot be read: ${problem}`,
        downstream: path,
      }
    const followed = this.follower.follow(pv, {
      ...(set ? { set } : {}),
      ...(target ? { target } : {}),
      downstreamRepo,
      upstreamRepo,
    })
    if (!followed.ok) return { code: followed.code, message: followed.message, downstream: path }
    const upstream = resolveUpstream(
      followed.pv,
      this.upstreams.revisions.get(revisionKey(upstreamRepo, pv.spec.upstream!.package!)) ?? [],
    )
    if (!upstream.ok) return { code: 'UpstreamNotFound', message: upstream.message, downstream: path }
    return { followed, upstreamRepo, upstream: upstream.revision }
  }
}

/** A PackageVariant's failure, with the set and the target it was made for. */
function variantFailure({ set, target }: Candidate, key: string, unplanned: Unplanned): PlanFailure {
  const failure: PlanFailure = {
    subject: `PackageVariant ${key}`,
    code: unplanned.code,
    message: unplanned.message,
    key,
  }
  if (set) failure.set = set
  if (target) failure.target = target
  if (unplanned.downstream) failure.downstream = unplanned.downstream
  return failure
}

/**
 * A PackageVariant fan-out rendered, validated as Porch's controller would,
 * from the spec fan-out reports (the same fields Porch's API has), without
 * parsing its text back.
 */
function renderedVariant(
  object: KubeObject,
  spec: Record<string, unknown>,
): { ok: true; pv: PackageVariant } | { ok: false; results: { message: string }[] } {
  const pv: PackageVariant = { object, name: object.name, namespace: object.namespace, spec: spec }
  const errors = validatePackageVariant(pv, packageVariantRules)
  return errors.length === 0 ? { ok: true, pv } : { ok: false, results: errors }
}

/**
 * The upstream revision a PackageVariant names: by `workspaceName` as Porch
 * does, else by `revision` (the tag `<package>/v<revision>`), which Porch
 * ignores, else Porch's placeholder revision: the head of the upstream
 * repository's branch, which a render follows as it moves.
 */
export function resolveUpstream(
  pv: PackageVariant,
  revisions: readonly PackageRevision[],
): { ok: true; revision: PackageRevision } | { ok: false; message: string } {
  const upstream = pv.spec.upstream!
  const workspace = upstream.workspaceName ?? ''
  const revision = upstream.revision ?? 0
  let found: PackageRevision | undefined
  if (workspace !== '') found = revisions.find((r) => r.workspaceName === workspace)
  else if (revision > 0) found = revisions.find((r) => r.kind === 'published' && r.revision === revision)
  else found = revisions.find((r) => r.kind === 'placeholder')
  if (found) return { ok: true, revision: found }
  // Porch's text, with Go's %#v of the upstream.
  return {
    ok: false,
    message: `could not find upstream package revision &v1alpha1.Upstream{Repo:${JSON.stringify(upstream.repo ?? '')}, Package:${JSON.stringify(upstream.package ?? '')}, Revision:${revision}, WorkspaceName:${JSON.stringify(workspace)}}`,
  }
}

/**
 * A downstream repository must be a DNS-1123 label and a package a path of
 * DNS-1123 labels (Porch's rules), which also keeps the output inside its
 * directory: no `..`, no absolute path, no empty segment.
 */
export function downstreamNameProblem(downstream: { repo: string; package: string }): string | undefined {
  const repoErrors = dns1123LabelErrors(downstream.repo)
  if (repoErrors.length > 0)
    return `invalid downstream repository name ${JSON.stringify(downstream.repo)}: ${repoErrors.join('; ')}`
  for (const segment of downstream.package.split('/')) {
    const errors = dns1123LabelErrors(segment)
    if (errors.length > 0)
      return `invalid downstream package name ${JSON.stringify(downstream.package)}: ${JSON.stringify(segment)} ${errors.join('; ')}`
  }
  return undefined
}

/** True when `key` (a downstream repository's name, or a PackageVariant's identity) hashes into this shard (sha1, stable across runs and machines). */
export function inShard(key: string, shard: Shard): boolean {
  const hash = createHash('sha1').update(key).digest()
  return hash.readUInt32BE(0) % shard.count === shard.index
}

/**
 * The plan without the variants whose downstream repository could not be
 * opened: each fails with the reason, and nothing of that repository is
 * deleted. Every thread removes the same ones, so shares stay aligned.
 */
export function withoutUnavailable(plan: FleetPlan, unavailable: Readonly<Record<string, string>>): FleetPlan {
  if (Object.keys(unavailable).length === 0) return plan
  const failures = [...plan.failures]
  const variants = plan.variants.filter((v) => {
    const reason = unavailable[v.downstream.repo]
    if (reason === undefined) return true
    failures.push({
      subject: `PackageVariant ${v.key}`,
      code: 'DownstreamUnavailable',
      message: `downstream repository ${JSON.stringify(v.downstream.repo)}: ${reason}`,
      key: v.key,
      downstream: `${v.downstream.repo}/${v.downstream.package}`,
      ...(v.set ? { set: v.set } : {}),
      ...(v.target ? { target: v.target } : {}),
    })
    return false
  })
  for (const repo of Object.keys(unavailable))
    failures.push({
      subject: `Repository ${repo}`,
      code: 'DownstreamUnavailable',
      message: unavailable[repo]!,
      downstreamRepo: repo,
    })
  return { ...plan, variants, failures }
}
