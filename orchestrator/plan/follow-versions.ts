/**
 * The plan's side of upstreams chosen by version (pure; upstream-version.ts
 * chooses): which sets follow versions, the revision their fan-out gets, and
 * each PackageVariant's own choice, by its constraint, its downstream
 * repository's prerelease policy and its cluster's Kubernetes version.
 *
 * A set follows versions when it carries the annotation, or when a target's
 * template sets it (the PackageVariants then carry it in `spec.annotations`):
 * a template's constraint wins over the set's for its targets. Fan-out
 * needs a revision for the set (Porch requires one, and its CEL `upstream` is
 * that revision): the highest the set's own constraint admits (prereleases
 * only when nothing else does), or without one the newest published.
 */
import type { PackageVariant } from '../../functions/api/package-variant.js'
import type { Repository } from '../../functions/api/repository.js'
import type { KubeObject } from '../../functions/krm/index.js'
import { findRepository, revisionKey } from '../fleet/fleet.js'
import type { Fleet } from '../fleet/fleet.js'
import { PolicyIndex, readFleetPolicies } from '../dependencies/policy.js'
import { clusterVersionOf } from '../dependencies/platform.js'
import { chooseVersion, declaredConstraint, templatesConstrain, upstreamVersionAnnotation } from './upstream-version.js'
import type { UpstreamVersion } from './upstream-version.js'
import type { FailureCode } from '../report/failure.js'
import type { PackageRevision, VersionIndex } from '../upstream/revisions.js'

const annotationField = `metadata.annotations[${upstreamVersionAnnotation}]`

/** A set as fan-out is to expand it. */
export type PreparedSet =
  | { follows: false }
  | { follows: true; object: KubeObject; constraint?: string }
  | { follows: true; failure: string; code: 'ValidationError' | 'UpstreamNotFound' }

/** A PackageVariant as it is to render: its upstream revision set when it follows a version. */
export type FollowedVariant =
  | { ok: true; pv: PackageVariant; version?: UpstreamVersion; warnings: string[] }
  | { ok: false; code: FailureCode; message: string }

export class VersionFollower {
  #policies: PolicyIndex | undefined
  readonly #sets = new Map<string, { constraint?: string }>()

  constructor(
    private readonly fleet: Fleet,
    private readonly revisions: ReadonlyMap<string, readonly PackageRevision[]>,
    private readonly versions: VersionIndex | undefined,
  ) {}

  /** A set's fan-out input: itself when it does not follow versions, else a copy naming the revision to expand with. */
  prepareSet(set: string, object: KubeObject): PreparedSet {
    const constraint = declaredConstraint(object)
    if (constraint === undefined && !templatesConstrain(object)) return { follows: false }
    const field =
      object.get(['spec', 'upstream', 'revision']) !== undefined
        ? 'spec.upstream.revision'
        : object.get(['spec', 'upstream', 'workspaceName']) !== undefined
          ? 'spec.upstream.workspaceName'
          : undefined
    const by =
      constraint !== undefined ? annotationField : `spec.targets[].template annotation ${upstreamVersionAnnotation}`
    if (field)
      return {
        follows: true,
        code: 'ValidationError',
        failure: `${by} chooses the upstream by version, and ${field} by revision: give one`,
      }
    const upstreamRepo = object.get(['spec', 'upstream', 'repo'])
    const pkg = object.get(['spec', 'upstream', 'package'])
    const repo =
      typeof upstreamRepo === 'string' ? findRepository(this.fleet, object.namespace, upstreamRepo) : undefined
    // Without a repository or package fan-out reports what is missing, as Porch does.
    if (!repo || typeof pkg !== 'string') return { follows: true, object }
    const key = revisionKey(repo, pkg)
    const revisions = this.revisions.get(key) ?? []
    let revision: PackageRevision | undefined
    if (constraint !== undefined) {
      const choose = (prereleases: 'Exclude' | 'Include') =>
        chooseVersion({
          upstream: `${repo.name}/${pkg}`,
          constraint,
          revisions,
          versions: this.versions?.get(key),
          prereleases,
        })
      const stable = choose('Exclude')
      const chosen = stable.ok ? stable : choose('Include')
      if (!chosen.ok) return { follows: true, code: chosen.code, failure: `${annotationField}: ${chosen.message}` }
      revision = chosen.revision
    } else {
      revision = revisions
        .filter((r) => r.kind === 'published')
        .sort((a, b) => a.revision - b.revision)
        .pop()
    }
    this.#sets.set(set, constraint !== undefined ? { constraint } : {})
    if (!revision) return { follows: true, object }
    const copy = object.clone()
    copy.set(['spec', 'upstream', 'revision'], revision.revision)
    return { follows: true, object: copy, ...(constraint !== undefined ? { constraint } : {}) }
  }

