/**
 * The deletion guard in a render (plan/deletion-guard.ts decides): after
 * every variant is rendered and the abandoned packages are known, and before
 * the dependency check, each set that would lose too many packages is held.
 * Its removals are dropped, its rendered packages discarded (nothing of the
 * set is written), and its packages stay what the repositories hold, so the
 * dependencies they need stay too. The set fails the run with the reason.
 */
import { stages } from '../output/output.js'
import type { Removal, RunOutput, StoredPackage } from '../output/output.js'
import { readPackageRecord } from '../package/ownership.js'
import { guardDeletions } from '../plan/deletion-guard.js'
import type { GuardedRemoval, HeldSet } from '../plan/deletion-guard.js'
import type { RunReport } from '../report/report.js'
import { failure } from '../report/failure.js'
import type { Pending } from './render-variant.js'
import type { Run } from './setup.js'

/** What the guard leaves of the run: the removals and rendered variants to go on with. */
export interface Guarded {
  removals: Removal[]
  variants: Pending[]
  /** The held sets' rendered variants, reported but not written. */
  held: Pending[]
}

/**
 * Holds the sets the guard refuses: `present` (the output's other packages)
 * gets their packages back, `report` a failure per set.
 */
export async function holdMassDeletions(
  run: Run,
  variants: readonly Pending[],
  removals: readonly Removal[],
  present: Map<string, StoredPackage>,
  report: RunReport,
): Promise<Guarded> {
  const { plan, fleet, settings, output } = run
  // A removal an earlier run already proposed (its open draft is this very change) was counted then; it counts again
  // only when this run would publish it.
  const proposed = (r: Removal) =>
    r.stored.draft !== undefined &&
    (r.orphan
      ? settings.git?.publish !== true && readPackageRecord(r.stored.draft).owner === undefined
      : settings.git?.publishDeletions !== true && r.stored.draft.size === 0)
  const guarded: GuardedRemoval[] = removals.flatMap((r) =>
    r.report.set && r.report.path && !proposed(r)
      ? [{ path: r.report.path, set: r.report.set, status: r.orphan ? ('orphaned' as const) : ('deleted' as const) }]
      : [],
  )
  if (guarded.length === 0) return { removals: [...removals], variants: [...variants], held: [] }
  const standing = (set: string) => ({
    existing:
      guarded.filter((r) => r.set === set).length +
      variants.filter(
        (p) =>
          p.report.set === set && (p.report.status === 'failed' ? present.has(p.path) : p.report.status !== 'created'),
      ).length +
      plan.failures.filter((f) => f.set === set && f.downstream !== undefined && present.has(f.downstream)).length,
    emptyMatches: plan.emptyMatches.get(set) ?? [],
  })
  const heldSets = guardDeletions(guarded, standing, fleet.sets, settings.deletionGuard ?? {})
  if (heldSets.length === 0) return { removals: [...removals], variants: [...variants], held: [] }
  const bySet = new Map<string, HeldSet>(heldSets.map((h) => [h.set, h]))
  for (const h of heldSets)
    report.variants.push({
      subject: `PackageVariantSet ${h.set}`,
      status: 'failed',
      set: h.set,
      reasons: [failure('DeletionGuard', h.message)],
      warnings: [],
      conflicts: [],
    })
  const held = variants.filter((p) => p.report.set !== undefined && bySet.has(p.report.set))
  await keepAsStored(output, held, present)
  for (const p of held) {
    if (p.staged && stages(output)) output.discard(p.staged)
    delete p.staged
    delete p.memo
    delete p.report.diff
    if (p.report.status === 'created' || p.report.status === 'updated')
      p.report.held = `not written: the deletion guard holds PackageVariantSet ${p.report.set} (see its failure)`
  }
  return {
    removals: removals.filter((r) => !(r.report.set && bySet.has(r.report.set))),
    variants: variants.filter((p) => !held.includes(p)),
    held,
  }
}

/** The held variants' packages as the output holds them, among the packages the dependency check sees. */
async function keepAsStored(output: RunOutput, held: readonly Pending[], present: Map<string, StoredPackage>) {
  const existing = held.filter((p) => p.report.status !== 'created' && !present.has(p.path))
  for (const p of existing) {
    const stored = await output.read(p.path)
    if (stored.published || stored.draft) present.set(p.path, stored)
  }
}
