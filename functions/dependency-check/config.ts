/** The dependency-check functionConfig: a `DependencyCheck`, or none (defaults). */
import {
  defaultDependencyPolicy,
  dependencyCheckKind,
  isDependencyKind,
  readDependencyCheck,
} from '../api/dependencies.js'
import type { DependencyCheck } from '../api/dependencies.js'
import { describeKind, isConfigMap } from '../api/function-config.js'
import { newResult } from '../krm/index.js'
import type { KubeObject, Result } from '../krm/index.js'
import { parseConstraint } from './constraints.js'

const expected = 'expected DependencyCheck.kpt-variants.dev/v1alpha1 (or no functionConfig)'

/**
 * Reads the functionConfig. No functionConfig, or an empty ConfigMap (what
 * `kpt fn eval` passes without `--fn-config`), means: targets from the
 * PackageManifests among the items, default policy.
 */
export function parseConfig(
  fc: KubeObject | undefined,
): { ok: true; config: DependencyCheck } | { ok: false; results: Result[] } {
  if (!fc || (isConfigMap(fc) && Object.keys(fc.getStringMap(['data']) ?? {}).length === 0)) {
    return { ok: true, config: { name: 'dependency-check', targets: [], policy: { ...defaultDependencyPolicy } } }
  }
  if (!isDependencyKind(fc, dependencyCheckKind)) {
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
  const read = readDependencyCheck(fc)
  if (!read.ok)
    return { ok: false, results: read.errors.map((e) => newResult('error', e.message, { object: fc, field: e.field })) }
  const results: Result[] = []
  read.value.targets.forEach((t, i) => {
    if (t.constraint === undefined) return
    const parsed = parseConstraint(t.constraint)
    if (!parsed.ok)
      results.push(
        newResult('error', `\`spec.targets[${i}].constraint\` ${parsed.error}`, {
          object: fc,
          field: `spec.targets[${i}].constraint`,
        }),
      )
  })
  return results.length > 0 ? { ok: false, results } : { ok: true, config: read.value }
}
