/**
 * config-injection: copies in-cluster objects into the package's injection
 * points and records the outcome in the root Kptfile, as Porch's
 * `ensureConfigInjection` does (docs/upstream-behaviour.md, "Config injection").
 */
import type { InjectionSelector } from '../api/package-variant.js'
import { configAndKptfile } from '../api/package-variant-config.js'
import {
  configInjectionAnnotation,
  injectedResourceAnnotation,
  injectedResourceNameAnnotation,
  rootPackagePath,
} from '../krm/index.js'
import type { Kptfile, KptCondition, KubeObject, ResourceList, TransformOptions } from '../krm/index.js'
import { parseConfig } from './config.js'
import type { ConfigInjectionConfig } from './config.js'

/** An object annotated `kpt.dev/config-injection`. */
export interface InjectionPoint {
  object: KubeObject
  required: boolean
  /** `config.injection.<Kind>.<name>` (no group or version, as in Porch). */
  conditionType: string
  /** The object's file, relative to the root package. */
  file: string
}

/** An invalid annotation value or a duplicate condition type. */
export interface InjectionPointError {
  object: KubeObject
  message: string
}

/** What happened to one injection point. */
export interface InjectionOutcome {
  point: InjectionPoint
  /** Name of the in-cluster object injected, if any. */
  injected?: string
  /** Why nothing was injected (non-fatal; goes into the condition message). */
  errors: string[]
}

const annotationField = `metadata.annotations.${configInjectionAnnotation}`

/** Injects in-cluster objects (`options.sources`) into the package's injection points. */
export function configInjection(rl: ResourceList, options: TransformOptions): void {
  const prepared = configAndKptfile(rl, parseConfig)
  if (!prepared) return
  injectConfig(rl, prepared.config, prepared.kptfile, options)
}

/** The transform after its config and the root Kptfile are found; returns what happened to each injection point (none after an error). */
export function injectConfig(
  rl: ResourceList,
  config: ConfigInjectionConfig,
  kptfile: Kptfile,
  options: TransformOptions,
): InjectionOutcome[] {
  const { points, errors } = findInjectionPoints(rl.items)
  if (errors.length > 0) {
    for (const e of errors)
      rl.results.error(`errors in injection points: ${e.message}`, { object: e.object, field: annotationField })
    return []
  }
  const { namespace, injectors } = config
  const outcomes = points.map((point) =>
    injectPoint(point, injectors, listInCluster(options.sources, namespace, point.object)),
  )
  kptfile.setConditions(outcomes.map(condition))
  kptfile.addReadinessGates(points.filter((p) => p.required).map((p) => p.conditionType))
  for (const outcome of outcomes) {
    const { point } = outcome
    const message = condition(outcome).message!
    if (outcome.injected) rl.results.info(message, { object: point.object, field: injectedField(point.object) })
    else if (point.required)
      rl.results.warning(`required injection point not injected: ${message}`, { object: point.object })
    else rl.results.info(`optional injection point not injected: ${message}`, { object: point.object })
  }
  rl.results.info(summary(outcomes), { object: kptfile.object, field: 'status.conditions' })
  return outcomes
}

/**
 * Finds every item annotated `kpt.dev/config-injection` (subpackages too, as
 * Porch does), with the errors that make the run fail: a value other than
 * `required` / `optional`, and condition types used twice.
 */
export function findInjectionPoints(items: readonly KubeObject[]): {
  points: InjectionPoint[]
  errors: InjectionPointError[]
} {
  const root = rootPackagePath(items)
  const points: InjectionPoint[] = []
  const errors: InjectionPointError[] = []
  const seen = new Map<string, InjectionPoint>()
  for (const object of items) {
    const value = object.getAnnotation(configInjectionAnnotation)
    if (value === undefined) continue
    const file = packageFile(object, root)
    if (value !== 'required' && value !== 'optional') {
      errors.push({
        object,
        message: `${file}: ${object.kind}/${object.name} has invalid ${JSON.stringify(configInjectionAnnotation)} annotation value of ${JSON.stringify(value)}`,
      })
      continue
    }
    const point: InjectionPoint = {
      object,
      required: value === 'required',
      conditionType: `config.injection.${object.kind}.${object.name}`,
      file,
    }
    const previous = seen.get(point.conditionType)
    if (previous) {
      errors.push({
        object,
        message: `duplicate injection conditionType "${point.conditionType}" (${previous.file} and ${file})`,
      })
    }
    seen.set(point.conditionType, point)
    points.push(point)
  }
  return { points, errors }
}

