/**
 * package-context: writes `spec.packageContext` of a PackageVariant into the
 * package's `kptfile.kpt.dev` ConfigMap, as Porch's `ensurePackageContext` does
 * (docs/upstream-behaviour.md, "Package context").
 */
import { findRootObjects, isKptfile, packageContextFile, packageContextName, rootPackagePath } from '../krm/index.js'
import type { KubeObject, ResourceList } from '../krm/index.js'
import { parseConfig } from './config.js'
import type { PackageContextConfig } from './config.js'

/** Applies the configured package context to the root package's `package-context.yaml`. */
export function packageContext(rl: ResourceList): void {
  const parsed = parseConfig(rl.functionConfig)
  if (!parsed.ok) {
    rl.results.push(...parsed.results)
    return
  }
  setPackageContext(rl, parsed.config)
}

/** The transform after its config is read (package-variant reads the PackageVariant once for all its steps). */
export function setPackageContext(rl: ResourceList, config: PackageContextConfig): void {
  if (Object.keys(config.data).length === 0 && config.removeKeys.length === 0) {
    rl.results.info('no package context keys to set or remove; package unchanged')
    return
  }
  const found = findPackageContext(rl.items)
  if (!found.ok) {
    rl.results.error(found.message, found.object ? { object: found.object } : {})
    return
  }
  const { set, removed } = applyPackageContext(found.object, config)
  rl.results.info(summary(set, removed), { object: found.object, field: 'data' })
}

/** Finds the root package's context ConfigMap, or Porch's message for what is wrong. */
export function findPackageContext(
  items: readonly KubeObject[],
): { ok: true; object: KubeObject } | { ok: false; message: string; object?: KubeObject } {
  const pkg = JSON.stringify(packageName(items))
  const candidates = findRootObjects(items, packageContextFile)
  if (candidates.length === 0) {
    return {
      ok: false,
      message: `"${packageContextFile}" not found in package ${pkg}; create it with \`kpt pkg get --for-deployment\` or \`kpt pkg init\``,
    }
  }
  if (candidates.length > 1) {
    return {
      ok: false,
      message: `failed to parse "${packageContextFile}" of package ${pkg}: expected exactly one object, got ${candidates.length}`,
      object: candidates[1]!,
    }
  }
  const object = candidates[0]!
  if (object.kind !== 'ConfigMap') {
    return { ok: false, message: `"${packageContextFile}" does not contain kind "ConfigMap" in package ${pkg}`, object }
  }
  if (object.name !== packageContextName) {
    return {
      ok: false,
      message: `"${packageContextFile}" does not contain resource named "${packageContextName}" in package ${pkg}`,
      object,
    }
  }
  const data = object.getNode(['data'])
  if (data === undefined) return { ok: false, message: `package ${pkg} PackageContext no data field found`, object }
  try {
    object.getStringMap(['data'])
  } catch (err) {
    return { ok: false, message: `package ${pkg} PackageContext invalid data field: ${(err as Error).message}`, object }
  }
  return { ok: true, object }
}

/**
 * Upserts `data` (existing keys keep their place and comments, new keys are
 * appended in key order), then deletes `removeKeys`: removal wins, as in Porch.
 */
export function applyPackageContext(
  object: KubeObject,
  config: PackageContextConfig,
): { set: string[]; removed: string[] } {
  const current = object.getStringMap(['data']) ?? {}
  const set: string[] = []
  for (const key of Object.keys(config.data).sort()) {
    if (current[key] === config.data[key]) continue
    object.set(['data', key], config.data[key])
    set.push(key)
  }
  const removed = config.removeKeys.filter((key) => object.remove(['data', key]))
  return { set: set.filter((key) => !removed.includes(key)), removed }
}

function packageName(items: readonly KubeObject[]): string {
  const root = rootPackagePath(items)
  const kptfile = items.find((item) => isKptfile(item) && item.path === 'Kptfile' && item.packagePath === root)
  return kptfile?.name || 'the package'
}

function summary(set: readonly string[], removed: readonly string[]): string {
  if (set.length === 0 && removed.length === 0) return 'package context already up to date'
  const parts: string[] = []
  if (set.length > 0) parts.push(`set ${set.map((k) => `\`${k}\``).join(', ')}`)
  if (removed.length > 0) parts.push(`removed ${removed.map((k) => `\`${k}\``).join(', ')}`)
  return `package context: ${parts.join('; ')}`
}
