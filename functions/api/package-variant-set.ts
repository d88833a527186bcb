/**
 * `config.porch.kpt.dev/v1alpha2 PackageVariantSet`: typed reading and Porch's
 * validation (`validatePackageVariantSet`, docs/upstream-behaviour.md, "PackageVariantSet validation"),
 * with its exact messages in its order.
 */
import type { FieldPath, KubeObject, LabelSelector, LabelSelectorRequirement } from '../krm/index.js'
import { compact, Decoder } from './decode.js'
import { readUpstreamRevision } from './upstream-revision.js'
import type { FieldError } from './decode.js'
import type { Upstream } from './package-variant.js'

export const packageVariantSetApiVersion = 'config.porch.kpt.dev/v1alpha2'
export const packageVariantSetKind = 'PackageVariantSet'

/** One `labelExprs` / `dataExprs` / `configMapExprs` entry; every field is optional (`*string`). */
export interface MapExpr {
  key?: string
  value?: string
  keyExpr?: string
  valueExpr?: string
}

/** A pipeline function template: the kpt function, plus `configMapExprs`. */
export interface FunctionTemplate {
  /** The function as written, without `configMapExprs` (key order kept). */
  fields: Record<string, unknown>
  image?: string
  name?: string
  configMap?: Record<string, string>
  configMapExprs?: MapExpr[]
}

/** An injector template: `name` or `nameExpr`. */
export interface InjectorTemplate {
  group?: string
  version?: string
  kind?: string
  name?: string
  nameExpr?: string
}

export interface DownstreamTemplate {
  repo?: string
  package?: string
  repoExpr?: string
  packageExpr?: string
}

export interface PackageContextTemplate {
  data?: Record<string, string>
  removeKeys?: string[]
  dataExprs?: MapExpr[]
  removeKeyExprs?: string[]
}

export interface PipelineTemplate {
  validators?: FunctionTemplate[]
  mutators?: FunctionTemplate[]
}

/** `spec.targets[].template`. Presence matters: `undefined` is Go's nil. */
export interface PackageVariantTemplate {
  downstream?: DownstreamTemplate
  adoptionPolicy?: string
  deletionPolicy?: string
  labels?: Record<string, string>
  labelExprs?: MapExpr[]
  annotations?: Record<string, string>
  annotationExprs?: MapExpr[]
  packageContext?: PackageContextTemplate
  pipeline?: PipelineTemplate
  injectors?: InjectorTemplate[]
}

export interface RepositoryTarget {
  name: string
  packageNames?: string[]
}

/** `objectSelector`: a GVK plus an inlined label selector; `name` is declared but ignored (as in Porch). */
export interface ObjectSelector extends LabelSelector {
  apiVersion: string
  kind: string
  name?: string
}

export interface Target {
  repositories?: RepositoryTarget[]
  repositorySelector?: LabelSelector
  objectSelector?: ObjectSelector
  template?: PackageVariantTemplate
}

export interface PackageVariantSetSpec {
  upstream?: Upstream
  targets?: Target[]
}

/** A PackageVariantSet read from an object. */
export interface PackageVariantSet {
  object: KubeObject
  apiVersion: string
  kind: string
  name: string
  namespace: string
  uid: string
  spec: PackageVariantSetSpec
  /** Fields read in an older form (a string `spec.upstream.revision`, `tag`), each naming the current one. */
  warnings: FieldError[]
}

/** True for any version of the PackageVariantSet kind. */
export function isPackageVariantSet(object: KubeObject): boolean {
  return object.isGroupKind('config.porch.kpt.dev', packageVariantSetKind)
}

/** Reads a PackageVariantSet; type errors (a map where a list belongs...) are field errors. */
export function readPackageVariantSet(
  object: KubeObject,
): { ok: true; value: PackageVariantSet } | { ok: false; errors: FieldError[] } {
  const d = new Decoder(object)
  const warnings: FieldError[] = []
  d.isMapOrAbsent(['spec'])
  const spec: PackageVariantSetSpec = compact({
    upstream: d.map(['spec', 'upstream'], (p) =>
      compact({
        repo: d.string([...p, 'repo']),
        package: d.string([...p, 'package']),
        ...readUpstreamRevision(d, p, warnings),
      }),
    ),
    targets: d.list(['spec', 'targets'], (p) => readTarget(d, p)),
  })
  const uid = d.string(['metadata', 'uid']) ?? ''
  if (d.errors.length > 0) return { ok: false, errors: d.errors }
  return {
    ok: true,
    value: {
      object,
      apiVersion: object.apiVersion,
      kind: object.kind,
      name: object.name,
      namespace: object.namespace,
      uid,
      spec,
      warnings,
    },
  }
}

function readTarget(d: Decoder, base: FieldPath): Target {
  return compact({
    repositories: d.list([...base, 'repositories'], (p) =>
      compact({ name: d.string([...p, 'name']) ?? '', packageNames: d.stringList([...p, 'packageNames']) }),
    ),
    repositorySelector: d.map([...base, 'repositorySelector'], (p) => readLabelSelector(d, p)),
    objectSelector: d.map([...base, 'objectSelector'], (p) =>
      compact({
        apiVersion: d.string([...p, 'apiVersion']) ?? '',
        kind: d.string([...p, 'kind']) ?? '',
        name: d.string([...p, 'name']),
        ...readLabelSelector(d, p),
      }),
    ),
    template: d.map([...base, 'template'], (p) => readTemplate(d, p)),
  })
}

