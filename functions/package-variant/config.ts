/** The package-variant functionConfig: a whole PackageVariant, validated with all of Porch's rules. */
import { readPackageVariantConfig } from '../api/package-variant-config.js'
import { packageVariantRules } from '../api/package-variant.js'
import type { PackageVariant } from '../api/package-variant.js'
import type { KubeObject, Result } from '../krm/index.js'

/** Reads and validates the PackageVariant (Porch's `validatePackageVariant`, plus the pipeline-name rule). */
export function parseConfig(
  fc: KubeObject | undefined,
): { ok: true; pv: PackageVariant } | { ok: false; results: Result[] } {
  return readPackageVariantConfig(fc, packageVariantRules)
}