  /**
   * The PackageVariant with the revision its constraint chooses (none: as it
   * is). `set`: the set that made it; `target`: the object the set selected.
   */
  follow(
    pv: PackageVariant,
    context: { set?: string; target?: KubeObject; downstreamRepo: Repository; upstreamRepo: Repository },
  ): FollowedVariant {
    const fromSet = context.set !== undefined ? this.#sets.get(context.set) : undefined
    const templated = pv.spec.annotations?.[upstreamVersionAnnotation]
    const own = context.set === undefined ? declaredConstraint(pv.object) : undefined
    const constraint = templated ?? own ?? fromSet?.constraint
    if (constraint === undefined) {
      if (fromSet)
        return {
          ok: false,
          code: 'ValidationError',
          message: `its PackageVariantSet follows versions only where a target's template sets the annotation ${upstreamVersionAnnotation}, and this target's sets none`,
        }
      return { ok: true, pv, warnings: [] }
    }
    const upstream = pv.spec.upstream ?? {}
    // A set's own revision is the one this plan gave fan-out; anything else beside a constraint is the user's.
    if (!fromSet && (upstream.revision !== undefined || upstream.workspaceName !== undefined))
      return {
        ok: false,
        code: 'ValidationError',
        message: `${own !== undefined ? annotationField : `spec.annotations[${upstreamVersionAnnotation}]`} chooses the upstream by version, and spec.upstream.${upstream.revision !== undefined ? 'revision' : 'workspaceName'} by revision: give one`,
      }
    this.#policies ??= new PolicyIndex(readFleetPolicies(this.fleet.objects))
    if (this.#policies.fleet.errors.length > 0)
      return {
        ok: false,
        code: 'DependencyInputInvalid',
        message: `its DependencyPolicy cannot be read: ${this.#policies.fleet.errors.join('; ')}`,
      }
    const policy = this.#policies.of(context.downstreamRepo).policy
    const key = revisionKey(context.upstreamRepo, upstream.package ?? '')
    const chosen = chooseVersion({
      upstream: `${context.upstreamRepo.name}/${upstream.package ?? ''}`,
      constraint,
      revisions: this.revisions.get(key) ?? [],
      versions: this.versions?.get(key),
      prereleases: policy.resolver.prereleases,
      cluster: clusterVersionOf(policy.clusterVersion, context.target, context.downstreamRepo),
    })
    if (!chosen.ok) return { ok: false, code: chosen.code, message: chosen.message }
    const { workspaceName: _workspace, ...rest } = upstream
    const followed: PackageVariant = {
      ...pv,
      spec: { ...pv.spec, upstream: { ...rest, revision: chosen.revision.revision } },
    }
    // A set's PackageVariant is this plan's own object: it says the revision it renders, as the plan does.
    if (context.set !== undefined) pv.object.set(['spec', 'upstream', 'revision'], chosen.revision.revision)
    return { ok: true, pv: followed, version: chosen.version, warnings: chosen.warnings }
  }
}

/** The upstream packages whose published versions a plan reads: those of sets and PackageVariants that follow versions. */
export function followedUpstreams(fleet: Fleet): { repo: Repository; package: string }[] {
  const out = new Map<string, { repo: Repository; package: string }>()
  const add = (object: KubeObject) => {
    const repoName = object.get(['spec', 'upstream', 'repo'])
    const pkg = object.get(['spec', 'upstream', 'package'])
    if (typeof repoName !== 'string' || typeof pkg !== 'string') return
    const repo = findRepository(fleet, object.namespace, repoName)
    if (repo) out.set(revisionKey(repo, pkg), { repo, package: pkg })
  }
  for (const set of fleet.sets) if (declaredConstraint(set) !== undefined || templatesConstrain(set)) add(set)
  for (const pv of fleet.variants) {
    const annotations = pv.get(['spec', 'annotations'])
    if (
      declaredConstraint(pv) !== undefined ||
      (typeof annotations === 'object' && annotations !== null && upstreamVersionAnnotation in annotations)
    )
      add(pv)
  }
  return [...out.values()]
}
