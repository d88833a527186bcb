/** The config-injection functionConfig: a PackageVariant (`metadata.namespace`, `spec.injectors`). */
import { readPackageVariantConfig } from '../api/package-variant-config.js'
import { injectorsRule } from '../api/package-variant.js'
import type { InjectionSelector, PackageVariant } from '../api/package-variant.js'
import type { KubeObject, Result } from '../krm/index.js'

/** Where to look for in-cluster objects and which ones to pick. */
export interface ConfigInjectionConfig {
  /** The PackageVariant's namespace; only sources in it are candidates. `""` reads as `default`, as kubectl does. */
  namespace: string
  /** `spec.injectors`, in order: the first that matches wins. */
  injectors: InjectionSelector[]
}

/** Reads the functionConfig into a config, or error results naming the field. */
export function parseConfig(
  fc: KubeObject | undefined,
): { ok: true; config: ConfigInjectionConfig } | { ok: false; results: Result[] } {
  const read = readPackageVariantConfig(fc, [injectorsRule])
  if (!read.ok) return read
  return { ok: true, config: injectionConfigOf(read.pv) }
}

/** The config of a PackageVariant that passed validation: its namespace and injectors. */
export function injectionConfigOf(pv: PackageVariant): ConfigInjectionConfig {
  return { namespace: pv.namespace || 'default', injectors: pv.spec.injectors ?? [] }
}
