/**
 * The fleet page's data: one small typed model made from the report `--json`
 * prints (`render --report`) or from the status `status --json` prints
 * (`status --html`), so the page shows exactly what those say. Pure: the
 * adapters only rename and classify; the page's script reads nothing else.
 */
import { variantConditions } from '../status/cluster-status.js'
import type { FleetStatus, VariantStatusRow } from '../status/fleet-status.js'
import type { Failure, FailureCode } from '../report/failure.js'
import type { RunReport, VariantReport } from '../report/report.js'
import type { DependencyPackage, PageModel, PageState, PageVariant, RepositoryDependencies } from './types.js'

export type { DependencyPackage, PageModel, PageState, PageVariant, RepositoryDependencies } from './types.js'

/** A report variant, with what later reports add: the rollout step holding it. */
export type ReportVariantInput = VariantReport & { heldBy?: string }

/** A render report, with what later reports add: each repository's dependency graph (issue 29). */
export type ReportInput = Omit<RunReport, 'variants' | 'dependencies'> & {
  variants: readonly ReportVariantInput[]
  dependencies?: RepositoryDependencies[]
}

/** The model of a render's report (`--json`'s `variants`, `problems`, `dryRun`). */
export function modelFromReport(report: ReportInput, title: string): PageModel {
  const variants = report.variants.map(variantFromReport)
  return {
    source: 'render',
    title,
    dryRun: report.dryRun,
    variants,
    problems: [...report.problems],
    repositories: report.dependencies ?? dependenciesFromVariants(variants),
  }
}

function variantFromReport(v: ReportVariantInput): PageVariant {
  const { repo, pkg } = splitPath(v.path)
  const wanted = variantConditions(v.subject.replace(/^PackageVariant /, ''), {
    variants: [],
    failures: [],
    report: { dryRun: false, variants: [v], problems: [] },
    sharded: false,
  })
  return compact({
    repo,
    package: pkg,
    subject: v.subject,
    set: v.set,
    state: reportState(v),
    labels: { ...(v.labels ?? {}) },
    upstream: v.upstream,
    ...followed(v.upstreamVersion),
    previousUpstream: v.previousUpstream,
    published: v.published,
    draft: v.draft,
    heldBy: v.heldBy,
    notReady: v.notReady,
    injected: [...(v.injected ?? [])],
    reasons: v.reasons.map(({ code, message }) => ({ code, message })),
    warnings: [...v.warnings],
    conflicts: [...v.conflicts],
    conditions: wanted?.conditions ?? [],
    dependencyPlan: [
      ...v.reasons.filter((r) => dependencyCodes.has(r.code)).map((r) => r.message),
      ...v.warnings.filter((w) => w.startsWith('dependency ')),
    ],
    diff: v.diff,
  })
}

/** The failures the dependency check makes: the page shows them with the repository's plan too. */
const dependencyCodes: ReadonlySet<FailureCode> = new Set(['DependencyUnresolved', 'DependencyFailed'])

/** The version a variant follows, as the page shows it. */
function followed(version: VariantReport['upstreamVersion']): Pick<PageVariant, 'follows' | 'newest'> {
  if (!version) return {}
  return {
    follows: `${version.version} by ${JSON.stringify(version.constraint)}`,
    ...(version.newest ? { newest: version.newest } : {}),
  }
}

/** The state of a render's variant: failure and conflicts first, then where the change went (draft, tag), then what happened. */
export function reportState(v: ReportVariantInput): PageState {
  if (v.status === 'failed') return 'failed'
  if (v.conflicts.length > 0) return 'conflicts'
  if (v.notReady && !v.published) return 'not-ready'
  if (v.heldBy) return 'held'
  if (v.published) return 'published'
  if (v.draft) return 'draft'
  return v.status
}

/** What `status --json` prints (`FleetStatus`): its rows, the output they were read from, each repository's dependency graph. */
export interface StatusInput {
  /** `git` (the default) or `directory`. */
  output?: FleetStatus['output']
  variants: readonly (VariantStatusRow & { labels?: Record<string, string>; set?: string; heldBy?: string })[]
  repositories?: RepositoryDependencies[]
}

