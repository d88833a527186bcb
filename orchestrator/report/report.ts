/** What a render did, per variant and in total: the data both reporters print. */
import type { MergeConflict } from '../merge/update.js'
import type { Failure } from './failure.js'

export type { Failure, FailureCode } from './failure.js'

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
  /** The PackageVariantSet that generated the PackageVariant (`ns/name`). */
  set?: string
  /** The PackageVariant's labels (a set's template gives them), by which the fleet page filters. */
  labels?: Record<string, string>
  /** The upstream revision rendered, e.g. `blueprints/nginx v2`. */
  upstream?: string
  /** For an update: the revision the package came from (`nginx/v1`, or a commit). */
  previousUpstream?: string
  /**
   * When it follows a version (`kpt-variants.dev/upstream-version`): the
   * constraint, the version it renders, and the newest published version
   * beyond the constraint, when there is a newer one.
   */
  upstreamVersion?: { constraint: string; version: string; newest?: string }
  /** Objects config injection put in the package: `Kind name <- injected name`. */
  injected?: string[]
  /** With `--git`: the draft branch holding the change (`drafts/<package>/<workspace>`). */
  draft?: string
  /** With `--git --publish`: the tag of the revision published (`<package>/v<N>`). */
  published?: string
  /** Why its draft was not published (`--git --publish`), or with `--out` its change not written: a rollout, or a draft waiting for review. */
  held?: string
  /**
   * Why its package may not be published: a readiness gate of its Kptfile
   * whose condition is not True (`not ready: <type> <status>: <message>`).
   */
  notReady?: string
  /** Why it failed: each a code (failure.ts, docs/reports.md) and a message. */
  reasons: Failure[]
  warnings: string[]
  conflicts: ConflictReport[]
  /** The unified diff of the change (`--dry-run --diff`). */
  diff?: string
  /**
   * What the package declares to the dependency check (its PackageManifest):
   * its name and version, and the packages of its repository it needs, which
   * must be published before it.
   */
  manifest?: { name: string; version?: string; requires: string[] }
  /** A dependency's row: who needs it, with their ranges (`edge-monitor >=1.13.0`). */
  requiredBy?: string[]
  /** A package deleted or orphaned because its PackageVariant now renders another one (`<repo>/<package>`). */
  movedTo?: string
  /**
   * The PackageVariant's `spec.labels` and `spec.annotations`, which Porch puts
   * on the downstream revisions it creates: here on each draft (its commit
   * message), and so on the revision it is published as.
   */
  revisionLabels?: Record<string, string>
  revisionAnnotations?: Record<string, string>
}

/** One step of a downstream repository's dependency plan (`configure`: a configured dependency rendered again at its version, its configuration changed). */
export interface DependencyStepReport {
  action: 'install' | 'upgrade' | 'downgrade' | 'remove' | 'configure'
  /** The package's name (its PackageManifest's). */
  package: string
  /** The version installed or moved to. */
  version?: string
  /** The version before. */
  from?: string
  /** The package's path in the repository. */
  path: string
  /** Who needs it, with the range each needs (`edge-monitor >=1.13.0`). */
  requiredBy: string[]
  /**
   * `done`: carried out (on a dry run: would be); `planned`: only reported
   * (`--dependencies check`); `failed`: it could not be (`reason`);
   * `outside-git`: installed outside git (an InstalledPackage), so a removal
   * is only reported.
   */
  outcome: 'done' | 'planned' | 'failed' | 'outside-git'
  reason?: string
  /** What is moved or removed was installed outside git (an InstalledPackage): an upgrade puts the version into the repository. */
  outsideGit?: true
}

/** What a downstream repository holds and needs, once its dependency plan is carried out. */
export interface RepositoryDependencies {
  /** The repository. */
  name: string
  /** Its plan, dependencies first, removals last. */
  steps: DependencyStepReport[]
  /** What the repository's DependencyPolicy pins override: dependants whose own range the planned version does not satisfy. */
  overrides?: string[]
  /** Dependencies not removed although nothing rendered needs them: a variant of the repository failed, and its package as it was may. */
  kept?: string[]
  /** The repository's DependencyPolicy, when one selects it: what it sets, and which policy set each field. */
  policy?: string[]
  /** Its packages that declare themselves (a PackageManifest with a version), and what each requires. */
  packages: {
    name: string
    version?: string
    installedAsDependency: boolean
    requires: { name: string; range: string }[]
    outsideGit?: true
  }[]
}

