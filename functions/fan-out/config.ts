/** The fan-out functionConfig: a `config.porch.kpt.dev/v1alpha2 PackageVariantSet`. */
import { describeKind } from '../api/function-config.js'
import {
  isPackageVariantSet,
  packageVariantSetApiVersion,
  packageVariantSetKind,
  readPackageVariantSet,
} from '../api/package-variant-set.js'
import type { PackageVariantSet } from '../api/package-variant-set.js'
import { newResult } from '../krm/index.js'
import type { KubeObject, Result } from '../krm/index.js'

const expected = `expected ${packageVariantSetKind}.${packageVariantSetApiVersion}`

/**
 * Reads the functionConfig into a typed PackageVariantSet, or error results
 * naming the field. Porch's semantic validation runs later (`validatePackageVariantSet`),
 * so its combined message can also go into the set's status.
 */
export function parseConfig(
  fc: KubeObject | undefined,
): { ok: true; config: PackageVariantSet } | { ok: false; results: Result[] } {
  if (!fc) return { ok: false, results: [newResult('error', `functionConfig is missing: ${expected}`)] }
  if (!isPackageVariantSet(fc) || fc.apiVersion !== packageVariantSetApiVersion) {
    const hint = isPackageVariantSet(fc) ? ' (v1alpha1 is not served by Porch)' : ''
    return {
      ok: false,
      results: [
        newResult('error', `unsupported functionConfig ${describeKind(fc)}: ${expected}${hint}`, {
          object: fc,
          field: 'apiVersion',
        }),
      ],
    }
  }
  if (!fc.name) {
    return {
      ok: false,
      results: [newResult('error', '`metadata.name` is required', { object: fc, field: 'metadata.name' })],
    }
  }
  const read = readPackageVariantSet(fc)
  if (!read.ok)
    return { ok: false, results: read.errors.map((e) => newResult('error', e.message, { object: fc, field: e.field })) }
  return { ok: true, config: read.value }
}
