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
import { runFanOut } from '../../functions/fan-out/index.js'
import { dns1123LabelErrors, ResourceList } from '../../functions/krm/index.js'
import type { KubeObject } from '../../functions/krm/index.js'
import { findRepository, objectKey, repositoryKey, revisionKey } from '../fleet/fleet.js'
import type { Fleet } from '../fleet/fleet.js'
import type { FailureCode } from '../report/failure.js'
import type { PackageRevision, VersionIndex } from '../upstream/revisions.js'
import { VersionFollower } from './follow-versions.js'
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
  const { revisions } = upstreams
  const unreadable = (repo: Repository | undefined) => (repo ? upstreams.problems.get(repositoryKey(repo)) : undefined)
  const failures: PlanFailure[] = []
  const incompleteSets = new Set<string>()
  const downstreams = new Map<string, string>()
  const fromSets: { object: KubeObject; set: string; spec?: Record<string, unknown>; target?: KubeObject }[] = []
  const claimed = new Set<KubeObject>()
  const setWarnings = new Map<string, string[]>()
  const emptyMatches = new Map<string, string[]>()
  const sources = [...fleet.objects, ...upstreams.objects]
  const follower = new VersionFollower(fleet, revisions, upstreams.versions)
  for (const fleetSet of fleet.sets) {
    const set = objectKey(fleetSet)
    const upstreamName = fleetSet.get(['spec', 'upstream', 'repo'])
    const problem =
      typeof upstreamName === 'string' ? unreadable(findRepository(fleet, fleetSet.namespace, upstreamName)) : undefined
    const prepared = problem ? undefined : follower.prepareSet(set, fleetSet)
    if (problem || (prepared?.follows && 'failure' in prepared)) {
      failures.push({
        subject: `PackageVariantSet ${set}`,
        message: problem
          ? `upstream repository ${JSON.stringify(upstreamName)} cannot be read: ${problem}`
          : (prepared as { failure: string }).failure,
        set,
        code: problem ? 'UpstreamNotFound' : (prepared as { code: FailureCode }).code,
      })
      incompleteSets.add(set)
      continue
    }
    const setObject = prepared?.follows && 'object' in prepared ? prepared.object : fleetSet
    const fleetVariants = fleet.variants.filter((pv) => pv.namespace === setObject.namespace || pv.namespace === '')
    const rl = ResourceList.of([setObject, ...fleetVariants], setObject)
    const {
      summary,
      failures: setFailures,
      emptyMatches: empties,
    } = runFanOut(
      rl,
      { sources },
      { isolateTargets: true, ...(fleet.servedKinds ? { servedKinds: fleet.servedKinds } : {}) },
    )
    if (empties.length > 0)
      emptyMatches.set(
        set,
        empties.map((e) => e.message),
      )
    setWarnings.set(
      set,
      rl.results.items
        .filter((r) => r.severity === 'warning' && r.field?.path.startsWith('spec.upstream'))
        .map((r) => `PackageVariantSet ${set}: ${r.message}`),
    )
    for (const { target, downstream, downstreamRepo, reason, message, targetObject } of setFailures) {
      const failure: PlanFailure = {
        subject: `PackageVariantSet ${set}${target ? ` target ${target}` : ''}`,
        // Fan-out gives no reason only when it cannot read the set at all.
        code: reason ?? 'ValidationError',
        message,
        set,
      }
      // A target that rendered but cannot be named keeps just its package, one whose repository is missing that
      // repository's packages; otherwise any package of the set may be its.
      if (targetObject) failure.target = targetObject
      if (downstream) failure.downstream = downstream
      else if (downstreamRepo !== undefined) failure.downstreamRepo = downstreamRepo
      else incompleteSets.add(set)
      failures.push(failure)
    }
    if (!summary) continue
    for (const object of [...summary.updated, ...summary.unchanged, ...summary.deleted]) claimed.add(object)
    for (const object of [...summary.created, ...summary.updated, ...summary.unchanged]) {
      const target = summary.targets.get(object)
      fromSets.push({ object, set, spec: summary.specs.get(object)!, ...(target ? { target } : {}) })
    }
  }
  const candidates = [
    ...fromSets,
    ...fleet.variants
      .filter((pv) => !claimed.has(pv))
      .map((object) => ({ object, set: undefined, spec: undefined, target: undefined })),
  ]

  const variants: PlannedVariant[] = []
  const byKey = new Map<string, PlannedVariant>()
  const byDownstream = new Map<string, PlannedVariant>()
  for (const { object, set, spec, target } of candidates) {
    const key = objectKey(object)
    const subject = `PackageVariant ${key}`
    const read = spec ? renderedVariant(object, spec) : readPackageVariantConfig(object, packageVariantRules)
    // A shard takes whole downstream repositories (their packages are planned together); a
    // PackageVariant that cannot be read is every shard's failure (so none deletes its package).
    const mine = !shard || !read.ok || inShard(read.pv.spec.downstream!.repo!, shard)
    const fail = (code: FailureCode, message: string, downstream?: string) => {
      if (!mine) return
      const failure: PlanFailure = { subject, code, message, key }
      if (set) failure.set = set
      if (target) failure.target = target
      if (downstream) failure.downstream = downstream
      failures.push(failure)
    }
    if (!read.ok) {
      fail('ValidationError', read.results.map((r) => r.message).join('; '))
      continue
    }
    const pv = read.pv
    const downstream = { repo: pv.spec.downstream!.repo!, package: pv.spec.downstream!.package! }
    const path = `${downstream.repo}/${downstream.package}`
    if (!downstreams.has(key)) downstreams.set(key, path)
    const nameProblem = downstreamNameProblem(downstream)
    if (nameProblem) {
      fail('ValidationError', nameProblem)
      continue
    }
    if (byKey.has(key)) {
      fail('DuplicateVariant', `another PackageVariant of the fleet has the same namespace and name`, path)
      continue
    }
    const other = byDownstream.get(path)
    if (other) {
      fail('DuplicateVariant', `PackageVariant ${other.key} renders the same downstream package ${path}`, path)
      continue
    }
    const downstreamRepo = findRepository(fleet, pv.namespace, downstream.repo)
    if (!downstreamRepo) {
      fail(
        'RepositoryNotFound',
        `downstream repository ${JSON.stringify(downstream.repo)} not found: no Repository of that name in the fleet`,
        path,
      )
      continue
    }
    const upstreamRepo = findRepository(fleet, pv.namespace, pv.spec.upstream!.repo!)
    if (!upstreamRepo) {
      fail(
        'UpstreamNotFound',
        `upstream repository ${JSON.stringify(pv.spec.upstream!.repo)} not found: no Repository of that name in the fleet`,
        path,
      )
      continue
    }
    const problem = unreadable(upstreamRepo)
    if (problem) {
      fail(
        'UpstreamNotFound',
        `upstream repository ${JSON.stringify(upstreamRepo.name)} cannot be read: ${problem}`,
        path,
      )
      continue
    }
    const followed = follower.follow(pv, {
      ...(set ? { set } : {}),
      ...(target ? { target } : {}),
      downstreamRepo,
      upstreamRepo,
    })
    if (!followed.ok) {
      fail(followed.code, followed.message, path)
      continue
    }
    const upstream = resolveUpstream(
      followed.pv,
      revisions.get(revisionKey(upstreamRepo, pv.spec.upstream!.package!)) ?? [],
    )
    if (!upstream.ok) {
      fail('UpstreamNotFound', upstream.message, path)
      continue
    }
    const warnings = [
      ...(set ? (setWarnings.get(set) ?? []) : []),
      ...(pv.warnings ?? []).map((w) => w.message),
      ...followed.warnings,
    ]
    const planned: PlannedVariant = {
      pv: followed.pv,
      key,
      upstreamRepo,
      upstream: upstream.revision,
      downstreamRepo,
      downstream,
      warnings,
    }
    if (followed.version) planned.version = followed.version
    if (set) planned.set = set
    if (target) planned.target = target
    if (mine) variants.push(planned)
    byKey.set(key, planned)
    byDownstream.set(path, planned)
  }
  return { variants, failures, incompleteSets, downstreams, emptyMatches }
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
