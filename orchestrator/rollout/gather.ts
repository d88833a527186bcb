/**
 * Gathering a run's rollouts from the fleet (pure): which Rollout paces
 * which PackageVariantSet, and the revision identity approvals are keyed by.
 * A set whose Rollout cannot be used is held whole, never published freely:
 * a typo in a Rollout must not turn into a fleet-wide publish.
 */
import { isRollout, readRollout } from '../../functions/api/rollout.js'
import type { Rollout } from '../../functions/api/rollout.js'
import { FieldTypeError } from '../../functions/krm/index.js'
import type { KubeObject } from '../../functions/krm/index.js'

/** What paces one set: a Rollout, or nothing may be published (with why). */
export type SetPacing = { rollout: Rollout } | { held: string }

/** The fleet's rollouts by set (`namespace/name`), what is wrong with any of them, and what is likely not meant. */
export interface FleetRollouts {
  bySet: Map<string, SetPacing>
  problems: { file: string; message: string }[]
  warnings: { file: string; message: string }[]
}

/**
 * The upstream revision as rollouts count it, `<ref>@<first 12 of commit>`
 * (`nginx/v3@1a2b3c4d5e6f`, `main@1a2b3c4d5e6f` for a branch head): readable
 * in `status.approvals`, and exact, so a moved tag is a new revision.
 */
export function rolloutRevision(upstream: { ref: string; commit: string }): string {
  return `${upstream.ref}@${upstream.commit.slice(0, 12)}`
}

/** Reads every Rollout among the fleet's objects (their namespaces already defaulted, as the fleet loader does). */
export function readFleetRollouts(objects: readonly KubeObject[]): FleetRollouts {
  const problems: FleetRollouts['problems'] = []
  const warnings: FleetRollouts['warnings'] = []
  const found = new Map<string, { name: string; pacing: SetPacing }[]>()
  for (const object of objects) {
    if (!isRollout(object)) continue
    const file = object.origin?.file ?? ''
    const subject = `Rollout ${object.namespace}/${object.name}`
    const set = setOf(object)
    const read = readRollout(object)
    if (!read.ok) {
      problems.push(...read.errors.map((e) => ({ file, message: `${subject}: ${e.message}` })))
      if (set)
        add(found, `${object.namespace}/${set}`, object.name, {
          held: `held: rollout ${object.name} is invalid: ${read.errors[0]!.message}`,
        })
      continue
    }
    for (const w of read.value.warnings) warnings.push({ file, message: `${subject}: ${w.message}` })
    add(found, `${object.namespace}/${read.value.spec.packageVariantSet}`, object.name, { rollout: read.value })
  }
  const bySet = new Map<string, SetPacing>()
  for (const [set, list] of found) {
    if (list.length === 1) bySet.set(set, list[0]!.pacing)
    else
      bySet.set(set, { held: `held: rollouts ${list.map((r) => r.name).join(' and ')} all pace set ${set}: keep one` })
  }
  return { bySet, problems, warnings }
}

function add(
  found: Map<string, { name: string; pacing: SetPacing }[]>,
  set: string,
  name: string,
  pacing: SetPacing,
): void {
  const list = found.get(set) ?? []
  list.push({ name, pacing })
  found.set(set, list)
}

/** `spec.packageVariantSet` of a Rollout that may be invalid elsewhere. */
function setOf(object: KubeObject): string | undefined {
  try {
    return object.getString(['spec', 'packageVariantSet']) || undefined
  } catch (err) {
    if (err instanceof FieldTypeError) return undefined
    throw err
  }
}
