/**
 * The dependency kinds of `kpt-variants.dev/v1alpha1` (the data model in docs/upstream-behaviour.md,
 * "Dependencies", and functions/dependency-check/README.md): PackageManifest, PackageCatalog, InstalledPackage, ClusterAPIs,
 * DependencyCheck and DependencyCheckResult. Readers return a typed value or
 * field errors naming the path; constraint syntax is checked by dependency-check.
 */
import { isMap, isSeq } from '../krm/yaml/index.js'
import { dns1123LabelErrors, formatFieldPath } from '../krm/index.js'
import type { FieldPath, KubeObject } from '../krm/index.js'
import { Decoder } from './decode.js'
import { readCatalogValue } from './catalog-value.js'
import { PlainDecoder } from './decode-plain.js'
import type { FieldError } from './decode.js'

export const dependenciesGroup = 'kpt-variants.dev'
export const dependenciesApiVersion = 'kpt-variants.dev/v1alpha1'
export const packageManifestKind = 'PackageManifest'
export const packageCatalogKind = 'PackageCatalog'
export const installedPackageKind = 'InstalledPackage'
export const clusterAPIsKind = 'ClusterAPIs'
export const dependencyCheckKind = 'DependencyCheck'
export const dependencyCheckResultKind = 'DependencyCheckResult'

export * from './dependency-types.js'
import { installationTypes, defaultDependencyPolicy } from './dependency-types.js'
import type {
  InstallationType,
  GVK,
  GroupKind,
  DeclaredAt,
  PackageDependency,
  GVKDependency,
  Dependency,
  PackageSource,
  CatalogVersion,
  CatalogPackage,
  PackageCatalog,
  PackageManifest,
  InstalledPackage,
  ClusterAPIs,
  DependencyTarget,
  DependencyPolicy,
  DependencyCheck,
} from './dependency-types.js'

/** A read result: the value or the field errors. */
export type Read<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] }

/** True for any version of one of the dependency kinds in `kpt-variants.dev`. */
export function isDependencyKind(object: KubeObject, kind: string): boolean {
  return object.isGroupKind(dependenciesGroup, kind)
}

/** True for a `CustomResourceDefinition` (its served versions count as provided GVKs). */
export function isCustomResourceDefinition(object: KubeObject): boolean {
  return object.isGroupKind('apiextensions.k8s.io', 'CustomResourceDefinition')
}

/** Reads a PackageCatalog: in one pass when it has no error (catalog-value.ts), else field by field, every error named. */
export function readPackageCatalog(object: KubeObject): Read<PackageCatalog> {
  const fast = readCatalogValue(object, object.plainValue(), installationTypes)
  return fast ? { ok: true, value: fast } : readPackageCatalogFields(object)
}

