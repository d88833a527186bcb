/**
 * The variant that renders a dependency step: a made-up PackageVariant naming
 * the step's source as its upstream and the step's path as its downstream.
 */
import type { PackageVariant } from '../../functions/api/package-variant.js'
import type { Repository } from '../../functions/api/repository.js'
import { KubeObject } from '../../functions/krm/index.js'
import { findRepository, revisionKey } from '../fleet/fleet.js'
import type { Fleet } from '../fleet/fleet.js'
import type { DependencyStep } from './dependency-steps.js'
import { resolveUpstream } from './plan.js'
import type { PlannedVariant, RevisionIndex } from './plan.js'

/**
 * The variant that renders a dependency step into repository `downstream`:
 * the step's source (a package revision of a Repository of the fleet,
 * resolved as a PackageVariant's upstream is) cloned, or its package updated,
 * at the step's path. Its PackageVariant is made up: it names only the
 * upstream and the downstream, and no mutation applies.
 */
export function dependencyVariant(
  step: DependencyStep,
  downstream: Repository,
  fleet: Pick<Fleet, 'repositories'>,
  revisions: RevisionIndex,
): { ok: true; variant: PlannedVariant } | { ok: false; message: string } {
  const source = step.source!
  const upstreamRepo = findRepository(fleet, downstream.namespace, source.repo)
  if (!upstreamRepo)
    return {
      ok: false,
      message: `its source names repository ${JSON.stringify(source.repo)}, and the fleet has no Repository of that name`,
    }
  const upstream = {
    repo: source.repo,
    package: source.package,
    ...(source.revision !== undefined ? { revision: source.revision } : {}),
    ...(source.workspaceName !== undefined ? { workspaceName: source.workspaceName } : {}),
  }
  const name = `dependency-${downstream.name}-${step.pkg.replaceAll('/', '-')}`
  const object = KubeObject.fromObject({
    apiVersion: 'config.porch.kpt.dev/v1alpha1',
    kind: 'PackageVariant',
    metadata: { name, namespace: downstream.namespace },
    spec: { upstream, downstream: { repo: downstream.name, package: step.pkg } },
  })
  const pv: PackageVariant = {
    object,
    name,
    namespace: downstream.namespace,
    spec: { upstream, downstream: { repo: downstream.name, package: step.pkg } },
  }
  const resolved = resolveUpstream(pv, revisions.get(revisionKey(upstreamRepo, source.package)) ?? [])
  if (!resolved.ok)
    return {
      ok: false,
      message: `its source ${source.repo}/${source.package} ${source.revision !== undefined ? `revision ${source.revision}` : (source.workspaceName ?? 'head')} cannot be found: ${resolved.message}`,
    }
  return {
    ok: true,
    variant: {
      pv,
      key: `${downstream.namespace}/${name}`,
      upstreamRepo,
      upstream: resolved.revision,
      downstreamRepo: downstream,
      downstream: { repo: downstream.name, package: step.pkg },
      warnings: [],
      dependency: { asDependency: step.asDependency, deletionPolicy: step.deletionPolicy },
    },
  }
}
