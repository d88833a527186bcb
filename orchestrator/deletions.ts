/**
 * Packages whose PackageVariant is gone: deleted, or with deletionPolicy
 * orphan, disowned (the owner annotations removed), as Porch's PackageVariant
 * finalizer does. A package is kept when it may still be wanted: its path is
 * some variant's downstream, its owner is in the plan or failed in it, its set
 * could not be expanded completely, its owner belongs to another shard, or the
 * fleet could not be read completely.
 */
import { join } from 'node:path'
import type { Fleet } from './fleet/fleet.js'
import { findPackages, readPackageDirectory } from './output/directory.js'
import type { DirectoryWriter } from './output/directory.js'
import { packageDiff } from './output/diff.js'
import { inShard, objectKey } from './plan.js'
import type { FleetPlan, Shard } from './plan.js'
import type { RunReport, VariantReport } from './report/report.js'
import { orphanPackage, readPackageRecord } from './variant/ownership.js'

/** What the deletion pass needs beyond the plan. */
export interface DeletionSettings {
  outDir: string
  dryRun: boolean
  diff: boolean
  shard?: Shard
}

/** Deletes or orphans abandoned packages (only reports them with `dryRun`), adding one entry per package to the report. */
export function deleteAbandoned(plan: FleetPlan, fleet: Fleet, report: RunReport, writer: DirectoryWriter, settings: DeletionSettings): void {
  if (fleet.problems.length > 0) {
    report.deletionsSkipped = 'the fleet could not be read completely'
    return
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
  for (const path of findPackages(settings.outDir)) {
    if (claimed.has(path) || claimedRepos.has(path.slice(0, path.indexOf('/')))) continue
    const files = readPackageDirectory(join(settings.outDir, path))
    if (!files) continue
    const record = readPackageRecord(files)
    if (!record.owner || owners.has(record.owner)) continue
    if (record.set && plan.incompleteSets.has(record.set)) continue
    if (settings.shard && !inShard(record.owner, settings.shard)) continue
    // A PackageVariant of the fleet's own is never gone (whatever its set says).
    if (standalone.has(record.owner)) continue
    const orphan = record.deletionPolicy === 'orphan'
    const entry: VariantReport = { subject: `PackageVariant ${record.owner}`, path, status: orphan ? 'orphaned' : 'deleted', reasons: [], warnings: [], conflicts: [] }
    if (settings.dryRun) {
      if (settings.diff) entry.diff = packageDiff(path, files, orphan ? orphanPackage(files) : undefined)
    } else if (orphan) writer.writePackage(path, orphanPackage(files))
    else writer.removePackage(path)
    report.variants.push(entry)
  }
}
