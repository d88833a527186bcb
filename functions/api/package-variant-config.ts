/**
 * A PackageVariant as the functionConfig of a function: kind check, typed
 * reading and the validation rules the function depends on, as error results
 * on the functionConfig object.
 */
import { findKptfile, newResult } from '../krm/index.js'
import type { Kptfile, KubeObject, ResourceList, Result } from '../krm/index.js'
import { describeKind } from './function-config.js'
import { isPackageVariant, readPackageVariant, validatePackageVariant } from './package-variant.js'
import type { PackageVariant, PackageVariantRule } from './package-variant.js'

const expected = 'expected PackageVariant.config.porch.kpt.dev/v1alpha1'

/** Reads a PackageVariant functionConfig and runs `rules` on it; every problem is an error result naming its field. */
export function readPackageVariantConfig(
  fc: KubeObject | undefined,
  rules: readonly PackageVariantRule[],
): { ok: true; pv: PackageVariant } | { ok: false; results: Result[] } {
  if (!fc) return { ok: false, results: [newResult('error', `functionConfig is missing: ${expected}`)] }
  if (!isPackageVariant(fc)) {
    return {
      ok: false,
      results: [
        newResult('error', `unsupported functionConfig ${describeKind(fc)}: ${expected}`, {
          object: fc,
          field: 'kind',
        }),
      ],
    }
  }
  const read = readPackageVariant(fc)
  const errors = read.ok ? validatePackageVariant(read.value, rules) : read.errors
  if (read.ok && !fc.name) errors.unshift({ field: 'metadata.name', message: '`metadata.name` must not be empty' })
  if (!read.ok || errors.length > 0) {
    return { ok: false, results: errors.map((e) => newResult('error', e.message, { object: fc, field: e.field })) }
  }
  return { ok: true, pv: read.value }
}

/**
 * The common start of a Kptfile mutation: the parsed functionConfig and the
 * root Kptfile, or undefined after recording why either is unusable on `rl`.
 */
export function configAndKptfile<C>(
  rl: ResourceList,
  parse: (fc: KubeObject | undefined) => { ok: true; config: C } | { ok: false; results: Result[] },
): { config: C; kptfile: Kptfile } | undefined {
  const parsed = parse(rl.functionConfig)
  if (!parsed.ok) {
    rl.results.push(...parsed.results)
    return undefined
  }
  const found = findKptfile(rl.items)
  if (!found.ok) {
    rl.results.error(found.message, { object: found.object, field: found.field })
    return undefined
  }
  return { config: parsed.config, kptfile: found.kptfile }
}