/** A label selector (`matchLabels`, `matchExpressions`) at `base`. */
export function readLabelSelector(d: Decoder, base: FieldPath): LabelSelector {
  return compact({
    matchLabels: d.stringMap([...base, 'matchLabels']),
    matchExpressions: d.list([...base, 'matchExpressions'], (p): LabelSelectorRequirement =>
      compact({
        key: d.string([...p, 'key']) ?? '',
        operator: d.string([...p, 'operator']) ?? '',
        values: d.stringList([...p, 'values']),
      }),
    ),
  })
}

/** A PackageVariant template (`spec.targets[].template`'s fields) at `base`. */
export function readTemplate(d: Decoder, base: FieldPath): PackageVariantTemplate {
  return compact({
    downstream: d.map([...base, 'downstream'], (p) =>
      compact({
        repo: d.string([...p, 'repo']),
        package: d.string([...p, 'package']),
        repoExpr: d.string([...p, 'repoExpr']),
        packageExpr: d.string([...p, 'packageExpr']),
      }),
    ),
    adoptionPolicy: d.string([...base, 'adoptionPolicy']),
    deletionPolicy: d.string([...base, 'deletionPolicy']),
    labels: d.stringMap([...base, 'labels']),
    labelExprs: readMapExprs(d, [...base, 'labelExprs']),
    annotations: d.stringMap([...base, 'annotations']),
    annotationExprs: readMapExprs(d, [...base, 'annotationExprs']),
    packageContext: d.map([...base, 'packageContext'], (p) =>
      compact({
        data: d.stringMap([...p, 'data']),
        removeKeys: d.stringList([...p, 'removeKeys']),
        dataExprs: readMapExprs(d, [...p, 'dataExprs']),
        removeKeyExprs: d.stringList([...p, 'removeKeyExprs']),
      }),
    ),
    pipeline: d.map([...base, 'pipeline'], (p) =>
      compact({ validators: readFunctions(d, [...p, 'validators']), mutators: readFunctions(d, [...p, 'mutators']) }),
    ),
    injectors: d.list([...base, 'injectors'], (p) =>
      compact({
        group: d.string([...p, 'group']),
        version: d.string([...p, 'version']),
        kind: d.string([...p, 'kind']),
        name: d.string([...p, 'name']),
        nameExpr: d.string([...p, 'nameExpr']),
      }),
    ),
  })
}

function readMapExprs(d: Decoder, path: FieldPath): MapExpr[] | undefined {
  return d.list(path, (p) =>
    compact({
      key: d.string([...p, 'key']),
      value: d.string([...p, 'value']),
      keyExpr: d.string([...p, 'keyExpr']),
      valueExpr: d.string([...p, 'valueExpr']),
    }),
  )
}

function readFunctions(d: Decoder, path: FieldPath): FunctionTemplate[] | undefined {
  return d.list(path, (p) => {
    const fields = { ...d.plainMap(p) }
    delete fields['configMapExprs']
    return compact({
      fields,
      image: d.string([...p, 'image']),
      name: d.string([...p, 'name']),
      configMap: d.stringMap([...p, 'configMap']),
      configMapExprs: readMapExprs(d, [...p, 'configMapExprs']),
    })
  })
}

// --- validation (validate.go) ---

/** What a rule sees. */
export interface PackageVariantSetRuleContext {
  pvs: PackageVariantSet
  errors: FieldError[]
}

/** One validation rule: pushes Porch's messages, in Porch's order. */
export type PackageVariantSetRule = (ctx: PackageVariantSetRuleContext) => void

/** `spec.upstream` with package, repo and a revision or workspace name. */
export const upstreamRule: PackageVariantSetRule = ({ pvs, errors }) => {
  const upstream = pvs.spec.upstream
  if (!upstream) {
    errors.push({ field: 'spec.upstream', message: 'spec.upstream is a required field' })
    return
  }
  if (!upstream.package)
    errors.push({ field: 'spec.upstream.package', message: 'spec.upstream.package is a required field' })
  if (!upstream.repo) errors.push({ field: 'spec.upstream.repo', message: 'spec.upstream.repo is a required field' })
  if (!upstream.revision && !upstream.workspaceName) {
    errors.push({
      field: 'spec.upstream',
      message: 'either spec.upstream.revision or spec.upstream.workspaceName must be specified',
    })
  }
}

/** At least one target. */
export const targetsPresentRule: PackageVariantSetRule = ({ pvs, errors }) => {
  if (!pvs.spec.targets || pvs.spec.targets.length === 0) {
    errors.push({ field: 'spec.targets', message: 'must specify at least one item in spec.targets' })
  }
}