/** Reads a PackageCatalog field by field with the typed reader, collecting every field error. */
export function readPackageCatalogFields(object: KubeObject): Read<PackageCatalog> {
  const d = new PlainDecoder(object)
  const packages: CatalogPackage[] = []
  const names = new Map<string, number>()
  d.each(['spec', 'packages'], (base, i) => {
    const name = d.requiredString([...base, 'name'])
    if (name !== undefined) {
      const first = names.get(name)
      if (first !== undefined)
        d.fail([...base, 'name'], `duplicates \`spec.packages[${first}].name\` ${JSON.stringify(name)}`)
      else names.set(name, i)
    }
    const versions: CatalogVersion[] = []
    const seen = new Map<string, number>()
    d.each([...base, 'versions'], (vbase, j) => {
      const version = d.requiredString([...vbase, 'version'])
      if (version !== undefined) {
        const dup = seen.get(version)
        if (dup !== undefined)
          d.fail(
            [...vbase, 'version'],
            `duplicates \`${formatFieldPath([...base, 'versions', dup, 'version'])}\` ${JSON.stringify(version)}`,
          )
        else seen.set(version, j)
      }
      const entry: CatalogVersion = {
        version: version ?? '',
        provides: readGVKs(d, [...vbase, 'provides']),
        dependencies: readDependencies(d, [...vbase, 'dependencies']),
      }
      const type = readInstallationType(d, [...vbase, 'installationType'])
      if (type) entry.installationType = type
      const source = readPackageSource(d, [...vbase, 'source'])
      if (source) entry.source = source
      const kubernetes = d.string([...vbase, 'kubernetesVersion'])
      if (kubernetes) entry.kubernetesVersion = kubernetes
      versions.push(entry)
    })
    const pkg: CatalogPackage = { name: name ?? '', versions }
    const path = d.string([...base, 'path'])
    if (path !== undefined) {
      if (path.split('/').some((segment) => dns1123LabelErrors(segment).length > 0))
        d.fail([...base, 'path'], `must be a package path of DNS-1123 labels, got ${JSON.stringify(path)}`)
      else pkg.path = path
    }
    const deletionPolicy = d.string([...base, 'deletionPolicy'])
    if (deletionPolicy === 'delete' || deletionPolicy === 'orphan') pkg.deletionPolicy = deletionPolicy
    else if (deletionPolicy !== undefined)
      d.fail([...base, 'deletionPolicy'], `must be delete or orphan, got ${JSON.stringify(deletionPolicy)}`)
    const latest = d.string([...base, 'latestVersion'])
    if (latest) pkg.latestVersion = latest
    const type = readInstallationType(d, [...base, 'installationType'])
    if (type) pkg.installationType = type
    packages.push(pkg)
  })
  return done(d, { object, name: object.name, packages })
}

/** Reads a PackageManifest (`metadata.name` is the package name). */
export function readPackageManifest(object: KubeObject): Read<PackageManifest> {
  const d = new PlainDecoder(object)
  if (!object.name) d.fail(['metadata', 'name'], 'must be set to the package name')
  const manifest: PackageManifest = {
    object,
    name: object.name,
    namespace: d.string(['spec', 'namespace']) ?? '',
    provides: readGVKs(d, ['spec', 'provides']),
    dependencies: readDependencies(d, ['spec', 'dependencies']),
    sharedAPIs: readGroupKinds(d, ['spec', 'sharedAPIs']),
  }
  const version = d.string(['spec', 'version'])
  if (version) manifest.version = version
  const type = readInstallationType(d, ['spec', 'installationType'])
  if (type) manifest.installationType = type
  const kubernetes = d.string(['spec', 'kubernetesVersion'])
  if (kubernetes) manifest.kubernetesVersion = kubernetes
  return done(d, manifest)
}

/** Reads an InstalledPackage; `spec.package` defaults to `metadata.name`. */
export function readInstalledPackage(object: KubeObject): Read<InstalledPackage> {
  const d = new PlainDecoder(object)
  const version = d.requiredString(['spec', 'version'])
  const installed: InstalledPackage = {
    object,
    name: object.name,
    package: d.string(['spec', 'package']) || object.name,
    version: version ?? '',
    namespace: d.string(['spec', 'namespace']) ?? '',
    installedAsDependency: d.boolean(['spec', 'installedAsDependency']) ?? false,
    deleting: d.boolean(['spec', 'deleting']) ?? false,
  }
  if (!installed.package) d.fail(['spec', 'package'], 'must be set (or `metadata.name`)')
  if (d.has(['spec', 'dependencies'])) installed.dependencies = readDependencies(d, ['spec', 'dependencies'])
  if (d.has(['spec', 'provides'])) installed.provides = readGVKs(d, ['spec', 'provides'])
  return done(d, installed)
}

/** Reads a ClusterAPIs object. */
export function readClusterAPIs(object: KubeObject): Read<ClusterAPIs> {
  const d = new PlainDecoder(object)
  return done(d, { object, gvks: readGVKs(d, ['spec', 'gvks']) })
}

