/**
 * `kpt-variants.dev/v1alpha1 DependencyPolicy`: how `kpt-variants render`
 * plans the dependencies of the downstream repositories it selects (by name,
 * or by the Repository's labels): upgrades, downgrades, prereleases, whether
 * to install at all, automatic upgrades, pins that override what dependants
 * ask, the configuration a dependency package gets (package context,
 * injectors, pipeline, as a PackageVariantSet template gives them), and where
 * a cluster's Kubernetes version is read from. Every field is optional; the
 * reader returns the policy or the errors naming each field
 * (docs/package-dependencies.md, "Dependency policy").
 */
import { compileLabelSelector, dns1123LabelErrors } from '../krm/index.js'
import type { FieldPath, KubeObject, LabelSelector } from '../krm/index.js'
import { Decoder } from './decode.js'
import type { FieldError } from './decode.js'
import { dependenciesGroup } from './dependencies.js'
import type { PrereleasePolicy } from './dependency-types.js'
import { readLabelSelector, readTemplate } from './package-variant-set.js'
import type { PackageVariantTemplate } from './package-variant-set.js'

export const dependencyPolicyKind = 'DependencyPolicy'

/** The label that gives a cluster's Kubernetes version when no policy names another source. */
export const kubernetesVersionLabel = 'kpt-variants.dev/kubernetes-version'

/** A pin: the version, range or digest every dependant of `package` gets, whatever it asks. */
export interface DependencyPin {
  package: string
  version: string
  /** `spec.pins[i]`, for messages. */
  field: string
}

/** What a dependency package gets when a render installs it: a template's package context, injectors and pipeline. */
export interface ConfiguredDependency {
  package: string
  template: Pick<PackageVariantTemplate, 'packageContext' | 'injectors' | 'pipeline'>
  /** `spec.dependencies[i]`, for messages. */
  field: string
}

/** Where a cluster's Kubernetes version is read: a label of the target object (or Repository), or a field of the target object. */
export type ClusterVersionSource = { label: string } | { field: string[]; path: string }

/** A DependencyPolicy as read; absent fields are not set (another policy, or the default, decides them). */
export interface DependencyPolicyObject {
  object: KubeObject
  name: string
  namespace: string
  /** The repositories it names (the most specific selection). */
  repositories?: string[]
  /** The repositories whose labels it selects. */
  repositorySelector?: LabelSelector
  upgrades?: 'Allow' | 'Deny'
  downgrades?: 'Allow' | 'Deny'
  prereleases?: PrereleasePolicy
  /** false: the plan is only reported (Carvel's dependencies managed by the user). */
  install?: boolean
  /** true: dependencies are kept at the newest version every dependant accepts. */
  autoUpgrade?: boolean
  pins: DependencyPin[]
  dependencies: ConfiguredDependency[]
  clusterVersion?: ClusterVersionSource
}

/** True for a DependencyPolicy of any version. */
export function isDependencyPolicy(object: KubeObject): boolean {
  return object.isGroupKind(dependenciesGroup, dependencyPolicyKind)
}

const allowDeny = ['Allow', 'Deny'] as const
/** The template fields a configured dependency may set; the others are a PackageVariant's own. */
const dependencyTemplateFields = new Set(['package', 'packageContext', 'injectors', 'pipeline'])

/** Reads a DependencyPolicy; every field error is named. */
export function readDependencyPolicy(
  object: KubeObject,
): { ok: true; value: DependencyPolicyObject } | { ok: false; errors: FieldError[] } {
  const d = new Decoder(object)
  const policy: DependencyPolicyObject = {
    object,
    name: object.name,
    namespace: object.namespace,
    pins: [],
    dependencies: [],
  }
  d.isMapOrAbsent(['spec'])
  readRepositorySelection(d, policy)
  readPlanningRules(d, policy)
  readPins(d, policy)
  readConfiguredDependencies(d, policy)
  const source = d.map(['spec', 'clusterVersion'], (p) => readClusterVersion(d, p))
  if (source) policy.clusterVersion = source
  return d.errors.length > 0 ? { ok: false, errors: d.errors } : { ok: true, value: policy }
}

/** `spec.repositories` or `spec.repositorySelector`: the repositories the policy is for (one of them, not both). */
function readRepositorySelection(d: Decoder, policy: DependencyPolicyObject): void {
  const repositories = d.stringList(['spec', 'repositories'])
  if (repositories) {
    repositories.forEach((name, i) => {
      const errors = dns1123LabelErrors(name)
      if (errors.length > 0) d.fail(['spec', 'repositories', i], `is not a repository name: ${errors.join('; ')}`)
    })
    policy.repositories = repositories
  }
  const selector = d.map(['spec', 'repositorySelector'], (p) => readLabelSelector(d, p))
  if (selector) {
    const compiled = compileLabelSelector(selector)
    if (!compiled.ok) d.fail(['spec', 'repositorySelector'], `is not a valid label selector: ${compiled.error}`)
    policy.repositorySelector = selector
  }
  if (repositories && selector)
    d.fail(['spec', 'repositorySelector'], 'must not be set together with `spec.repositories`: give one')
}

