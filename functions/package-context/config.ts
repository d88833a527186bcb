/** The package-context functionConfig: a PackageVariant, or a ConfigMap of keys to set. */
import {
  isPackageVariant,
  packageContextRule,
  readPackageVariant,
  reservedPackageContextKeys,
  validatePackageVariant,
} from '../api/package-variant.js'
import type { PackageVariant } from '../api/package-variant.js'
import { describeKind, isConfigMap } from '../api/function-config.js'
import { newResult } from '../krm/index.js'
import type { KubeObject, Result } from '../krm/index.js'

/** What to change in the `kptfile.kpt.dev` ConfigMap. */
export interface PackageContextConfig {
  /** Keys to add or overwrite. */
  data: Record<string, string>
  /** Keys to delete, after `data` is applied (so removal wins, as in Porch). */
  removeKeys: string[]
}

const expected = 'expected PackageVariant.config.porch.kpt.dev/v1alpha1 or ConfigMap.v1'

/** The config of a PackageVariant that passed validation: its `spec.packageContext`. */
export function packageContextConfigOf(pv: PackageVariant): PackageContextConfig {
  const { data = {}, removeKeys = [] } = pv.spec.packageContext ?? {}
  return { data, removeKeys }
}

/** Reads the functionConfig into a config, or error results naming the field. */
export function parseConfig(
  fc: KubeObject | undefined,
): { ok: true; config: PackageContextConfig } | { ok: false; results: Result[] } {
  if (!fc) {
    return { ok: false, results: [newResult('error', `functionConfig is missing: ${expected}`)] }
  }
  if (isPackageVariant(fc)) {
    const read = readPackageVariant(fc)
    if (!read.ok)
      return {
        ok: false,
        results: read.errors.map((e) => newResult('error', e.message, { object: fc, field: e.field })),
      }
    const errors = validatePackageVariant(read.value, [packageContextRule])
    if (errors.length > 0) {
      return { ok: false, results: errors.map((e) => newResult('error', e.message, { object: fc, field: e.field })) }
    }
    return { ok: true, config: packageContextConfigOf(read.value) }
  }
  if (isConfigMap(fc)) {
    let data: Record<string, string>
    try {
      data = fc.getStringMap(['data']) ?? {}
    } catch {
      return {
        ok: false,
        results: [newResult('error', '`data` must be a map of strings', { object: fc, field: 'data' })],
      }
    }
    const results = reservedPackageContextKeys
      .filter((key) => Object.prototype.hasOwnProperty.call(data, key))
      .map((key) =>
        newResult(
          'error',
          `data: Invalid value: ${JSON.stringify(data)}: must not contain the key ${JSON.stringify(key)}`,
          {
            object: fc,
            field: 'data',
          },
        ),
      )
    if (results.length > 0) return { ok: false, results }
    return { ok: true, config: { data, removeKeys: [] } }
  }
  return {
    ok: false,
    results: [
      newResult('error', `unsupported functionConfig ${describeKind(fc)}: ${expected}`, { object: fc, field: 'kind' }),
    ],
  }
}
