/**
 * The variant that renders a dependency step: a made-up PackageVariant naming
 * the step's source as its upstream and the step's path as its downstream,
 * and, when the repository's DependencyPolicy configures the package, the
 * package context, injectors and pipeline functions its configuration gives,
 * rendered as a PackageVariantSet template is (the same CEL variables:
 * `repository` is the downstream Repository, `target` the object the set
 * selected for a variant that needs the package, else the Repository,
 * `upstream` the source revision).
 */
import type { PackageVariant, PackageVariantSpec } from '../../functions/api/package-variant.js'
import type { PackageVariantSet } from '../../functions/api/package-variant-set.js'
import type { ConfiguredDependency } from '../../functions/api/dependency-policy.js'
import type { Repository } from '../../functions/api/repository.js'
import { CelEngine, defaultCelBudget, projectObject, renderSpec } from '../../functions/fan-out/index.js'
import { KubeObject } from '../../functions/krm/index.js'
import { findRepository, revisionKey } from '../fleet/fleet.js'
import type { Fleet } from '../fleet/fleet.js'
import { resolveUpstream } from '../plan/plan.js'
import type { PlannedVariant, RevisionIndex } from '../plan/plan.js'
import { packageRevisionObject } from '../upstream/revisions.js'
import type { PackageRevision } from '../upstream/revisions.js'
import type { DependencyStep } from './steps.js'

/** What configures a dependency: the policy's entry and the policy (`DependencyPolicy ns/name`). */
export interface Configuration {
  dependency: ConfiguredDependency
  from: string
}

/**
 * The variant that renders a dependency step into repository `downstream`:
 * the step's source (a package revision of a Repository of the fleet,
 * resolved as a PackageVariant's upstream is) cloned, or its package updated,
 * at the step's path. Its PackageVariant is made up: it names the upstream
 * and the downstream and, for a package installed as a dependency that the
 * policy configures, that configuration.
 */
export function dependencyVariant(
  step: DependencyStep,
  downstream: Repository,
  fleet: Pick<Fleet, 'repositories'>,
  revisions: RevisionIndex,
  options: { configured?: Configuration | undefined; target?: KubeObject | undefined } = {},
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
  const base = { upstream, downstream: { repo: downstream.name, package: step.pkg } }
  const probe: PackageVariant = { object: KubeObject.fromObject({}), name, namespace: downstream.namespace, spec: base }
  const resolved = resolveUpstream(probe, revisions.get(revisionKey(upstreamRepo, source.package)) ?? [])
  if (!resolved.ok)
    return { ok: false, message: `its source ${sourceName(source)} cannot be found: ${resolved.message}` }
  // A package someone installed on purpose is theirs: only one installed as a dependency is configured.
  const configured = step.asDependency ? options.configured : undefined
  let spec: PackageVariantSpec = base
  if (configured) {
    const made = configuration(configured, downstream, step.pkg, resolved.revision, options.target)
    if (!made.ok) return made
    spec = { ...base, ...made.spec }
  }
  return {
    ok: true,
    variant: {
      pv: madeUpPackageVariant(name, downstream.namespace, spec),
      key: `${downstream.namespace}/${name}`,
      upstreamRepo,
      upstream: resolved.revision,
      downstreamRepo: downstream,
      downstream: { repo: downstream.name, package: step.pkg },
      warnings: [],
      dependency: {
        asDependency: step.asDependency,
        deletionPolicy: step.deletionPolicy,
        ...(configured ? { configured: configured.from } : {}),
      },
    },
  }
}

/** The source as a message names it: `repo/package revision N`, or its workspace, or `head`. */
function sourceName(source: NonNullable<DependencyStep['source']>): string {
  return `${source.repo}/${source.package} ${source.revision !== undefined ? `revision ${source.revision}` : (source.workspaceName ?? 'head')}`
}

/** The PackageVariant a dependency's variant is planned as, though no such object is in the fleet. */
function madeUpPackageVariant(name: string, namespace: string, spec: PackageVariantSpec): PackageVariant {
  const object = KubeObject.fromObject({
    apiVersion: 'config.porch.kpt.dev/v1alpha1',
    kind: 'PackageVariant',
    metadata: { name, namespace },
    spec,
  })
  return { object, name, namespace, spec }
}

/** The policy's configuration of a dependency rendered for one repository, as fan-out renders a set's template. */
function configuration(
  configured: Configuration,
  downstream: Repository,
  pkg: string,
  upstream: PackageRevision,
  target: KubeObject | undefined,
):
  | { ok: true; spec: Pick<PackageVariantSpec, 'packageContext' | 'injectors' | 'pipeline'> }
  | { ok: false; message: string } {
  const { dependency, from } = configured
  const set: PackageVariantSet = {
    object: downstream.object,
    apiVersion: 'kpt-variants.dev/v1alpha1',
    kind: 'DependencyPolicy',
    name: from,
    namespace: downstream.namespace,
    uid: '',
    spec: {},
    warnings: [],
  }
  const rendered = renderSpec(
    {
      targetIndex: 0,
      template: dependency.template,
      repoDefault: downstream.name,
      packageDefault: pkg,
      object: target ?? downstream.object,
    },
    {
      pvs: set,
      upstream: projectObject(packageRevisionObject(upstream)),
      repositories: new Map([[downstream.name, downstream.object]]),
      engine: new CelEngine(defaultCelBudget),
      project: projectObject,
    },
  )
  if (!rendered.ok)
    return {
      ok: false,
      message: `its configuration (${from} ${dependency.field}) cannot be rendered: ${rendered.error.message.replace(/^template\./, `${dependency.field}.`)}`,
    }
  const out: Pick<PackageVariantSpec, 'packageContext' | 'injectors' | 'pipeline'> = {}
  const { packageContext, injectors, pipeline } = rendered.spec as PackageVariantSpec
  if (packageContext) out.packageContext = packageContext
  if (injectors) out.injectors = injectors
  if (pipeline) out.pipeline = pipeline
  return { ok: true, spec: out }
}