/** The GVKs a CustomResourceDefinition serves (`spec.versions[].served`, default true). */
export function crdProvides(object: KubeObject): GVK[] {
  const group = object.get(['spec', 'group'])
  const kind = object.get(['spec', 'names', 'kind'])
  // Each version carries its whole schema: only its name and `served` are read, never the schema as JavaScript.
  const versions = object.getNode(['spec', 'versions'])
  if (typeof group !== 'string' || typeof kind !== 'string' || !isSeq(versions)) return []
  const out: GVK[] = []
  versions.items.forEach((version, i) => {
    if (!isMap(version)) return
    const name = object.get(['spec', 'versions', i, 'name'])
    if (typeof name !== 'string' || object.get(['spec', 'versions', i, 'served']) === false) return
    out.push({ apiVersion: `${group}/${name}`, kind })
  })
  return out
}

const policyEnums: { [K in Exclude<keyof DependencyPolicy, 'prereleases'>]: readonly DependencyPolicy[K][] } = {
  upgrades: ['Allow', 'Deny'],
  upgradeTarget: ['Highest', 'Lowest'],
  downgrades: ['Deny', 'Allow'],
  latest: ['LatestVersionField', 'HighestStable', 'Highest'],
  optional: ['Skip', 'InstallIfResolvable'],
  incompleteVersions: ['Ignore', 'Coerce'],
  autoUpgrade: ['Never', 'Dependencies'],
}

/** Reads a DependencyCheck functionConfig; omitted policy fields take the defaults. */
export function readDependencyCheck(object: KubeObject): Read<DependencyCheck> {
  const d = new Decoder(object)
  const targets: DependencyTarget[] = []
  d.each(['spec', 'targets'], (base) => {
    const target: DependencyTarget = {
      package: d.requiredString([...base, 'package']) ?? '',
      namespace: d.string([...base, 'namespace']) ?? '',
    }
    const version = d.string([...base, 'version'])
    const constraint = d.string([...base, 'constraint'])
    if (version) target.version = version
    if (constraint !== undefined) target.constraint = constraint
    if (version && constraint !== undefined) d.fail([...base, 'constraint'], 'must not be set together with `version`')
    targets.push(target)
  })
  const policy: DependencyPolicy = { ...defaultDependencyPolicy }
  if (d.isMapOrAbsent(['spec', 'policy'])) {
    for (const key of Object.keys(policyEnums) as (keyof typeof policyEnums)[]) {
      const value = d.string(['spec', 'policy', key])
      if (value === undefined) continue
      const allowed = policyEnums[key] as readonly string[]
      if (allowed.includes(value)) (policy as unknown as Record<string, string>)[key] = value
      else d.fail(['spec', 'policy', key], `must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`)
    }
    const pre = object.get(['spec', 'policy', 'prereleases'])
    if (pre === 'Exclude' || pre === 'Include') policy.prereleases = pre
    else if (typeof pre === 'object' && pre !== null && !Array.isArray(pre)) {
      policy.prereleases = { identifiers: d.stringList(['spec', 'policy', 'prereleases', 'identifiers']) ?? [] }
    } else if (pre !== undefined && pre !== null) {
      d.fail(['spec', 'policy', 'prereleases'], 'must be Exclude, Include or {identifiers: [...]}')
    }
  }
  return done(d, { object, name: object.name || 'dependency-check', targets, policy })
}

function readDependencies(d: Decoder, path: FieldPath): Dependency[] {
  const out: Dependency[] = []
  d.each(path, (base) => {
    const dep = readDependency(d, base, true)
    if (dep) out.push(dep)
  })
  return out
}

