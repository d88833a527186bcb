/**
 * `config.porch.kpt.dev/v1alpha1 PackageVariant`: typed reading and Porch's
 * validation (`validatePackageVariant`, docs/upstream-behaviour.md, "PackageVariant validation"),
 * with its exact messages.
 */
import type { KubeObject } from '../krm/index.js'
import { compact, Decoder } from './decode.js'
import type { FieldError } from './decode.js'
import { readUpstreamRevision } from './upstream-revision.js'

export const packageVariantGroup = 'config.porch.kpt.dev'
export const packageVariantApiVersion = 'config.porch.kpt.dev/v1alpha1'
export const packageVariantKind = 'PackageVariant'
/** Finalizer Porch puts on every PackageVariant. */
export const packageVariantFinalizer = 'config.porch.kpt.dev/packagevariants'

export interface Upstream {
  repo?: string
  package?: string
  revision?: number
  workspaceName?: string
}

export interface Downstream {
  repo?: string
  package?: string
}

export interface PackageContext {
  data?: Record<string, string>
  removeKeys?: string[]
}

/** One injector; `undefined` group/version/kind are wildcards, `""` group is the core group. */
export interface InjectionSelector {
  group?: string
  version?: string
  kind?: string
  name: string
}

export interface PackageVariantSpec {
  upstream?: Upstream
  downstream?: Downstream
  adoptionPolicy?: string
  deletionPolicy?: string
  labels?: Record<string, string>
  annotations?: Record<string, string>
  packageContext?: PackageContext
  /** The raw kpt pipeline (`mutators` / `validators`); functions are kept as plain objects. */
  pipeline?: { mutators?: Record<string, unknown>[]; validators?: Record<string, unknown>[] }
  injectors?: InjectionSelector[]
}

/** A PackageVariant read from an object, plus the object for results. */
export interface PackageVariant {
  object: KubeObject
  name: string
  namespace: string
  spec: PackageVariantSpec
  /** Fields read in an older form (a string `spec.upstream.revision`...), each naming the current one. */
  warnings?: FieldError[]
}

/** True for any version of the PackageVariant kind. */
export function isPackageVariant(object: KubeObject): boolean {
  return object.isGroupKind(packageVariantGroup, packageVariantKind)
}

/**
 * Reads a PackageVariant. Type errors (a list where a map belongs...) are
 * returned as field errors; Porch's semantic checks are `validatePackageVariant`.
 */
export function readPackageVariant(
  object: KubeObject,
): { ok: true; value: PackageVariant } | { ok: false; errors: FieldError[] } {
  const d = new Decoder(object)
  const warnings: FieldError[] = []
  d.isMapOrAbsent(['spec'])
  const spec: PackageVariantSpec = compact({
    upstream: d.map(['spec', 'upstream'], (p) =>
      compact({
        repo: d.string([...p, 'repo']),
        package: d.string([...p, 'package']),
        ...readUpstreamRevision(d, p, warnings),
      }),
    ),
    downstream: d.map(['spec', 'downstream'], (p) =>
      compact({ repo: d.string([...p, 'repo']), package: d.string([...p, 'package']) }),
    ),
    adoptionPolicy: d.string(['spec', 'adoptionPolicy']),
    deletionPolicy: d.string(['spec', 'deletionPolicy']),
    labels: d.stringMap(['spec', 'labels']),
    annotations: d.stringMap(['spec', 'annotations']),
    packageContext: d.map(['spec', 'packageContext'], (p) =>
      compact({ data: d.stringMap([...p, 'data']), removeKeys: d.stringList([...p, 'removeKeys']) }),
    ),
    pipeline: d.map(['spec', 'pipeline'], (p) =>
      compact({
        mutators: d.list([...p, 'mutators'], (f) => d.plainMap(f)),
        validators: d.list([...p, 'validators'], (f) => d.plainMap(f)),
      }),
    ),
    injectors: d.list(['spec', 'injectors'], (p) =>
      compact({
        group: d.string([...p, 'group']),
        version: d.string([...p, 'version']),
        kind: d.string([...p, 'kind']),
        name: d.string([...p, 'name']) ?? '',
      }),
    ),
  })
  if (d.errors.length > 0) return { ok: false, errors: d.errors }
  const value: PackageVariant = { object, name: object.name, namespace: object.namespace, spec }
  if (warnings.length > 0) value.warnings = warnings
  return { ok: true, value }
}

/** One validation rule: pushes Porch's messages for the fields it checks. */
export type PackageVariantRule = (pv: PackageVariant, errors: FieldError[]) => void

/** `spec.upstream` with repo and package (Porch's `isValidUpstream`). */
export const upstreamRule: PackageVariantRule = ({ spec }, errors) => {
  if (!spec.upstream) {
    errors.push({ field: 'spec.upstream', message: 'missing required field spec.upstream' })
    return
  }
  if (!spec.upstream.repo)
    errors.push({ field: 'spec.upstream.repo', message: 'missing required field spec.upstream.repo' })
  if (!spec.upstream.package) {
    errors.push({ field: 'spec.upstream.package', message: 'missing required field spec.upstream.package' })
  }
}

