/**
 * `config.porch.kpt.dev/v1alpha1 PackageVariant`: typed reading and Porch's
 * validation (`validatePackageVariant`, docs/upstream-behaviour.md, "PackageVariant validation"),
 * with its exact messages.
 */
import type { KubeObject } from '../krm/index.js'
import { Decoder } from './decode.js'
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
export function readPackageVariant(object: KubeObject): { ok: true; value: PackageVariant } | { ok: false; errors: FieldError[] } {
  const d = new Decoder(object)
  const spec: PackageVariantSpec = {}
  const warnings: FieldError[] = []
  d.isMapOrAbsent(['spec'])
  if (d.has(['spec', 'upstream']) && d.isMapOrAbsent(['spec', 'upstream'])) {
    spec.upstream = omitUndefined({
      repo: d.string(['spec', 'upstream', 'repo']),
      package: d.string(['spec', 'upstream', 'package']),
      ...readUpstreamRevision(d, ['spec', 'upstream'], warnings),
    })
  }
  if (d.has(['spec', 'downstream']) && d.isMapOrAbsent(['spec', 'downstream'])) {
    spec.downstream = omitUndefined({
      repo: d.string(['spec', 'downstream', 'repo']),
      package: d.string(['spec', 'downstream', 'package']),
    })
  }
  assign(spec, 'adoptionPolicy', d.string(['spec', 'adoptionPolicy']))
  assign(spec, 'deletionPolicy', d.string(['spec', 'deletionPolicy']))
  assign(spec, 'labels', d.stringMap(['spec', 'labels']))
  assign(spec, 'annotations', d.stringMap(['spec', 'annotations']))
  if (d.has(['spec', 'packageContext']) && d.isMapOrAbsent(['spec', 'packageContext'])) {
    spec.packageContext = omitUndefined({
      data: d.stringMap(['spec', 'packageContext', 'data']),
      removeKeys: d.stringList(['spec', 'packageContext', 'removeKeys']),
    })
  }
  if (d.has(['spec', 'pipeline']) && d.isMapOrAbsent(['spec', 'pipeline'])) {
    spec.pipeline = omitUndefined({
      mutators: readFunctions(d, ['spec', 'pipeline', 'mutators']),
      validators: readFunctions(d, ['spec', 'pipeline', 'validators']),
    })
  }
  const injectorCount = d.listLength(['spec', 'injectors'])
  if (injectorCount !== undefined) {
    spec.injectors = []
    for (let i = 0; i < injectorCount; i++) {
      const base = ['spec', 'injectors', i] as const
      if (!d.isMapOrAbsent(base)) continue
      spec.injectors.push(
        omitUndefined({
          group: d.string([...base, 'group']),
          version: d.string([...base, 'version']),
          kind: d.string([...base, 'kind']),
          name: d.string([...base, 'name']) ?? '',
        }),
      )
    }
  }
  if (d.errors.length > 0) return { ok: false, errors: d.errors }
  const value: PackageVariant = { object, name: object.name, namespace: object.namespace, spec }
  if (warnings.length > 0) value.warnings = warnings
  return { ok: true, value }
}

function readFunctions(d: Decoder, path: readonly (string | number)[]): Record<string, unknown>[] | undefined {
  const count = d.listLength(path)
  if (count === undefined) return undefined
  const out: Record<string, unknown>[] = []
  for (let i = 0; i < count; i++) {
    if (!d.isMapOrAbsent([...path, i])) continue
    out.push((d.object.get([...path, i]) ?? {}) as Record<string, unknown>)
  }
  return out
}

/** One validation rule: pushes Porch's messages for the fields it checks. */
export type PackageVariantRule = (pv: PackageVariant, errors: FieldError[]) => void

/** `spec.upstream` with repo and package (Porch's `isValidUpstream`). */
export const upstreamRule: PackageVariantRule = ({ spec }, errors) => {
  if (!spec.upstream) {
    errors.push({ field: 'spec.upstream', message: 'missing required field spec.upstream' })
    return
  }
  if (!spec.upstream.repo) errors.push({ field: 'spec.upstream.repo', message: 'missing required field spec.upstream.repo' })
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
    errors.push({ field: 'spec.adoptionPolicy', message: 'spec.adoptionPolicy field can only be "adoptNone" or "adoptExisting"' })
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
    if (!injector.name) errors.push({ field: `spec.injectors[${i}].name`, message: `spec.injectors[${i}].name must not be empty` })
  })
}

/** The fields of kpt's `Function` (kpt v1.0.0-beta.62.1, which Porch builds with). */
export const kptFunctionFields = ['image', 'exec', 'configPath', 'configMap', 'name', 'tag', 'selectors', 'exclude'] as const

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
export const packageVariantRules: readonly PackageVariantRule[] = [upstreamRule, downstreamRule, policiesRule, packageContextRule, injectorsRule, pipelineRule]

/** Runs rules (all of Porch's by default) and returns every error, in order. */
export function validatePackageVariant(pv: PackageVariant, rules: readonly PackageVariantRule[] = packageVariantRules): FieldError[] {
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

function omitUndefined<T extends object>(value: T): T {
  for (const key of Object.keys(value) as (keyof T)[]) if (value[key] === undefined) delete value[key]
  return value
}

function assign<T extends object, K extends keyof T>(target: T, key: K, value: T[K] | undefined): void {
  if (value !== undefined) target[key] = value
}