function readDependency(d: Decoder, base: FieldPath, allowAnyOf: boolean): Dependency | undefined {
  const declaredAt: DeclaredAt = { object: d.object, field: formatFieldPath(base) }
  const optional = d.boolean([...base, 'optional']) ?? false
  const forms = ['name', 'gvk', 'anyOf'].filter((key) => d.has([...base, key]))
  if (forms.length !== 1) {
    d.fail(
      base,
      forms.length === 0
        ? 'must set one of `name`, `gvk` or `anyOf`'
        : `must set only one of ${forms.map((f) => `\`${f}\``).join(', ')}`,
    )
    return undefined
  }
  if (forms[0] === 'name') {
    const name = d.requiredString([...base, 'name'])
    if (name === undefined) return undefined
    return { type: 'Package', name, version: d.string([...base, 'version']) ?? '', optional, declaredAt }
  }
  if (forms[0] === 'gvk') {
    const gvk = readGVK(d, [...base, 'gvk'])
    if (d.has([...base, 'version'])) d.fail([...base, 'version'], 'is only allowed with `name`')
    return gvk ? { type: 'GVK', gvk, optional, declaredAt } : undefined
  }
  if (!allowAnyOf) {
    d.fail([...base, 'anyOf'], 'must not be nested in another `anyOf`')
    return undefined
  }
  const anyOf: (PackageDependency | GVKDependency)[] = []
  d.each([...base, 'anyOf'], (alt) => {
    const dep = readDependency(d, alt, false)
    if (dep && dep.type !== 'AnyOf') anyOf.push(dep)
  })
  if (anyOf.length === 0 && d.errors.length === 0) d.fail([...base, 'anyOf'], 'must list at least one alternative')
  return { type: 'AnyOf', anyOf, optional, declaredAt }
}

function readPackageSource(d: Decoder, path: FieldPath): PackageSource | undefined {
  if (!d.has(path)) return undefined
  if (!isMap(d.object.getNode(path))) {
    d.fail(path, 'must be an object with `repo` and `package`')
    return undefined
  }
  const repo = d.requiredString([...path, 'repo'])
  const pkg = d.requiredString([...path, 'package'])
  const revision = d.integer([...path, 'revision'])
  const workspaceName = d.string([...path, 'workspaceName'])
  if (revision !== undefined && revision < 1) d.fail([...path, 'revision'], 'must be 1 or more')
  if (revision !== undefined && workspaceName !== undefined)
    d.fail([...path, 'workspaceName'], 'must not be set together with `revision`')
  if (repo === undefined || pkg === undefined) return undefined
  return {
    repo,
    package: pkg,
    ...(revision !== undefined ? { revision } : {}),
    ...(workspaceName !== undefined ? { workspaceName } : {}),
  }
}

function readGVKs(d: Decoder, path: FieldPath): GVK[] {
  const out: GVK[] = []
  d.each(path, (base) => {
    const gvk = readGVK(d, base)
    if (gvk) out.push(gvk)
  })
  return out
}

function readGroupKinds(d: Decoder, path: FieldPath): GroupKind[] {
  const out: GroupKind[] = []
  d.each(path, (base) => {
    if (!d.isMap(base)) {
      d.fail(base, 'must be an object with `group` and `kind`')
      return
    }
    const group = d.requiredString([...base, 'group'])
    const kind = d.requiredString([...base, 'kind'])
    if (group !== undefined && kind !== undefined) out.push({ group, kind })
  })
  return out
}

function readGVK(d: Decoder, base: FieldPath): GVK | undefined {
  if (!d.isMap(base)) {
    d.fail(base, 'must be an object with `apiVersion` and `kind`')
    return undefined
  }
  const apiVersion = d.requiredString([...base, 'apiVersion'])
  const kind = d.requiredString([...base, 'kind'])
  return apiVersion !== undefined && kind !== undefined ? { apiVersion, kind } : undefined
}

function readInstallationType(d: Decoder, path: FieldPath): InstallationType | undefined {
  const value = d.string(path)
  if (value === undefined) return undefined
  if ((installationTypes as readonly string[]).includes(value)) return value as InstallationType
  d.fail(path, `must be one of ${installationTypes.join(', ')}, got ${JSON.stringify(value)}`)
  return undefined
}

function done<T>(d: Decoder, value: T): Read<T> {
  return d.errors.length > 0 ? { ok: false, errors: d.errors } : { ok: true, value }
}