/** `spec.downstream` with repo and package. */
export const downstreamRule: PackageVariantRule = ({ spec }, errors) => {
  if (!spec.downstream) {
    errors.push({ field: 'spec.downstream', message: 'missing required field spec.downstream' })
    return
  }
  if (!spec.downstream.repo) {
    errors.push({ field: 'spec.downstream.repo', message: 'missing required field spec.downstream.repo' })
  }
  if (!spec.downstream.package) {
    errors.push({ field: 'spec.downstream.package', message: 'missing required field spec.downstream.package' })
  }
}

/** Adoption and deletion policies, after Porch's defaulting of `""`. */
export const policiesRule: PackageVariantRule = ({ spec }, errors) => {
  const adoption = spec.adoptionPolicy || 'adoptNone'
  const deletion = spec.deletionPolicy || 'delete'
  if (adoption !== 'adoptNone' && adoption !== 'adoptExisting') {
    errors.push({
      field: 'spec.adoptionPolicy',
      message: 'spec.adoptionPolicy field can only be "adoptNone" or "adoptExisting"',
    })
  }
  if (deletion !== 'orphan' && deletion !== 'delete') {
    errors.push({ field: 'spec.deletionPolicy', message: 'spec.deletionPolicy can only be "orphan" or "delete"' })
  }
}

/** Keys of the package context that kpt and Porch own. */
export const reservedPackageContextKeys = ['name', 'package-path'] as const

/** `spec.packageContext` must not set or remove `name` or `package-path`. */
export const packageContextRule: PackageVariantRule = ({ spec }, errors) => {
  const data = spec.packageContext?.data ?? {}
  const removeKeys = spec.packageContext?.removeKeys ?? []
  for (const key of reservedPackageContextKeys) {
    if (Object.prototype.hasOwnProperty.call(data, key)) {
      errors.push({
        field: 'spec.packageContext.data',
        message: `spec.packageContext.data: Invalid value: ${sortedJson(data)}: must not contain the key ${JSON.stringify(key)}`,
      })
    }
    for (const removed of removeKeys) {
      if (removed !== key) continue
      errors.push({
        field: 'spec.packageContext.removeKeys',
        message: `spec.packageContext.removeKeys: Invalid value: ${JSON.stringify(removeKeys)}: must not contain the key ${JSON.stringify(key)}`,
      })
    }
  }
}

/** Every injector needs a name. */
export const injectorsRule: PackageVariantRule = ({ spec }, errors) => {
  spec.injectors?.forEach((injector, i) => {
    if (!injector.name)
      errors.push({ field: `spec.injectors[${i}].name`, message: `spec.injectors[${i}].name must not be empty` })
  })
}

/** The fields of kpt's `Function` (kpt v1.0.0-beta.62.1, which Porch builds with). */
export const kptFunctionFields = [
  'image',
  'exec',
  'configPath',
  'configMap',
  'name',
  'tag',
  'selectors',
  'exclude',
] as const

/**
 * Pipeline function names must not contain `.` (an improvement over Porch,
 * which accepts them and then duplicates the functions on every reconcile).
 */
export const pipelineRule: PackageVariantRule = ({ spec }, errors) => {
  for (const list of ['validators', 'mutators'] as const) {
    spec.pipeline?.[list]?.forEach((fn, i) => {
      const name = fn['name']
      if (typeof name === 'string' && name.includes('.')) {
        errors.push({
          field: `spec.pipeline.${list}[${i}].name`,
          message: `spec.pipeline.${list}[${i}].name must not contain '.'`,
        })
      }
    })
  }
}

/** Porch's rules in its emission order, plus the pipeline-name rule. */
export const packageVariantRules: readonly PackageVariantRule[] = [
  upstreamRule,
  downstreamRule,
  policiesRule,
  packageContextRule,
  injectorsRule,
  pipelineRule,
]

/** Runs rules (all of Porch's by default) and returns every error, in order. */
export function validatePackageVariant(
  pv: PackageVariant,
  rules: readonly PackageVariantRule[] = packageVariantRules,
): FieldError[] {
  const errors: FieldError[] = []
  for (const rule of rules) rule(pv, errors)
  return errors
}

/** Porch's `combineErrors`: non-empty messages joined by `"; "`. */
export function combineErrors(errors: readonly FieldError[]): string {
  return errors
    .map((e) => e.message)
    .filter(Boolean)
    .join('; ')
}

/** Go's JSON encoding of a map: keys sorted. */
function sortedJson(map: Record<string, string>): string {
  const sorted: Record<string, string> = {}
  for (const key of Object.keys(map).sort()) sorted[key] = map[key]!
  return JSON.stringify(sorted)
}
