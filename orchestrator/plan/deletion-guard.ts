/**
 * The deletion guard: a run that would remove (delete, or orphan) more than
 * half of a PackageVariantSet's existing packages, and at least two, is far
 * more likely a mistake (a relabelled fleet, a set deleted by accident, a
 * selector edited wrong) than a decision. Such a set is held: none of its
 * packages is written or removed in the run, which fails with the count, the
 * reason and how to allow it, as kapp refuses to delete all of an app's
 * resources without `--dangerous-allow-empty-list-of-resources`. Pure: the
 * run counts, this decides.
 */
import type { KubeObject } from '../../functions/krm/index.js'
import { objectKey } from '../fleet/fleet.js'

/** The annotation on a PackageVariantSet that lets runs remove any number of its packages. */
export const allowMassDeletionAnnotation = 'kpt-variants.dev/allow-mass-deletion'

/** `--max-deletions`: at most this many packages of a set, or this share of them. */
export type DeletionLimit = { count: number } | { percent: number }

/** How a run guards deletions: the limit (default 50%), or `--allow-deletions`. */
export interface DeletionGuardSettings {
  maxDeletions?: DeletionLimit
  allowDeletions?: boolean
}

/** The default limit: more than half of a set's packages (and at least two) is refused. */
export const defaultDeletionLimit: DeletionLimit = { percent: 50 }

/** One package a run would remove, as the guard counts it. */
export interface GuardedRemoval {
  /** `<repo>/<package>`. */
  path: string
  /** The set its owner belonged to (`namespace/name`), from its ownership record. */
  set: string
  status: 'deleted' | 'orphaned'
}

/** A set the guard holds, and what to tell the user. */
export interface HeldSet {
  set: string
  removals: number
  existing: number
  message: string
}

/** What the guard knows of a set besides its removals. */
export interface SetStanding {
  /** Its packages in the output before the run, including those it would remove. */
  existing: number
  /** Why its targets went, when the run knows (its selectors' empty matches). */
  emptyMatches: readonly string[]
}

/** What is refused, in the guard's message: a render's removals, or `publish`'s removal drafts. */
export interface GuardedAction {
  /** Who would remove: `the run`, `publishing its removal drafts`. */
  actor: string
  /** What was done instead: `Nothing of the set was written.` */
  instead: string
}

const renderAction: GuardedAction = { actor: 'the run', instead: 'Nothing of the set was written.' }

/**
 * The sets to hold: those whose removals exceed the limit, unless the run
 * allows deletions or the set carries the annotation. `sets`: the fleet's
 * PackageVariantSets (a set no longer among them was removed from the fleet).
 */
export function guardDeletions(
  removals: readonly GuardedRemoval[],
  standing: (set: string) => SetStanding,
  sets: readonly KubeObject[],
  settings: DeletionGuardSettings,
  action: GuardedAction = renderAction,
): HeldSet[] {
  if (settings.allowDeletions) return []
  const limit = settings.maxDeletions ?? defaultDeletionLimit
  const bySet = new Map<string, GuardedRemoval[]>()
  for (const r of removals) bySet.set(r.set, [...(bySet.get(r.set) ?? []), r])
  const fleetSets = new Map(sets.map((s) => [objectKey(s), s]))
  const held: HeldSet[] = []
  for (const [set, removed] of [...bySet].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const object = fleetSets.get(set)
    if (object?.getAnnotation(allowMassDeletionAnnotation) === 'true') continue
    const { existing: counted, emptyMatches } = standing(set)
    const existing = Math.max(counted, removed.length)
    if (!exceeds(removed.length, existing, limit)) continue
    const why = !object
      ? 'the PackageVariantSet is no longer in the fleet'
      : emptyMatches.length > 0
        ? `their targets no longer match (${emptyMatches.join('; ')})`
        : 'their targets no longer match'
    held.push({
      set,
      removals: removed.length,
      existing,
      message: `${action.actor} would ${verbOf(removed)} ${removed.length} of its ${existing} packages (${listed(removed.map((r) => r.path))}), more than ${describeLimit(limit)}: ${why}. ${action.instead} If this is meant: --allow-deletions for one run, --max-deletions N or P% for another limit, or the annotation ${allowMassDeletionAnnotation}: "true" on the set`,
    })
  }
  return held
}

/** True when removing `count` of `existing` packages is more than the limit allows. */
function exceeds(count: number, existing: number, limit: DeletionLimit): boolean {
  if ('count' in limit) return count > limit.count
  // A share never refuses one removal alone: one cluster relabelled out of a small set is routine.
  return count >= 2 && count * 100 > existing * limit.percent
}

function describeLimit(limit: DeletionLimit): string {
  if ('count' in limit) return `the --max-deletions limit of ${limit.count}`
  return limit.percent === 50
    ? 'the deletion guard allows (half of a set, and at least 2)'
    : `the --max-deletions limit of ${limit.percent}% (and at least 2)`
}

function verbOf(removed: readonly GuardedRemoval[]): string {
  const deleted = removed.some((r) => r.status === 'deleted')
  const orphaned = removed.some((r) => r.status === 'orphaned')
  return deleted && orphaned ? 'delete or orphan' : deleted ? 'delete' : 'orphan'
}

function listed(paths: readonly string[]): string {
  const shown = [...paths].sort().slice(0, 3)
  return paths.length > shown.length ? `${shown.join(', ')} and ${paths.length - shown.length} more` : shown.join(', ')
}
