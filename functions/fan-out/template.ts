/**
 * Template rendering (Porch's `renderPackageVariantSpec`; docs/upstream-behaviour.md, "Templates and CEL"): the
 * PackageVariant spec for one unrolled target, with CEL expressions evaluated
 * and map expressions overlaid.
 */
import type {
  FunctionTemplate,
  InjectorTemplate,
  MapExpr,
  PackageContextTemplate,
  PackageVariantSet,
  PipelineTemplate,
} from '../api/package-variant-set.js'
import type { KubeObject } from '../krm/index.js'
import type { CelBindings, CelEngine } from './cel.js'
import type { PvContext } from './targets.js'

/** A rendered PackageVariant spec, keys in Go's field order. */
export type RenderedSpec = Record<string, unknown>

/** A render error: Porch's message (`template.downstream.repoExpr: ...`) and the template field it names. */
export interface RenderError {
  message: string
  /** Path below `spec.targets[i].`, e.g. `template.labelExprs[0].valueExpr`; undefined for a missing Repository. */
  field: string | undefined
  /** The downstream repository, when the failure is that it does not exist. */
  repo?: string
}

/** What rendering needs besides the target. */
export interface RenderInputs {
  pvs: PackageVariantSet
  /** The upstream PackageRevision, projected. */
  upstream: Map<string, unknown>
  repositories: ReadonlyMap<string, KubeObject>
  engine: CelEngine
  /** Projections of objects, cached per object. */
  project: (object: KubeObject) => Map<string, unknown>
}

class RenderFailure extends Error {
  constructor(readonly error: RenderError) {
    super(error.message)
  }
}

/** Renders one target's spec, or the first error in Porch's evaluation order. */
export function renderSpec(
  ctx: PvContext,
  inputs: RenderInputs,
): { ok: true; spec: RenderedSpec } | { ok: false; error: RenderError } {
  try {
    return { ok: true, spec: render(ctx, inputs) }
  } catch (err) {
    if (err instanceof RenderFailure) return { ok: false, error: err.error }
    throw err
  }
}

function render(ctx: PvContext, inputs: RenderInputs): RenderedSpec {
  const spec: RenderedSpec = {
    upstream: upstreamSpec(inputs.pvs),
    downstream: downstream(ctx.repoDefault, ctx.packageDefault),
  }
  const t = ctx.template
  if (!t) return spec
  const bindings = celBindings(ctx, inputs)
  const ev = evaluator(inputs.engine, bindings)

  const d = t.downstream
  const repo = chooseName(ctx.repoDefault, d?.repo, 'template.downstream.repoExpr', d?.repoExpr, ev)
  bindings.repository = inputs.project(loadRepository(inputs, repo))
  const pkg = chooseName(ctx.packageDefault, d?.package, 'template.downstream.packageExpr', d?.packageExpr, ev)
  spec['downstream'] = downstream(repo, pkg)

  if (t.adoptionPolicy) spec['adoptionPolicy'] = t.adoptionPolicy
  if (t.deletionPolicy) spec['deletionPolicy'] = t.deletionPolicy
  setIf(spec, 'labels', overlay('template.labelExprs', t.labels, t.labelExprs, ev))
  setIf(spec, 'annotations', overlay('template.annotationExprs', t.annotations, t.annotationExprs, ev))
  if (t.packageContext) spec['packageContext'] = renderPackageContext(t.packageContext, ev)
  if (t.pipeline) setIf(spec, 'pipeline', renderPipeline(t.pipeline, ev))
  if (t.injectors && t.injectors.length > 0) spec['injectors'] = renderInjectors(t.injectors, ev)
  return spec
}

/** The CEL variables of a target: its defaults, the upstream and the target object (`repository` is added later). */
function celBindings(ctx: PvContext, inputs: RenderInputs): CelBindings {
  return {
    repoDefault: ctx.repoDefault,
    packageDefault: ctx.packageDefault,
    upstream: inputs.upstream,
    target: ctx.object
      ? inputs.project(ctx.object)
      : new Map<string, unknown>([
          ['repo', ctx.repoDefault],
          ['package', ctx.packageDefault],
        ]),
  }
}

/** Evaluates an expression of the template to a string; a failure ends the render, naming the field. */
function evaluator(engine: CelEngine, bindings: CelBindings): Evaluate {
  return (field, expr) => {
    const result = engine.evalString(expr, bindings)
    if (!result.ok) throw new RenderFailure({ message: `${field}: ${result.error}`, field })
    return result.value
  }
}

/** A downstream repository or package name: the expression's value, else the literal, else the default. */
function chooseName(
  fallback: string,
  literal: string | undefined,
  field: string,
  expr: string | undefined,
  ev: Evaluate,
): string {
  let name = fallback
  if (literal) name = literal
  if (expr) name = ev(field, expr)
  return name
}

/** The downstream Repository object; a render failure when there is none of that name. */
function loadRepository(inputs: RenderInputs, repo: string): KubeObject {
  const repository = inputs.repositories.get(repo)
  if (!repository)
    throw new RenderFailure({
      message: `repository ${JSON.stringify(repo)} could not be loaded`,
      field: undefined,
      repo,
    })
  return repository
}