/** The switches of planning: upgrades, downgrades, prereleases, install, autoUpgrade. */
function readPlanningRules(d: Decoder, policy: DependencyPolicyObject): void {
  for (const key of ['upgrades', 'downgrades'] as const) {
    const value = d.string(['spec', key])
    if (value === undefined) continue
    if ((allowDeny as readonly string[]).includes(value)) policy[key] = value as 'Allow' | 'Deny'
    else d.fail(['spec', key], `must be Allow or Deny, got ${JSON.stringify(value)}`)
  }
  const prereleases = readPrereleases(d, ['spec', 'prereleases'])
  if (prereleases) policy.prereleases = prereleases
  const install = d.boolean(['spec', 'install'])
  if (install !== undefined) policy.install = install
  const autoUpgrade = d.boolean(['spec', 'autoUpgrade'])
  if (autoUpgrade !== undefined) policy.autoUpgrade = autoUpgrade
}

/** `spec.pins`: at most one pin per package. */
function readPins(d: Decoder, policy: DependencyPolicyObject): void {
  const pinned = new Map<string, number>()
  d.each(['spec', 'pins'], (base, i) => {
    const pkg = d.requiredString([...base, 'package'])
    const version = d.requiredString([...base, 'version'])
    if (pkg === undefined || version === undefined) return
    const first = pinned.get(pkg)
    if (first !== undefined)
      d.fail([...base, 'package'], `duplicates \`spec.pins[${first}].package\` ${JSON.stringify(pkg)}`)
    else pinned.set(pkg, i)
    policy.pins.push({ package: pkg, version, field: `spec.pins[${i}]` })
  })
}

/** `spec.dependencies`: at most one per package, each with only the template fields a dependency may set. */
function readConfiguredDependencies(d: Decoder, policy: DependencyPolicyObject): void {
  const configured = new Map<string, number>()
  d.each(['spec', 'dependencies'], (base, i) => {
    const pkg = d.requiredString([...base, 'package'])
    for (const key of Object.keys(d.plainMap(base)))
      if (!dependencyTemplateFields.has(key))
        d.fail(
          [...base, key],
          'is not a field of a configured dependency (package, packageContext, injectors, pipeline)',
        )
    const template = readTemplate(d, base)
    if (pkg === undefined) return
    const first = configured.get(pkg)
    if (first !== undefined)
      d.fail([...base, 'package'], `duplicates \`spec.dependencies[${first}].package\` ${JSON.stringify(pkg)}`)
    else configured.set(pkg, i)
    template.injectors?.forEach((injector, j) => {
      if (!injector.name && !injector.nameExpr) d.fail([...base, 'injectors', j], 'must set `name` or `nameExpr`')
    })
    policy.dependencies.push({ package: pkg, template: dependencyTemplate(template), field: `spec.dependencies[${i}]` })
  })
}

/** The fields of a template that a dependency package gets, only those set. */
function dependencyTemplate(template: PackageVariantTemplate): ConfiguredDependency['template'] {
  const kept: ConfiguredDependency['template'] = {}
  if (template.packageContext) kept.packageContext = template.packageContext
  if (template.injectors) kept.injectors = template.injectors
  if (template.pipeline) kept.pipeline = template.pipeline
  return kept
}

function readPrereleases(d: Decoder, path: FieldPath): PrereleasePolicy | undefined {
  const value = d.object.get(path)
  if (value === undefined || value === null) return undefined
  if (value === 'Exclude' || value === 'Include') return value
  if (typeof value === 'object' && !Array.isArray(value)) {
    const identifiers = d.stringList([...path, 'identifiers']) ?? []
    if (identifiers.length === 0) d.fail([...path, 'identifiers'], 'must list at least one prerelease identifier')
    return { identifiers }
  }
  d.fail(path, 'must be Exclude, Include or {identifiers: [...]}')
  return undefined
}

function readClusterVersion(d: Decoder, base: FieldPath): ClusterVersionSource | undefined {
  const label = d.string([...base, 'label'])
  const field = d.string([...base, 'field'])
  if ((label === undefined) === (field === undefined)) {
    d.fail(base, 'must set one of `label` or `field`')
    return undefined
  }
  if (label !== undefined) return { label }
  const segments = field!.split('.')
  if (segments.some((s) => s === '')) {
    d.fail(
      [...base, 'field'],
      `must be a dotted field path such as spec.kubernetesVersion, got ${JSON.stringify(field)}`,
    )
    return undefined
  }
  return { field: segments, path: field! }
}
