/**
 * A PackageCatalog read straight from its plain value (`KubeObject.plainValue()`),
 * as readPackageCatalog's typed reader reads a catalog with no error (the
 * same objects, field for field), or undefined at the first thing that reader
 * would report: it then reads the catalog again and names every field error.
 * A catalog lists thousands of dependencies, each a dozen typed reads by
 * path; this is one pass. A property test holds the two to each other.
 */
import { dns1123LabelErrors } from '../krm/index.js'
import type { KubeObject } from '../krm/index.js'
import type {
  CatalogPackage,
  CatalogVersion,
  DeclaredAt,
  Dependency,
  GVK,
  GVKDependency,
  InstallationType,
  PackageCatalog,
  PackageDependency,
  PackageSource,
} from './dependency-types.js'

/** The catalog, or undefined where the typed reader would report a field (`types`: the installation types it accepts). */
export function readCatalogValue(
  object: KubeObject,
  value: Record<string, unknown>,
  types: readonly string[],
): PackageCatalog | undefined {
  const spec = value['spec']
  if (spec !== undefined && spec !== null && !isPlainObject(spec)) return undefined
  const list = isPlainObject(spec) ? spec['packages'] : undefined
  const packages: CatalogPackage[] = []
  if (list !== undefined && list !== null) {
    if (!Array.isArray(list)) return undefined
    const names = new Set<string>()
    for (let i = 0; i < list.length; i++) {
      const pkg = catalogPackageOf(object, list[i], i, names, types)
      if (!pkg) return undefined
      packages.push(pkg)
    }
  }
  return { object, name: object.name, packages }
}

/** `spec.packages[i]`, whose name must not be among `names` (it is added), or undefined. */
function catalogPackageOf(
  object: KubeObject,
  entry: unknown,
  i: number,
  names: Set<string>,
  types: readonly string[],
): CatalogPackage | undefined {
  if (!isPlainObject(entry)) return undefined
  const name = entry['name']
  if (typeof name !== 'string' || name === '' || names.has(name)) return undefined
  names.add(name)
  const versions = catalogVersionsOf(object, entry['versions'], i, types)
  if (!versions) return undefined
  const pkg: CatalogPackage = { name, versions }
  const path = entry['path']
  if (path !== undefined && path !== null) {
    if (typeof path !== 'string' || path.split('/').some((segment) => dns1123LabelErrors(segment).length > 0))
      return undefined
    pkg.path = path
  }
  const deletionPolicy = entry['deletionPolicy']
  if (deletionPolicy === 'delete' || deletionPolicy === 'orphan') pkg.deletionPolicy = deletionPolicy
  else if (deletionPolicy !== undefined && deletionPolicy !== null) return undefined
  const latest = entry['latestVersion']
  if (latest !== undefined && latest !== null && typeof latest !== 'string') return undefined
  if (latest) pkg.latestVersion = latest
  const type = installationTypeOf(entry['installationType'], types)
  if (type === null) return undefined
  if (type) pkg.installationType = type
  return pkg
}

/** `spec.packages[i].versions`, each version listed once, or undefined. */
function catalogVersionsOf(
  object: KubeObject,
  versions: unknown,
  i: number,
  types: readonly string[],
): CatalogVersion[] | undefined {
  const read: CatalogVersion[] = []
  if (versions === undefined || versions === null) return read
  if (!Array.isArray(versions)) return undefined
  const seen = new Set<string>()
  for (let j = 0; j < versions.length; j++) {
    const v: unknown = versions[j]
    if (!isPlainObject(v)) return undefined
    const version = v['version']
    if (typeof version !== 'string' || version === '' || seen.has(version)) return undefined
    seen.add(version)
    const dependenciesField = `spec.packages[${i}].versions[${j}].dependencies`
    const catalogVersion = catalogVersionOf(object, v, version, dependenciesField, types)
    if (!catalogVersion) return undefined
    read.push(catalogVersion)
  }
  return read
}

