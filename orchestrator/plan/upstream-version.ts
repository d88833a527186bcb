/**
 * Upstreams chosen by version (pure): a PackageVariant or PackageVariantSet
 * annotated `kpt-variants.dev/upstream-version: <constraint>` follows the
 * highest published revision of its upstream package whose version (the
 * PackageManifest `spec.version` at the tag `<package>/v<N>`) satisfies the
 * constraint, prereleases as its downstream repository's DependencyPolicy
 * admits them and, where the cluster's Kubernetes version is known, only
 * versions that declare they run on it (Carvel's kubernetesVersionSelection).
 * Porch's schema has no field for it, so it is an annotation, which every
 * Porch CRD keeps (docs/render.md, "Following versions").
 */
import type { PrereleasePolicy } from '../../functions/api/dependencies.js'
import type { KubeObject } from '../../functions/krm/index.js'
import {
  candidateAdmitted,
  compareVersions,
  parseConstraint,
  parseVersion,
  satisfies,
} from '../../functions/dependency-check/index.js'
import type { Constraint, Version } from '../../functions/dependency-check/index.js'
import type { PackageRevision, RevisionVersion } from '../upstream/revisions.js'
import type { ClusterVersion } from '../dependencies/platform.js'

/** The annotation that makes a PackageVariant, a PackageVariantSet or a set's template follow versions. */
export const upstreamVersionAnnotation = 'kpt-variants.dev/upstream-version'

export type { RevisionVersion, VersionIndex } from '../upstream/revisions.js'

/** The version a variant follows: its constraint, the version chosen, and the newest published one beyond the constraint. */
export interface UpstreamVersion {
  constraint: string
  version: string
  /** The newest published version (prereleases as the policy admits), when it is newer than the one chosen. */
  newest?: string
}

export type ChosenVersion =
  | { ok: true; revision: PackageRevision; version: UpstreamVersion; warnings: string[] }
  | { ok: false; code: 'ValidationError' | 'UpstreamNotFound'; message: string }

/** The constraint a set, or a PackageVariant the fleet holds, declares by annotation (`undefined`: none). */
export function declaredConstraint(object: KubeObject): string | undefined {
  return object.getAnnotation(upstreamVersionAnnotation)
}

/** True when some target template of a set may set the annotation (a static key of `annotations` or `annotationExprs`). */
export function templatesConstrain(set: KubeObject): boolean {
  const targets = set.get(['spec', 'targets'])
  if (!Array.isArray(targets)) return false
  return targets.some((t) => {
    const template = (t as { template?: { annotations?: unknown; annotationExprs?: unknown } } | null)?.template
    const annotations = template?.annotations
    const exprs = template?.annotationExprs
    return (
      (typeof annotations === 'object' && annotations !== null && upstreamVersionAnnotation in annotations) ||
      (Array.isArray(exprs) && exprs.some((e) => (e as { key?: unknown } | null)?.key === upstreamVersionAnnotation))
    )
  })
}

/** What chooseVersion reads; see there. */
type VersionChoice = Parameters<typeof chooseVersion>[0]

/** A published version of the upstream package: its revision, and the Kubernetes versions it says it runs on. */
interface Candidate {
  revision: PackageRevision
  version: Version
  kubernetes?: string
}

/** The candidates each filter leaves, in turn: Carvel's funnel. */
interface Funnel {
  /** Every version published, ascending. */
  all: Candidate[]
  /** Those whose prerelease the policy admits. */
  admitted: Candidate[]
  /** Those that satisfy the constraint. */
  matching: Candidate[]
  /** Those that run on the cluster's Kubernetes, where it is known. */
  runnable: Candidate[]
}

/**
 * The highest published revision whose version satisfies `constraint`; see
 * the module doc. Fails with every version it saw and how many each filter
 * left (Carvel's `all=N -> after-prereleases-filter=N -> ...` funnel).
 */