/** The model of a fleet's status. */
export function modelFromStatus(status: StatusInput, title: string): PageModel {
  const output = status.output ?? 'git'
  const variants = status.variants.map((row): PageVariant => {
    const { repo, pkg } = splitPath(row.package)
    const failed = row.lastFailure !== undefined
    // A row without codes (an older status's JSON) shows its failure in its Ready condition only.
    const reasons: Failure[] = row.failures ?? []
    const rendered = row.publishedUpstream ?? row.renderedUpstream
    return compact({
      repo,
      package: pkg,
      // A PackageVariant's key has no space; other rows name their subject (`Dependency edge-06/cert-manager`, `Repository edge-07`).
      subject: row.variant.includes(' ') ? row.variant : `PackageVariant ${row.variant}`,
      set: row.set,
      state: statusState(row, output),
      labels: { ...(row.labels ?? {}) },
      upstream: row.upstream,
      ...followed(row.upstreamVersion),
      previousUpstream: row.state === 'behind' ? rendered : undefined,
      rendered,
      localEdits:
        row.localEdits && (row.localEditsReason ? `${row.localEdits}: ${row.localEditsReason}` : row.localEdits),
      version: row.dependency?.version,
      published: row.published,
      draft: row.draft,
      heldBy: row.heldBy,
      notReady: row.notReady,
      injected: [],
      reasons: reasons.map(({ code, message }) => ({ code, message })),
      warnings: [],
      conflicts: [],
      conditions: failed ? [{ type: 'Ready', status: 'False', reason: 'Error', message: row.lastFailure! }] : [],
      dependencyPlan: reasons.some((r) => dependencyCodes.has(r.code)) ? [row.lastFailure!] : [],
    })
  })
  return {
    source: 'status',
    title,
    dryRun: false,
    variants,
    problems: [],
    repositories: status.repositories ?? dependenciesFromVariants(variants),
  }
}

/** The state of a status row: a failure, an open draft, behind, edited, else where it is (published, rendered, installed) or not. */
export function statusState(row: StatusInput['variants'][number], output: FleetStatus['output'] = 'git'): PageState {
  if (row.lastFailure !== undefined) return 'failed'
  if (row.notReady) return 'not-ready'
  if (row.heldBy) return 'held'
  if (row.draft) return 'draft'
  if (row.state === 'behind') return 'behind'
  if (row.localEdits === 'edited') return 'edited'
  if (row.state === 'current') return output === 'git' ? 'published' : 'current'
  if (row.state === 'installed') return 'installed'
  return output === 'git' ? 'unpublished' : 'unrendered'
}

/**
 * Until reports carry each repository's dependency graph, the graph is what
 * the report knows: the packages rendered into each repository, at the
 * upstream revision they render, with no edges.
 */
export function dependenciesFromVariants(variants: readonly PageVariant[]): RepositoryDependencies[] {
  const byRepo = new Map<string, DependencyPackage[]>()
  for (const v of variants) {
    if (!v.repo || v.state === 'deleted' || v.state === 'orphaned') continue
    let packages = byRepo.get(v.repo)
    if (!packages) byRepo.set(v.repo, (packages = []))
    const version = v.upstream?.split(' ')[1]
    packages.push({ name: v.package, ...(version ? { version } : {}), installedAsDependency: false, requires: [] })
  }
  return [...byRepo].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([name, packages]) => ({ name, packages }))
}

function splitPath(path: string | undefined): { repo: string; pkg: string } {
  if (!path) return { repo: '', pkg: '' }
  const slash = path.indexOf('/')
  return slash < 0 ? { repo: path, pkg: '' } : { repo: path.slice(0, slash), pkg: path.slice(slash + 1) }
}

/** Drops the fields that are undefined, so the embedded JSON carries no empty keys. */
function compact<T extends object>(value: T): T {
  for (const key of Object.keys(value) as (keyof T)[]) if (value[key] === undefined) delete value[key]
  return value
}