/** Each target: its selector kind, then its template (`validateTarget`). */
export const targetsRule: PackageVariantSetRule = ({ pvs, errors }) => {
  pvs.spec.targets?.forEach((target, i) => {
    const prefix = `spec.targets[${i}]`
    let count = 0
    if (target.repositories !== undefined) {
      count++
      if (target.repositories.length === 0) {
        errors.push({
          field: `${prefix}.repositories`,
          message: `${prefix}.repositories must not be an empty list if specified`,
        })
      }
      target.repositories.forEach((rt, j) => {
        const p = `${prefix}.repositories[${j}]`
        if (rt.name === '') errors.push({ field: `${p}.name`, message: `${p}.name cannot be empty` })
        rt.packageNames?.forEach((pn, k) => {
          if (pn === '')
            errors.push({ field: `${p}.packageNames[${k}]`, message: `${p}.packageNames[${k}] cannot be empty` })
        })
      })
    }
    if (target.repositorySelector !== undefined) count++
    if (target.objectSelector !== undefined) {
      count++
      if (target.objectSelector.apiVersion === '') {
        errors.push({
          field: `${prefix}.objectSelector.apiVersion`,
          message: `${prefix}.objectselector.apiVersion cannot be empty`,
        })
      }
      if (target.objectSelector.kind === '') {
        errors.push({
          field: `${prefix}.objectSelector.kind`,
          message: `${prefix}.objectselector.kind cannot be empty`,
        })
      }
    }
    if (count !== 1) {
      errors.push({
        field: prefix,
        message: `${prefix} must specify one of \`repositories\`, \`repositorySelector\`, or \`objectSelector\``,
      })
    }
    if (target.template) validateTemplate(target.template, `${prefix}.template`, errors)
  })
}

function validateTemplate(t: PackageVariantTemplate, f: string, errors: FieldError[]): void {
  if (t.adoptionPolicy !== undefined && t.adoptionPolicy !== 'adoptNone' && t.adoptionPolicy !== 'adoptExisting') {
    errors.push({
      field: `${f}.adoptionPolicy`,
      message: `${f}.adoptionPolicy can only be "adoptNone" or "adoptExisting"`,
    })
  }
  if (t.deletionPolicy !== undefined && t.deletionPolicy !== 'orphan' && t.deletionPolicy !== 'delete') {
    errors.push({ field: `${f}.deletionPolicy`, message: `${f}.deletionPolicy can only be "orphan" or "delete"` })
  }
  if (t.downstream) {
    if (t.downstream.repo !== undefined && t.downstream.repoExpr !== undefined) {
      errors.push({
        field: `${f}.downstream`,
        message: `${f} may specify only one of \`downstream.repo\` and \`downstream.repoExpr\``,
      })
    }
    if (t.downstream.package !== undefined && t.downstream.packageExpr !== undefined) {
      errors.push({
        field: `${f}.downstream`,
        message: `${f} may specify only one of \`downstream.package\` and \`downstream.packageExpr\``,
      })
    }
  }
  validateMapExprs(t.labelExprs, `${f}.labelExprs`, errors)
  validateMapExprs(t.annotationExprs, `${f}.annotationExprs`, errors)
  validateMapExprs(t.packageContext?.dataExprs, `${f}.packageContext.dataExprs`, errors)
  t.injectors?.forEach((injector, k) => {
    const p = `${f}.injectors[${k}]`
    if (injector.name !== undefined && injector.nameExpr !== undefined) {
      errors.push({ field: p, message: `${p} may specify only one of \`name\` and \`nameExpr\`` })
    }
    if (injector.name === undefined && injector.nameExpr === undefined) {
      errors.push({ field: p, message: `${p} must specify either \`name\` or \`nameExpr\`` })
    }
  })
  for (const list of ['validators', 'mutators'] as const) {
    t.pipeline?.[list]?.forEach((fn, k) => {
      const p = `${f}.pipeline.${list}[${k}]`
      if (!fn.image) errors.push({ field: `${p}.image`, message: `${p}.image must not be empty` })
      if (fn.name?.includes('.')) errors.push({ field: `${p}.name`, message: `${p}.name must not contain '.'` })
    })
  }
}

function validateMapExprs(exprs: readonly MapExpr[] | undefined, f: string, errors: FieldError[]): void {
  exprs?.forEach((me, j) => {
    const p = `${f}[${j}]`
    if (me.key !== undefined && me.keyExpr !== undefined) {
      errors.push({ field: p, message: `${p} may specify only one of \`key\` and \`keyExpr\`` })
    }
    if (me.value !== undefined && me.valueExpr !== undefined) {
      errors.push({ field: p, message: `${p} may specify only one of \`value\` and \`valueExpr\`` })
    }
  })
}

/** Porch's rules in its emission order. */
export const packageVariantSetRules: readonly PackageVariantSetRule[] = [upstreamRule, targetsPresentRule, targetsRule]

/** Runs the rules and returns every error, in Porch's order (combine with `combineErrors`). */
export function validatePackageVariantSet(
  pvs: PackageVariantSet,
  rules: readonly PackageVariantSetRule[] = packageVariantSetRules,
): FieldError[] {
  const ctx: PackageVariantSetRuleContext = { pvs, errors: [] }
  for (const rule of rules) rule(ctx)
  return ctx.errors
}
