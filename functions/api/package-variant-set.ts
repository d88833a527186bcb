/**
 * `config.porch.kpt.dev/v1alpha2 PackageVariantSet`: typed reading and Porch's
 * validation (`validatePackageVariantSet`, docs/upstream-behaviour.md, "PackageVariantSet validation"),
 * with its exact messages in its order.
 */
import type { FieldPath, KubeObject, LabelSelector, LabelSelectorRequirement } from '../krm/index.js'
import { Decoder } from './decode.js'
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

type Path = readonly (string | number)[]

/** Reads a PackageVariantSet; type errors (a map where a list belongs...) are field errors. */
export function readPackageVariantSet(object: KubeObject): { ok: true; value: PackageVariantSet } | { ok: false; errors: FieldError[] } {
  const d = new Decoder(object)
  const spec: PackageVariantSetSpec = {}
  const warnings: FieldError[] = []
  d.isMapOrAbsent(['spec'])
  if (present(d, ['spec', 'upstream']) && d.isMapOrAbsent(['spec', 'upstream'])) {
    const u = ['spec', 'upstream']
    spec.upstream = compact({
      repo: d.string([...u, 'repo']),
      package: d.string([...u, 'package']),
      ...readUpstreamRevision(d, u, warnings),
    })
  }
  const targetCount = d.listLength(['spec', 'targets'])
  if (targetCount !== undefined) {
    spec.targets = []
    for (let i = 0; i < targetCount; i++) {
      const base = ['spec', 'targets', i]
      if (d.isMapOrAbsent(base)) spec.targets.push(readTarget(d, base))
    }
  }
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

function readTarget(d: Decoder, base: Path): Target {
  const target: Target = {}
  const reposCount = d.listLength([...base, 'repositories'])
  if (reposCount !== undefined) {
    target.repositories = []
    for (let j = 0; j < reposCount; j++) {
      const p = [...base, 'repositories', j]
      if (!d.isMapOrAbsent(p)) continue
      target.repositories.push(compact({ name: d.string([...p, 'name']) ?? '', packageNames: d.stringList([...p, 'packageNames']) }))
    }
  }
  if (present(d, [...base, 'repositorySelector']) && d.isMapOrAbsent([...base, 'repositorySelector'])) {
    target.repositorySelector = readLabelSelector(d, [...base, 'repositorySelector'])
  }
  if (present(d, [...base, 'objectSelector']) && d.isMapOrAbsent([...base, 'objectSelector'])) {
    const p = [...base, 'objectSelector']
    target.objectSelector = compact({
      apiVersion: d.string([...p, 'apiVersion']) ?? '',
      kind: d.string([...p, 'kind']) ?? '',
      name: d.string([...p, 'name']),
      ...readLabelSelector(d, p),
    })
  }
  if (present(d, [...base, 'template']) && d.isMapOrAbsent([...base, 'template'])) {
    target.template = readTemplate(d, [...base, 'template'])
  }
  return target
}

function readLabelSelector(d: Decoder, base: Path): LabelSelector {
  const selector: LabelSelector = {}
  const matchLabels = d.stringMap([...base, 'matchLabels'])
  if (matchLabels) selector.matchLabels = matchLabels
  const count = d.listLength([...base, 'matchExpressions'])
  if (count !== undefined) {
    selector.matchExpressions = []
    for (let i = 0; i < count; i++) {
      const p = [...base, 'matchExpressions', i]
      if (!d.isMapOrAbsent(p)) continue
      const req: LabelSelectorRequirement = { key: d.string([...p, 'key']) ?? '', operator: d.string([...p, 'operator']) ?? '' }
      const values = d.stringList([...p, 'values'])
      if (values) req.values = values
      selector.matchExpressions.push(req)
    }
  }
  return selector
}

function readTemplate(d: Decoder, base: Path): PackageVariantTemplate {
  const t: PackageVariantTemplate = {}
  if (present(d, [...base, 'downstream']) && d.isMapOrAbsent([...base, 'downstream'])) {
    const p = [...base, 'downstream']
    t.downstream = compact({
      repo: d.string([...p, 'repo']),
      package: d.string([...p, 'package']),
      repoExpr: d.string([...p, 'repoExpr']),
      packageExpr: d.string([...p, 'packageExpr']),
    })
  }
  assign(t, 'adoptionPolicy', d.string([...base, 'adoptionPolicy']))
  assign(t, 'deletionPolicy', d.string([...base, 'deletionPolicy']))
  assign(t, 'labels', d.stringMap([...base, 'labels']))
  assign(t, 'labelExprs', readMapExprs(d, [...base, 'labelExprs']))
  assign(t, 'annotations', d.stringMap([...base, 'annotations']))
  assign(t, 'annotationExprs', readMapExprs(d, [...base, 'annotationExprs']))
  if (present(d, [...base, 'packageContext']) && d.isMapOrAbsent([...base, 'packageContext'])) {
    const p = [...base, 'packageContext']
    t.packageContext = compact({
      data: d.stringMap([...p, 'data']),
      removeKeys: d.stringList([...p, 'removeKeys']),
      dataExprs: readMapExprs(d, [...p, 'dataExprs']),
      removeKeyExprs: d.stringList([...p, 'removeKeyExprs']),
    })
  }
  if (present(d, [...base, 'pipeline']) && d.isMapOrAbsent([...base, 'pipeline'])) {
    const p = [...base, 'pipeline']
    t.pipeline = compact({
      validators: readFunctions(d, [...p, 'validators']),
      mutators: readFunctions(d, [...p, 'mutators']),
    })
  }
  const injectorCount = d.listLength([...base, 'injectors'])
  if (injectorCount !== undefined) {
    t.injectors = []
    for (let i = 0; i < injectorCount; i++) {
      const p = [...base, 'injectors', i]
      if (!d.isMapOrAbsent(p)) continue
      t.injectors.push(
        compact({
          group: d.string([...p, 'group']),
          version: d.string([...p, 'version']),
          kind: d.string([...p, 'kind']),
          name: d.string([...p, 'name']),
          nameExpr: d.string([...p, 'nameExpr']),
        }),
      )
    }
  }
  return t
}

function readMapExprs(d: Decoder, path: Path): MapExpr[] | undefined {
  const count = d.listLength(path)
  if (count === undefined) return undefined
  const out: MapExpr[] = []
  for (let i = 0; i < count; i++) {
    const p = [...path, i]
    if (!d.isMapOrAbsent(p)) continue
    out.push(
      compact({
        key: d.string([...p, 'key']),
        value: d.string([...p, 'value']),
        keyExpr: d.string([...p, 'keyExpr']),
        valueExpr: d.string([...p, 'valueExpr']),
      }),
    )
  }
  return out
}

function readFunctions(d: Decoder, path: Path): FunctionTemplate[] | undefined {
  const count = d.listLength(path)
  if (count === undefined) return undefined
  const out: FunctionTemplate[] = []
  for (let i = 0; i < count; i++) {
    const p = [...path, i]
    if (!d.isMapOrAbsent(p)) continue
    const fields = { ...((d.object.get(p) ?? {}) as Record<string, unknown>) }
    delete fields['configMapExprs']
    out.push(
      compact({
        fields,
        image: d.string([...p, 'image']),
        name: d.string([...p, 'name']),
        configMap: d.stringMap([...p, 'configMap']),
        configMapExprs: readMapExprs(d, [...p, 'configMapExprs']),
      }),
    )
  }
  return out
}

/** Present and not null: what Go's JSON decoding turns into a non-nil pointer. */
function present(d: Decoder, path: FieldPath): boolean {
  const value = d.object.get(path)
  return value !== undefined && value !== null
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
  if (!upstream.package) errors.push({ field: 'spec.upstream.package', message: 'spec.upstream.package is a required field' })
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
        errors.push({ field: `${prefix}.repositories`, message: `${prefix}.repositories must not be an empty list if specified` })
      }
      target.repositories.forEach((rt, j) => {
        const p = `${prefix}.repositories[${j}]`
        if (rt.name === '') errors.push({ field: `${p}.name`, message: `${p}.name cannot be empty` })
        rt.packageNames?.forEach((pn, k) => {
          if (pn === '') errors.push({ field: `${p}.packageNames[${k}]`, message: `${p}.packageNames[${k}] cannot be empty` })
        })
      })
    }
    if (target.repositorySelector !== undefined) count++
    if (target.objectSelector !== undefined) {
      count++
      if (target.objectSelector.apiVersion === '') {
        errors.push({ field: `${prefix}.objectSelector.apiVersion`, message: `${prefix}.objectselector.apiVersion cannot be empty` })
      }
      if (target.objectSelector.kind === '') {
        errors.push({ field: `${prefix}.objectSelector.kind`, message: `${prefix}.objectselector.kind cannot be empty` })
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
    errors.push({ field: `${f}.adoptionPolicy`, message: `${f}.adoptionPolicy can only be "adoptNone" or "adoptExisting"` })
  }
  if (t.deletionPolicy !== undefined && t.deletionPolicy !== 'orphan' && t.deletionPolicy !== 'delete') {
    errors.push({ field: `${f}.deletionPolicy`, message: `${f}.deletionPolicy can only be "orphan" or "delete"` })
  }
  if (t.downstream) {
    if (t.downstream.repo !== undefined && t.downstream.repoExpr !== undefined) {
      errors.push({ field: `${f}.downstream`, message: `${f} may specify only one of \`downstream.repo\` and \`downstream.repoExpr\`` })
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
export function validatePackageVariantSet(pvs: PackageVariantSet, rules: readonly PackageVariantSetRule[] = packageVariantSetRules): FieldError[] {
  const ctx: PackageVariantSetRuleContext = { pvs, errors: [] }
  for (const rule of rules) rule(ctx)
  return ctx.errors
}

function compact<T extends object>(value: T): T {
  for (const key of Object.keys(value) as (keyof T)[]) if (value[key] === undefined) delete value[key]
  return value
}

function assign<T extends object, K extends keyof T>(target: T, key: K, value: T[K] | undefined): void {
  if (value !== undefined) target[key] = value
}
