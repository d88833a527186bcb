/**
 * Packages whose PackageVariant is gone: deleted, or with deletionPolicy
 * orphan, disowned (the owner annotations removed), as Porch's PackageVariant
 * finalizer does. A package is kept when it may still be wanted: its path is
 * some variant's downstream, its owner is in the plan or failed in it, its set
 * could not be expanded completely, its owner belongs to another shard, or the
 * fleet could not be read completely.
 */
import type { Fleet } from '../fleet/fleet.js'
import type { PackageFiles } from '../package/files.js'
import type { RunReport, VariantReport } from '../report/report.js'
import { readPackageRecord } from '../package/ownership.js'
import { objectKey } from '../fleet/fleet.js'
import { inShard } from './plan.js'
import type { FleetPlan, Shard } from './plan.js'

/** The test every existing downstream package goes through. */
export interface Abandonment {
  /** True when the path is wanted by this run whatever the package holds (checked before reading it). */
  claimed(path: string): boolean
  /** Undefined when the package may still be wanted, else its report entry (`deleted` or `orphaned`). */
  entry(path: string, files: PackageFiles): VariantReport | undefined
}

/** The deletion test of a run; undefined when nothing may be deleted in it (the reason is recorded in the report). */
export function abandonment(plan: FleetPlan, fleet: Fleet, report: RunReport, shard?: Shard): Abandonment | undefined {
  if (fleet.problems.length > 0) {
    report.deletionsSkipped = 'the fleet could not be read completely'
    return undefined
  }
  const owners = new Set(plan.variants.map((v) => v.key))
  const claimed = new Set(plan.variants.map((v) => `${v.downstream.repo}/${v.downstream.package}`))
  const claimedRepos = new Set<string>()
  for (const failure of plan.failures) {
    if (failure.downstream) claimed.add(failure.downstream)
    if (failure.downstreamRepo !== undefined) claimedRepos.add(failure.downstreamRepo)
    if (failure.key) owners.add(failure.key)
  }
  const standalone = new Set(fleet.variants.map((pv) => objectKey(pv)))
  // A variant that failed this run keeps the package it had: its new one was not written.
  const failed = new Set(report.variants.filter((v) => v.status === 'failed' && v.path).map((v) => v.path!))
  return {
    claimed: (path) => claimed.has(path) || claimedRepos.has(path.slice(0, path.indexOf('/'))),
    entry: entryOf,
  }
  function entryOf(path: string, files: PackageFiles): VariantReport | undefined {
    const record = readPackageRecord(files)
    if (!record.owner) return undefined
    const status = record.deletionPolicy === 'orphan' ? 'orphaned' : 'deleted'
    // Its PackageVariant now renders another package (its downstream changed): this one goes, as Porch deletes or orphans it.
    const now = plan.downstreams.get(record.owner)
    if (now !== undefined && now !== path) {
      if (failed.has(now) || (shard && !inShard(path.slice(0, path.indexOf('/')), shard))) return undefined
      return {
        subject: `PackageVariant ${record.owner}`,
        path,
        status,
        ...(record.set ? { set: record.set } : {}),
        reasons: [],
        warnings: [],
        conflicts: [],
        movedTo: now,
      }
    }
    if (owners.has(record.owner)) return undefined
    if (record.set && plan.incompleteSets.has(record.set)) return undefined
    if (shard && !inShard(path.slice(0, path.indexOf('/')), shard)) return undefined
    // A PackageVariant of the fleet's own is never gone (whatever its set says).
    if (standalone.has(record.owner)) return undefined
    return {
      subject: `PackageVariant ${record.owner}`,
      path,
      status,
      ...(record.set ? { set: record.set } : {}),
      reasons: [],
      warnings: [],
      conflicts: [],
    }
  }
}
