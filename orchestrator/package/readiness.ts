/**
 * Whether a package may be published: every readiness gate of its root
 * Kptfile (`info.readinessGates`) has a `True` condition in its
 * `status.conditions`, as Porch requires before it proposes or approves a
 * revision. A required config-injection point nothing matched, for example,
 * leaves its gate `False` until the object to inject appears.
 */
import { parseValue } from '../../functions/krm/yaml/index.js'
import { describeUnmetGates, unmetReadinessGates } from '../../functions/krm/index.js'
import type { KptCondition } from '../../functions/krm/index.js'
import { fileText } from './files.js'
import type { PackageFile, PackageFiles } from './files.js'

/** Why the package is not ready (`not ready: <type> <status>: <message>; ...`), or undefined when it is. */
export function notReadyReason(files: PackageFiles): string | undefined {
  const kptfile = files.get('Kptfile')
  return kptfile ? kptfileNotReady(kptfile) : undefined
}

/** The same for a root Kptfile's bytes; an unreadable Kptfile has no gates to meet (its render reported it). */
export function kptfileNotReady(kptfile: PackageFile | string): string | undefined {
  const text = typeof kptfile === 'string' ? kptfile : fileText(kptfile)
  // Most packages have no gates: their Kptfile is not parsed at all.
  if (!text.includes('readinessGates')) return undefined
  // Read straight to values where the text is plain YAML (a Kptfile of a render usually is; parseValue does): a
  // thousand-variant fleet's Kptfiles all carry config-injection gates.
  let value: unknown
  try {
    value = parseValue(text, { source: 'Kptfile' })
  } catch {
    return undefined
  }
  const k = (value ?? {}) as { info?: { readinessGates?: unknown }; status?: { conditions?: unknown } }
  const gates = (Array.isArray(k.info?.readinessGates) ? k.info.readinessGates : [])
    .map((g: unknown) => (g as { conditionType?: unknown } | null)?.conditionType)
    .filter((t): t is string => typeof t === 'string' && t !== '')
  if (gates.length === 0) return undefined
  const conditions: KptCondition[] = (Array.isArray(k.status?.conditions) ? k.status.conditions : []).flatMap(
    (c: unknown) => {
      const entry = (c ?? {}) as Record<string, unknown>
      if (typeof entry['type'] !== 'string') return []
      const condition: KptCondition = { type: entry['type'], status: String(entry['status'] ?? '') }
      if (typeof entry['reason'] === 'string') condition.reason = entry['reason']
      if (typeof entry['message'] === 'string') condition.message = entry['message']
      return [condition]
    },
  )
  const unmet = unmetReadinessGates(gates, conditions)
  return unmet.length === 0 ? undefined : `not ready: ${describeUnmetGates(unmet)}`
}