/** The whole run. */
export interface RunReport {
  dryRun: boolean
  variants: VariantReport[]
  /** Problems of the fleet itself (unreadable files, repositories that cannot be read). */
  problems: string[]
  /** Why no package was deleted, when deletions were skipped. */
  deletionsSkipped?: string
  /** Each downstream repository's dependency plan, for the repositories where packages declare dependencies (by name). */
  dependencies?: RepositoryDependencies[]
  /** Fleet objects likely not meant as written (a Rollout step that can get no variant). */
  warnings?: string[]
  /** Where each Rollout stands after the run (when the run paced one). */
  rollouts?: RolloutSummary[]
}

/** A step as the summary prints it: `edge-03: upgrade cert-manager v1.12.3 -> v1.14.4, required by nginx >= v1.13.0`. */
export function describeStep(repo: string, step: DependencyStepReport): string {
  const what =
    step.action === 'install'
      ? `install ${step.package} ${step.version}`
      : step.action === 'remove'
        ? `remove ${step.package}${step.from ? ` ${step.from}` : ''} (nothing needs it any more)`
        : step.action === 'configure'
          ? `configure ${step.package} ${step.version} (its configuration changed)`
          : `${step.action} ${step.package} ${step.from} -> ${step.version}`
  const where = `${step.path === step.package ? '' : ` at ${step.path}`}${step.outsideGit && step.action !== 'remove' ? ' (installed outside git until now)' : ''}`
  const why = step.requiredBy.length > 0 ? `, required by ${step.requiredBy.join(', ')}` : ''
  const outcome =
    step.outcome === 'planned'
      ? ' [planned]'
      : step.outcome === 'outside-git'
        ? ' [installed outside git: not changed]'
        : step.outcome === 'failed'
          ? ` [failed: ${step.reason}]`
          : ''
  return `${repo}: ${what}${where}${why}${outcome}`
}

/** Counts of the dependency steps carried out (or planned) across the run. */
export function countDependencySteps(report: RunReport): {
  install: number
  upgrade: number
  downgrade: number
  remove: number
  configure: number
} {
  const counts = { install: 0, upgrade: 0, downgrade: 0, remove: 0, configure: 0 }
  for (const repo of report.dependencies ?? [])
    for (const step of repo.steps) if (step.outcome === 'done' || step.outcome === 'planned') counts[step.action]++
  return counts
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
  const counts: Record<VariantStatus, number> = {
    created: 0,
    updated: 0,
    unchanged: 0,
    deleted: 0,
    orphaned: 0,
    failed: 0,
  }
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

/** A row of a dependency the run installed, moved or removed, not a PackageVariant's package. */
export function isDependencyRow(v: VariantReport): boolean {
  return v.subject.startsWith('Dependency ')
}

/**
 * The run's totals as one line, the way both reporters print them: the
 * variants by status (dependencies' rows apart), how many a rollout `held`
 * back, and the dependency steps, carried out or (a dry run, `--dependencies
 * check`) planned. `number` styles each count (Markdown makes them bold).
 */
export function totalsLine(
  report: RunReport,
  order: readonly VariantStatus[],
  number: (n: number) => string = String,
  extra: string[] = [],
  held = 0,
): string {
  const variants = report.variants.filter((v) => !isDependencyRow(v))
  const counts = countByStatus({ ...report, variants })
  const parts = order
    .filter((s) => counts[s] > 0 || ['created', 'updated', 'unchanged', 'failed'].includes(s))
    .map((s) => `${number(counts[s])} ${s}`)
  parts.push(...extra)
  const planned = (report.dependencies ?? []).filter((r) => r.steps.length > 0)
  let dependencies = ''
  if (planned.length > 0) {
    const steps = countDependencySteps(report)
    const planning = report.dryRun || planned.some((r) => r.steps.some((s) => s.outcome === 'planned'))
    const [install, move, remove] = planning
      ? ['to install', 'to upgrade or downgrade', 'to remove']
      : ['installed', 'upgraded or downgraded', 'removed']
    const configured =
      steps.configure > 0 ? `, ${number(steps.configure)} ${planning ? 'to configure' : 'configured'}` : ''
    dependencies = `; dependencies: ${number(steps.install)} ${install}, ${number(steps.upgrade + steps.downgrade)} ${move}, ${number(steps.remove)} ${remove}${configured}`
  }
  const heldBack = held > 0 ? `; ${number(held)} held back` : ''
  return `${report.dryRun ? 'Dry run (nothing written): ' : ''}${variants.length} variant(s): ${parts.join(', ')}${heldBack}${dependencies}`
}
