/**
 * A render of part of a fleet (the controller's: `kpt-variants controller`
 * renders only the PackageVariants a change affects). The whole fleet is
 * loaded and planned as always, so every variant is planned exactly as a full
 * render plans it; then the run renders only the variants in scope, opens
 * only the downstream repositories in scope, and removes only packages whose
 * owner is in scope. The rest of the fleet is left alone: not rendered, not
 * reported, never abandoned.
 */
import type { Fleet } from '../fleet/fleet.js'
import type { PackageFiles } from '../package/files.js'
import { readPackageRecord } from '../package/ownership.js'
import type { Abandonment } from './abandoned.js'
import type { FleetPlan } from './plan.js'

/** What a scoped run renders: plain data, so that every thread of the run scopes alike. */
export interface RenderScope {
  /** The PackageVariants (`namespace/name`) to render, or, when gone from the plan, whose packages to remove. */
  variants: string[]
  /** The downstream repositories where those variants' packages are or were: the only ones a `--git` run opens. */
  repositories: string[]
  /** The packages (`repo/package`) those variants rendered before: the only other packages of the output the run reads. */
  packages: string[]
  /**
   * Whether one of those packages declared something to the dependency check
   * (a PackageManifest, a CRD), or it is not known: the run then plans the
   * repositories' dependencies, reading every package they hold.
   */
  declared: boolean
}

/**
 * The plan of a scoped run: the planned variants in scope, the failures of
 * variants in scope and the failures that belong to no variant (a set's, a
 * target's, a repository's), which keep the packages they may still want.
 */
export function scopedPlan(plan: FleetPlan, scope: RenderScope): FleetPlan {
  const keys = new Set(scope.variants)
  return {
    ...plan,
    variants: plan.variants.filter((v) => keys.has(v.key)),
    failures: plan.failures.filter((f) => f.key === undefined || keys.has(f.key)),
  }
}

/** The fleet as a scoped `--git` run opens it: only the deployment repositories in scope (see openRepositories). */
export function scopedRepositories(fleet: Fleet, scope: RenderScope): Fleet {
  const names = new Set(scope.repositories)
  return { ...fleet, repositories: fleet.repositories.filter((r) => names.has(r.name)) }
}

/** The deletion test of a scoped run: a package may go only when its owner is in scope. */
export function scopedAbandonment(
  abandoned: Abandonment | undefined,
  scope: RenderScope | undefined,
): Abandonment | undefined {
  if (!abandoned || !scope) return abandoned
  const keys = new Set(scope.variants)
  return {
    claimed: (path) => abandoned.claimed(path),
    entry: (path: string, files: PackageFiles) => {
      const owner = readPackageRecord(files).owner
      return owner !== undefined && keys.has(owner) ? abandoned.entry(path, files) : undefined
    },
  }
}

/**
 * True when a scoped run leaves every repository's dependency plan as it is:
 * none of its variants' packages declared anything to the dependency check
 * before, and none does now (`rendered`: what each declares, as rendered).
 */
export function leavesDependencies(
  scope: RenderScope,
  rendered: readonly { dependencies: readonly unknown[] }[],
): boolean {
  return !scope.declared && rendered.every((p) => p.dependencies.length === 0)
}