/** One catalog version's fields besides `version`, or undefined; `dependenciesField` locates its dependencies. */
function catalogVersionOf(
  object: KubeObject,
  v: Record<string, unknown>,
  version: string,
  dependenciesField: string,
  types: readonly string[],
): CatalogVersion | undefined {
  const provides = gvksOf(v['provides'])
  const dependencies = dependenciesOf(object, v['dependencies'], dependenciesField)
  const type = installationTypeOf(v['installationType'], types)
  const source = sourceOf(v['source'])
  const kubernetes = v['kubernetesVersion']
  if (!provides || !dependencies || type === null || source === null) return undefined
  if (kubernetes !== undefined && kubernetes !== null && typeof kubernetes !== 'string') return undefined
  const catalogVersion: CatalogVersion = { version, provides, dependencies }
  if (type) catalogVersion.installationType = type
  if (source) catalogVersion.source = source
  if (kubernetes) catalogVersion.kubernetesVersion = kubernetes
  return catalogVersion
}

function dependenciesOf(object: KubeObject, list: unknown, field: string): Dependency[] | undefined {
  if (list === undefined || list === null) return []
  if (!Array.isArray(list)) return undefined
  const out: Dependency[] = []
  for (let k = 0; k < list.length; k++) {
    const dep = dependencyOf(object, list[k], `${field}[${k}]`, true)
    if (!dep) return undefined
    out.push(dep)
  }
  return out
}

function dependencyOf(object: KubeObject, entry: unknown, field: string, allowAnyOf: boolean): Dependency | undefined {
  if (!isPlainObject(entry)) return undefined
  const optional = entry['optional'] ?? false
  if (typeof optional !== 'boolean') return undefined
  const has = (key: string) => Object.prototype.hasOwnProperty.call(entry, key)
  const forms = (has('name') ? 1 : 0) + (has('gvk') ? 1 : 0) + (has('anyOf') ? 1 : 0)
  if (forms !== 1) return undefined
  const declaredAt: DeclaredAt = { object, field }
  if (has('name')) {
    const name = entry['name']
    const version = entry['version'] ?? ''
    if (typeof name !== 'string' || name === '' || typeof version !== 'string') return undefined
    return { type: 'Package', name, version, optional, declaredAt }
  }
  if (has('gvk')) {
    const gvk = gvkOf(entry['gvk'])
    return gvk && !has('version') ? { type: 'GVK', gvk, optional, declaredAt } : undefined
  }
  const alternatives = entry['anyOf']
  if (!allowAnyOf || !Array.isArray(alternatives) || alternatives.length === 0) return undefined
  const anyOf: (PackageDependency | GVKDependency)[] = []
  for (let m = 0; m < alternatives.length; m++) {
    const alternative = dependencyOf(object, alternatives[m], `${field}.anyOf[${m}]`, false)
    if (!alternative || alternative.type === 'AnyOf') return undefined
    anyOf.push(alternative)
  }
  return { type: 'AnyOf', anyOf, optional, declaredAt }
}

function gvksOf(list: unknown): GVK[] | undefined {
  if (list === undefined || list === null) return []
  if (!Array.isArray(list)) return undefined
  const out: GVK[] = []
  for (const entry of list) {
    const gvk = gvkOf(entry)
    if (!gvk) return undefined
    out.push(gvk)
  }
  return out
}

function gvkOf(value: unknown): GVK | undefined {
  if (!isPlainObject(value)) return undefined
  const { apiVersion, kind } = value
  return typeof apiVersion === 'string' && apiVersion !== '' && typeof kind === 'string' && kind !== ''
    ? { apiVersion, kind }
    : undefined
}

/** Where a version installs from; undefined when absent, null for anything but the plain form (the typed reader decides those). */
function sourceOf(value: unknown): PackageSource | undefined | null {
  if (value === undefined || value === null) return undefined
  if (!isPlainObject(value)) return null
  const { repo, package: pkg, revision, workspaceName } = value
  if (typeof repo !== 'string' || repo === '' || typeof pkg !== 'string' || pkg === '') return null
  if (
    revision !== undefined &&
    (typeof revision !== 'number' || !Number.isSafeInteger(revision) || revision < 1 || workspaceName !== undefined)
  )
    return null
  if (workspaceName !== undefined && (typeof workspaceName !== 'string' || workspaceName === '')) return null
  return {
    repo,
    package: pkg,
    ...(revision !== undefined ? { revision } : {}),
    ...(workspaceName !== undefined ? { workspaceName } : {}),
  }
}

/** An installation type, undefined when absent, null when the typed reader would report it. */
function installationTypeOf(value: unknown, types: readonly string[]): InstallationType | undefined | null {
  if (value === undefined || value === null) return undefined
  return typeof value === 'string' && types.includes(value) ? (value as InstallationType) : null
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