export function chooseVersion(input: {
  /** `repo/package`, for messages. */
  upstream: string
  constraint: string
  revisions: readonly PackageRevision[]
  versions: ReadonlyMap<number, RevisionVersion> | undefined
  prereleases: PrereleasePolicy
  cluster?: ClusterVersion
}): ChosenVersion {
  const parsed = parseConstraint(input.constraint)
  if (!parsed.ok)
    return { ok: false, code: 'ValidationError', message: `annotation ${upstreamVersionAnnotation}: ${parsed.error}` }
  const constraint = parsed.constraint
  const { all, undeclared } = publishedVersions(input)
  const funnel = filterCandidates(input, constraint, all)
  const { matching, runnable } = funnel
  const chosen = runnable[runnable.length - 1]
  if (!chosen)
    return {
      ok: false,
      code: 'UpstreamNotFound',
      message: notFoundMessage(input, constraint, { ...funnel, undeclared }),
    }
  const warnings: string[] = []
  if (chosen !== matching[matching.length - 1]) {
    const skipped = matching.slice(matching.indexOf(chosen) + 1).map((c) => `${c.version.raw} (${c.revision.ref})`)
    warnings.push(
      `upstream ${input.upstream}: ${skipped.join(', ')} ${skipped.length === 1 ? 'needs' : 'need'} another Kubernetes version than ${input.cluster!.source} runs (${input.cluster!.version}); following ${chosen.version.raw}`,
    )
  }
  const shown = all.filter((c) => candidateAdmitted(c.version, input.prereleases, []))
  const newest = shown[shown.length - 1]
  const version: UpstreamVersion = { constraint: input.constraint, version: chosen.version.raw }
  if (newest && compareVersions(newest.version, chosen.version) > 0) version.newest = newest.version.raw
  return { ok: true, revision: chosen.revision, version, warnings }
}

/** Each published version once, ascending, and the published revisions that declare none. */
function publishedVersions(input: VersionChoice): { all: Candidate[]; undeclared: string[] } {
  // Each version once: the later revision of a re-tagged version wins, as in the catalog.
  const byVersion = new Map<string, Candidate>()
  const undeclared: string[] = []
  for (const revision of input.revisions) {
    if (revision.kind !== 'published') continue
    const declared = input.versions?.get(revision.revision)
    const version = declared && parseVersion(declared.version, { coerce: false })
    if (!declared || !version?.semver) {
      undeclared.push(revision.ref)
      continue
    }
    const known = byVersion.get(version.raw)
    if (!known || known.revision.revision < revision.revision)
      byVersion.set(version.raw, {
        revision,
        version,
        ...(declared.kubernetesVersion ? { kubernetes: declared.kubernetesVersion } : {}),
      })
  }
  return { all: [...byVersion.values()].sort((a, b) => compareVersions(a.version, b.version)), undeclared }
}

/** The prerelease policy, the constraint, then the cluster's Kubernetes version, one after the other. */
function filterCandidates(input: VersionChoice, constraint: Constraint, all: Candidate[]): Funnel {
  const admitted = all.filter((c) => candidateAdmitted(c.version, input.prereleases, [constraint]))
  const matching = admitted.filter((c) => satisfies(c.version, constraint))
  const clusterVersion = input.cluster?.version ? parseVersion(input.cluster.version, { coerce: true }) : undefined
  const runnable = matching.filter((c) => {
    if (!c.kubernetes || !clusterVersion?.semver) return true
    const k = parseConstraint(c.kubernetes)
    return k.ok && satisfies(clusterVersion, k.constraint)
  })
  return { all, admitted, matching, runnable }
}

/** Why no version was chosen: every version seen, those without one, and how many each filter left. */
function notFoundMessage(
  input: VersionChoice,
  constraint: Constraint,
  funnel: Funnel & { undeclared: string[] },
): string {
  const { all, admitted, matching, runnable, undeclared } = funnel
  const seen = all.map((c) => `${c.version.raw} (${c.revision.ref})`)
  const stages = [
    `all=${all.length}`,
    `after-prereleases-filter=${admitted.length}`,
    `after-constraints-filter=${matching.length}`,
    ...(matching.length !== runnable.length
      ? [`after-kubernetes-filter=${runnable.length} (${input.cluster!.source} runs ${input.cluster!.version})`]
      : []),
  ]
  return (
    `no published version of ${input.upstream} satisfies ${JSON.stringify(input.constraint)}` +
    `${constraint.display !== input.constraint ? ` (${constraint.display})` : ''}: ` +
    `${seen.length > 0 ? `seen ${seen.join(', ')}` : 'no revision declares a version'}` +
    `${undeclared.length > 0 ? `; without a PackageManifest version: ${undeclared.join(', ')}` : ''}` +
    ` (${stages.join(' -> ')})`
  )
}
