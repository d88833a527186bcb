/** What a render did, per variant and in total: the data both reporters print. */
import type { MergeConflict } from '../merge/update.js'

/** The fate of one variant (or of a package whose variant is gone). */
export type VariantStatus = 'created' | 'updated' | 'unchanged' | 'deleted' | 'orphaned' | 'failed'

/** A field changed both upstream and downstream, and how it was resolved: the merge's own record. */
export type ConflictReport = MergeConflict

/** One line of the summary. */
export interface VariantReport {
  /** `PackageVariant ns/name`, or `PackageVariantSet ns/name target …` when no PackageVariant could be made. */
  subject: string
  /** The downstream package, `<repo>/<package>`, when known. */
  path?: string
  status: VariantStatus
  /** The upstream revision rendered, e.g. `blueprints/nginx v2`. */
  upstream?: string
  /** For an update: the revision the package came from (`nginx/v1`, or a commit). */
  previousUpstream?: string
  /** Objects config injection put in the package: `Kind name <- injected name`. */
  injected?: string[]
  /** With `--git`: the draft branch holding the change (`drafts/<package>/<workspace>`). */
  draft?: string
  /** With `--git --publish`: the tag of the revision published (`<package>/v<N>`). */
  published?: string
  /** Why its draft was not published (`--git --publish`), or with `--out` its change not written: a rollout, or a draft waiting for review. */
  held?: string
  /** Why it failed. */
  reasons: string[]
  warnings: string[]
  conflicts: ConflictReport[]
  /** The unified diff of the change (`--dry-run --diff`). */
  diff?: string
}

/** The whole run. */
export interface RunReport {
  dryRun: boolean
  variants: VariantReport[]
  /** Problems of the fleet itself (unreadable files, repositories that cannot be read). */
  problems: string[]
  /** Why no package was deleted, when deletions were skipped. */
  deletionsSkipped?: string
  /** Fleet objects likely not meant as written (a Rollout step that can get no variant). */
  warnings?: string[]
  /** Where each Rollout stands after the run (when the run paced one). */
  rollouts?: RolloutSummary[]
}

/** A Rollout after a run: its state and why, and each step's. */
export interface RolloutSummary {
  /** `namespace/name`. */
  rollout: string
  revision: string
  state: string
  reason: string
  steps: { name: string; state: string; reason: string }[]
}

/** Counts per status. */
export function countByStatus(report: RunReport): Record<VariantStatus, number> {
  const counts: Record<VariantStatus, number> = { created: 0, updated: 0, unchanged: 0, deleted: 0, orphaned: 0, failed: 0 }
  for (const v of report.variants) counts[v.status]++
  return counts
}

/** 1 when anything failed (a variant, or the fleet itself), else 0. */
export function exitCodeOf(report: RunReport): 0 | 1 {
  return report.problems.length > 0 || report.variants.some((v) => v.status === 'failed') ? 1 : 0
}

/** Variants in a stable order: by package path, then subject. */
export function sortReports(reports: VariantReport[]): VariantReport[] {
  return reports.sort((a, b) => cmp(a.path ?? '\uffff', b.path ?? '\uffff') || cmp(a.subject, b.subject))
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