function renderPackageContext(pc: PackageContextTemplate, ev: Evaluate): Record<string, unknown> {
  const packageContext: Record<string, unknown> = {}
  setIf(packageContext, 'data', overlay('template.packageContext.dataExprs', pc.data, pc.dataExprs, ev))
  const removeKeys = new Set(pc.removeKeys ?? [])
  pc.removeKeyExprs?.forEach((expr, i) => removeKeys.add(ev(`template.packageContext.removeKeyExprs[${i}]`, expr)))
  // Go's sort.Strings: bytewise ascending.
  if (removeKeys.size > 0) packageContext['removeKeys'] = [...removeKeys].sort(compareBytes)
  return packageContext
}

/** The rendered validators and mutators; undefined when both are empty (Go's `omitempty`). */
function renderPipeline(template: PipelineTemplate, ev: Evaluate): Record<string, unknown> | undefined {
  const validators = renderFunctions('template.pipeline.validators', template.validators, ev)
  const mutators = renderFunctions('template.pipeline.mutators', template.mutators, ev)
  if (validators.length === 0 && mutators.length === 0) return undefined
  const pipeline: Record<string, unknown> = {}
  if (validators.length > 0) pipeline['validators'] = validators
  if (mutators.length > 0) pipeline['mutators'] = mutators
  return pipeline
}

function renderInjectors(injectors: readonly InjectorTemplate[], ev: Evaluate): Record<string, unknown>[] {
  return injectors.map((inj, i) => {
    const out: Record<string, unknown> = {}
    if (inj.group !== undefined) out['group'] = inj.group
    if (inj.version !== undefined) out['version'] = inj.version
    if (inj.kind !== undefined) out['kind'] = inj.kind
    let name = inj.name ?? ''
    if (inj.nameExpr) name = ev(`template.injectors[${i}].nameExpr`, inj.nameExpr)
    out['name'] = name
    return out
  })
}

type Evaluate = (field: string, expr: string) => string

/**
 * Porch's `copyAndOverlayMapExpr`: the static map, then each entry in order
 * (an expression wins over its static key or value; later entries win).
 * An empty result is undefined (the field is omitted). Keys are sorted, as
 * Go's JSON encoding of a map is.
 */
export function overlay(
  field: string,
  base: Readonly<Record<string, string>> | undefined,
  exprs: readonly MapExpr[] | undefined,
  ev: Evaluate,
): Record<string, string> | undefined {
  const out = new Map<string, string>(Object.entries(base ?? {}))
  exprs?.forEach((me, i) => {
    let k = me.key ?? ''
    if (me.keyExpr) k = ev(`${field}[${i}].keyExpr`, me.keyExpr)
    let v = me.value ?? ''
    if (me.valueExpr) v = ev(`${field}[${i}].valueExpr`, me.valueExpr)
    out.set(k, v)
  })
  if (out.size === 0) return undefined
  const sorted: Record<string, string> = {}
  for (const key of [...out.keys()].sort(compareBytes)) sorted[key] = out.get(key)!
  return sorted
}

function renderFunctions(
  field: string,
  fns: readonly FunctionTemplate[] | undefined,
  ev: Evaluate,
): Record<string, unknown>[] {
  return (fns ?? []).map((fn, i) => {
    const configMap = overlay(`${field}[${i}].configMapExprs`, fn.configMap, fn.configMapExprs, ev)
    const out: Record<string, unknown> = {}
    let placed = false
    for (const [key, value] of Object.entries(fn.fields)) {
      if (key === 'configMap') {
        placed = true
        if (configMap) out[key] = configMap
      } else {
        out[key] = value
      }
    }
    if (!placed && configMap) out['configMap'] = configMap
    return out
  })
}

/** `spec.upstream` copied verbatim (Go `omitempty`: zero values dropped). */
function upstreamSpec(pvs: PackageVariantSet): Record<string, unknown> {
  const u = pvs.spec.upstream ?? {}
  const out: Record<string, unknown> = {}
  if (u.repo) out['repo'] = u.repo
  if (u.package) out['package'] = u.package
  if (u.revision) out['revision'] = u.revision
  if (u.workspaceName) out['workspaceName'] = u.workspaceName
  return out
}

function downstream(repo: string, pkg: string): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  if (repo) out['repo'] = repo
  if (pkg) out['package'] = pkg
  return out
}

/** Annotations kpt adds to objects read from files; not part of the object as Porch would see it. */
const orchestratorAnnotation =
  /^(internal\.config\.kubernetes\.io\/|internal\.config\.k8s\.io\/|config\.kubernetes\.io\/(path|index)$)/

/**
 * Porch's `objectToInput`: name, namespace, labels and annotations only (never
 * spec or status). kpt's own path and index annotations are left out, so an
 * object reads the same from a file as from a cluster.
 */
export function projectObject(object: KubeObject): Map<string, unknown> {
  const annotations = new Map<string, string>()
  for (const [key, value] of Object.entries(object.annotations())) {
    if (!orchestratorAnnotation.test(key)) annotations.set(key, value)
  }
  return new Map<string, unknown>([
    ['name', object.name],
    ['namespace', object.namespace],
    ['labels', new Map(Object.entries(object.labels()))],
    ['annotations', annotations],
  ])
}

function setIf(target: Record<string, unknown>, key: string, value: unknown): void {
  if (value !== undefined) target[key] = value
}

/** Bytewise UTF-8 order (Go's `<` on strings). UTF-16 order agrees below U+D800. */
export function compareBytes(a: string, b: string): number {
  if (a === b) return 0
  if (!surrogateOrHigh.test(a) && !surrogateOrHigh.test(b)) return a < b ? -1 : 1
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))
}

const surrogateOrHigh = /[\uD800-\uFFFF]/