/** The sources by `namespace|apiVersion|kind`, built once per sources list (a fleet renders many variants against one). */
const inClusterIndexes = new WeakMap<readonly KubeObject[], Map<string, KubeObject[]>>()

/**
 * What Porch's list call returns for an injection point: in-cluster objects
 * of the point's exact apiVersion and kind in the PackageVariant's namespace
 * (an object without a namespace counts as in `default`).
 */
export function listInCluster(
  sources: readonly KubeObject[],
  namespace: string,
  target: KubeObject,
): readonly KubeObject[] {
  let index = inClusterIndexes.get(sources)
  if (!index) {
    index = new Map()
    for (const source of sources) {
      const key = `${source.namespace || 'default'}|${source.apiVersion}|${source.kind}`
      const list = index.get(key)
      if (list) list.push(source)
      else index.set(key, [source])
    }
    inClusterIndexes.set(sources, index)
  }
  return index.get(`${namespace}|${target.apiVersion}|${target.kind}`) ?? []
}

/**
 * Resolves one injection point: the first injector whose group, version and
 * kind (where given) fit the in-package object and whose name one of the
 * listed in-cluster objects (same apiVersion and kind) has, wins; its `data`
 * (core ConfigMap) or `spec` replaces the in-package one.
 */
export function injectPoint(
  point: InjectionPoint,
  injectors: readonly InjectionSelector[],
  listed: readonly KubeObject[],
): InjectionOutcome {
  const target = point.object
  if (injectors.length === 0) return { point, errors: ['no injectors defined'] }
  if (listed.length === 0)
    return { point, errors: [`no in-cluster resources of type ${target.apiVersion}.${target.kind}`] }
  for (const injector of injectors) {
    if (!appliesTo(injector, target)) continue
    const selected = listed.find((c) => c.name === injector.name)
    if (!selected) continue
    const field = injectedField(target)
    if (!selected.has([field])) return { point, errors: [`field "${field}" not found in resource "${selected.name}"`] }
    target.set([field], selected.get([field]))
    target.setAnnotation(injectedResourceAnnotation, selected.name)
    target.setAnnotation(injectedResourceNameAnnotation, selected.name)
    return { point, injected: selected.name, errors: [] }
  }
  return { point, errors: [] }
}

/** The field Porch copies: `data` of a core ConfigMap, `spec` of everything else. */
export function injectedField(object: KubeObject): 'data' | 'spec' {
  return object.isGVK('v1', 'ConfigMap') ? 'data' : 'spec'
}

/** The Kptfile condition for an outcome (Porch's reasons and messages). */
export function condition(outcome: InjectionOutcome): KptCondition {
  const type = outcome.point.conditionType
  if (outcome.injected) {
    return {
      type,
      status: 'True',
      reason: 'ConfigInjected',
      message: `injected resource "${outcome.injected}" from cluster`,
    }
  }
  const message = outcome.errors.join(', ') || 'no resource matched any injection selector for this injection point'
  return { type, status: 'False', reason: 'NoResourceSelected', message }
}

function appliesTo(injector: InjectionSelector, target: KubeObject): boolean {
  return (
    (injector.group === undefined || injector.group === target.group) &&
    (injector.version === undefined || injector.version === target.version) &&
    (injector.kind === undefined || injector.kind === target.kind)
  )
}

/** The item's file relative to the root package (render gives subpackage paths relative to their own package). */
function packageFile(object: KubeObject, root: string | undefined): string {
  const path = object.path ?? object.describe()
  const pkg = object.packagePath
  if (root === undefined || pkg === undefined || pkg === root || !pkg.startsWith(`${root}/`)) return path
  return `${pkg.slice(root.length + 1)}/${path}`
}

function summary(outcomes: readonly InjectionOutcome[]): string {
  if (outcomes.length === 0) return 'no injection points found'
  const injected = outcomes.filter((o) => o.injected).length
  const required = outcomes.filter((o) => o.point.required && !o.injected).length
  const tail = required > 0 ? `; ${required} required point(s) not injected` : ''
  return `injected ${injected} of ${outcomes.length} injection point(s)${tail}`
}
