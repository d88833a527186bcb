/**
 * `kpt-variants status`, pure: a line per variant of the fleet from what
 * status read of the output (read-output.ts), as Porch's `porchctl rpkg get`
 * shows a fleet. With `--git` (the default): the published revision, the
 * open draft; with `--out DIR`: the package in the directory. For both: the
 * upstream revision the package holds against the one its PackageVariant
 * wants, local edits, the last failure; and a line per package a render
 * installed as a dependency.
 */
import type { LastFailures } from '../output/last-failures.js'
import type { PackageRecord } from '../package/ownership.js'
import type { PlanFailure, PlannedVariant } from '../plan/plan.js'
import type { RepositoryDependencies } from '../report/report.js'
import { messagesOf } from '../report/failure.js'
import type { Failure } from '../report/failure.js'
import { revisionLabel } from '../upstream/revisions.js'
import { alignColumns } from '../util/columns.js'

/** Where status reads the packages: the downstream repositories (`--git`, the default), or a directory (`--out DIR`). */
export type StatusOutput = 'git' | 'directory'

/**
 * Whether a package differs from what the last render left there (with
 * `--git`: from its latest published revision); `unknown` when nothing says
 * what that was.
 */
export type LocalEdits = 'none' | 'edited' | 'unknown'

/** One variant's line, or a dependency's. */
export interface VariantStatusRow {
  /** The PackageVariant (`ns/name`); for a package a render installed as a dependency, `Dependency <repo>/<package>` as render's report names it. */
  variant: string
  /** `<repo>/<package>`, when known. */
  package?: string
  /** The upstream revision the PackageVariant wants, e.g. `blueprints/nginx v2` (its tag in parentheses). */
  upstream?: string
  /** When it follows a version: the constraint, the version it wants, the newest published beyond the constraint. */
  upstreamVersion?: { constraint: string; version: string; newest?: string }
  /** `--git`: the latest published revision's tag, e.g. `nginx/v2`. */
  published?: string
  /** `--git`: the open draft's branch. */
  draft?: string
  /**
   * `current`: the package (with `--git` the published one) is at the wanted
   * upstream revision; `behind`: at another; `unpublished` (`--git`): never
   * published; `unrendered` (`--out`): not in the directory; `installed`: a
   * dependency's package, which no PackageVariant wants at a revision.
   */
  state?: 'current' | 'behind' | 'unpublished' | 'unrendered' | 'installed'
  /** `--git`: the upstream revision the published package came from (its upstreamLock: the ref, else the commit). */
  publishedUpstream?: string
  /** `--out`: the upstream revision the package in the directory was rendered from (its upstreamLock). */
  renderedUpstream?: string
  localEdits?: LocalEdits
  /** Why local edits are unknown, or (`--git`) what edited the package. */
  localEditsReason?: string
  /** A dependency's own PackageManifest: its name and version. */
  dependency?: { name: string; version?: string }
  /** Why the last render of this variant failed, or why it cannot be planned now (`<time>: <messages>` for a render's). */
  lastFailure?: string
  /** The reasons of lastFailure, each with its code (docs/reports.md, "Failure codes"). */
  failures?: Failure[]
  /** Why its package (with `--git` its open draft, else the published one) is not ready: `not ready: <gate> <status>: <message>`. */
  notReady?: string
  /** `--git`: the labels and annotations of its latest revision (the draft's, else the published one's), as Porch keeps them on a PackageRevision. */
  labels?: Record<string, string>
  annotations?: Record<string, string>
}

/** What `status --json` prints. */
export interface FleetStatus {
  apiVersion: 'kpt-variants.dev/v1alpha1'
  kind: 'FleetStatus'
  output: StatusOutput
  variants: VariantStatusRow[]
  /** What each downstream repository holds and what its packages need, where a package declares itself (the fleet page draws it). */
  repositories: Pick<RepositoryDependencies, 'name' | 'packages'>[]
}

/** A package as status read it from the output. */
export interface StoredState {
  /** Its root Kptfile's record (with `--git`, the published package's); absent when there is no such package. */
  record?: PackageRecord
  /** `--git`: the latest published revision's tag, and the open draft's branch. */
  published?: string
  draft?: string
  /** Its root PackageManifest (with `--git`, the published package's, else the draft's). */
  manifest?: { name: string; version?: string }
  edits?: { state: LocalEdits; reason?: string }
  /** Why the package (with `--git`, its open draft, else the published one) is not ready: unmet readiness gates. */
  notReady?: string
  /** `--git`: the labels and annotations of the revision (the PackageVariant's `spec.labels` and `spec.annotations` when its draft was written). */
  labels?: Record<string, string>
  annotations?: Record<string, string>
}

/** What status read of the output: the planned variants' packages and the dependencies a render installed, by path; the dependency graphs. */
export interface OutputState {
  output: StatusOutput
  packages: ReadonlyMap<string, StoredState>
  dependencies: ReadonlyMap<string, StoredState>
  repositories: FleetStatus['repositories']
}

/** The status of every planned (and unplannable) variant of a fleet and of every dependency, in package order. */
export function fleetStatus(
  plan: {
    variants: readonly (Pick<PlannedVariant, 'key' | 'downstream' | 'upstream'> &
      Partial<Pick<PlannedVariant, 'version'>>)[]
    failures: readonly PlanFailure[]
  },
  read: OutputState,
  failures: LastFailures,
): FleetStatus {
  const rows: VariantStatusRow[] = []
  for (const v of plan.variants) rows.push(variantRow(v, read, failures))
  for (const entry of read.dependencies) rows.push(dependencyRow(entry, read.output, failures))
  for (const f of plan.failures) rows.push(unplannedRow(f))
  const key = (r: VariantStatusRow) => r.package ?? '\uffff'
  rows.sort((a, b) =>
    key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a.variant < b.variant ? -1 : a.variant > b.variant ? 1 : 0,
  )
  return {
    apiVersion: 'kpt-variants.dev/v1alpha1',
    kind: 'FleetStatus',
    output: read.output,
    variants: rows,
    repositories: read.repositories,
  }
}

/** A planned variant's row: its package as the output holds it, current or behind its upstream, and its last failure. */
function variantRow(
  v: Parameters<typeof fleetStatus>[0]['variants'][number],
  read: OutputState,
  failures: LastFailures,
): VariantStatusRow {
  const path = `${v.downstream.repo}/${v.downstream.package}`
  const stored = read.packages.get(path) ?? {}
  const row: VariantStatusRow = {
    variant: v.key,
    package: path,
    upstream: `${v.upstream.repository}/${v.upstream.packageName} ${revisionLabel(v.upstream)} (${v.upstream.ref})`,
  }
  if (v.version) row.upstreamVersion = { ...v.version }
  placed(row, stored, read.output)
  const lock = stored.record?.lock
  if (!stored.record) row.state = read.output === 'git' ? 'unpublished' : 'unrendered'
  else row.state = lock?.commit === v.upstream.commit ? 'current' : 'behind'
  edits(row, stored)
  failed(row, `PackageVariant ${v.key}`, failures)
  return row
}

/** A dependency's row: installed, or (`--git`) not published yet. */
function dependencyRow(
  [path, stored]: [string, StoredState],
  output: StatusOutput,
  failures: LastFailures,
): VariantStatusRow {
  const row: VariantStatusRow = { variant: `Dependency ${path}`, package: path }
  placed(row, stored, output)
  row.state = stored.record ? 'installed' : 'unpublished'
  if (stored.manifest) row.dependency = { ...stored.manifest }
  edits(row, stored)
  failed(row, row.variant, failures)
  return row
}

/** A variant the plan could not make: its row says why, and where it would go if that is known. */
function unplannedRow(f: PlanFailure): VariantStatusRow {
  const row: VariantStatusRow = {
    variant: f.subject.replace(/^PackageVariant /, ''),
    lastFailure: f.message,
    failures: [{ code: f.code, message: f.message }],
  }
  if (f.downstream) row.package = f.downstream
  return row
}

/** The last run's failure of `subject`, if it failed. */
function failed(row: VariantStatusRow, subject: string, failures: LastFailures): void {
  const f = failures[subject]
  if (!f) return
  row.lastFailure = `${f.time}: ${messagesOf(f.reasons)}`
  row.failures = f.reasons.map((r) => ({ ...r }))
}

/** Where the package is: its tag and draft (`--git`), the upstream revision it holds. */
function placed(row: VariantStatusRow, stored: StoredState, output: StatusOutput): void {
  if (stored.published) row.published = stored.published
  if (stored.draft) row.draft = stored.draft
  const lock = stored.record?.lock
  if (!stored.record) return
  const revision = lock ? lock.ref || lock.commit.slice(0, 12) : 'none'
  if (output === 'git') row.publishedUpstream = revision
  else row.renderedUpstream = revision
}

function edits(row: VariantStatusRow, stored: StoredState): void {
  if (stored.notReady) row.notReady = stored.notReady
  if (stored.labels && Object.keys(stored.labels).length > 0) row.labels = stored.labels
  if (stored.annotations && Object.keys(stored.annotations).length > 0) row.annotations = stored.annotations
  if (!stored.edits) return
  row.localEdits = stored.edits.state
  if (stored.edits.reason) row.localEditsReason = stored.edits.reason
}

/** The status as a table: a line per variant (`--git`: with its published revision and draft), the failures and unknown edits below. */
export function formatStatus(status: Pick<FleetStatus, 'output' | 'variants'>): string {
  const rows = status.variants
  const git = status.output === 'git'
  const header = ['PACKAGE', 'VARIANT', ...(git ? ['PUBLISHED', 'DRAFT'] : []), 'EDITS', 'UPSTREAM']
  const cells = rows.map((r) => [
    r.package ?? '-',
    r.variant,
    ...(git ? [r.published ?? '-', r.draft ?? '-'] : []),
    r.localEdits ?? '-',
    upstreamCell(r),
  ])
  const lines = alignColumns(header, cells)
  const failed = rows.filter((r) => r.lastFailure)
  if (failed.length > 0) {
    lines.push('', 'Last failures:')
    for (const r of failed)
      lines.push(
        `  ${r.package ?? r.variant}: ${r.lastFailure}${r.failures ? ` [${[...new Set(r.failures.map((f) => f.code))].join(', ')}]` : ''}`,
      )
  }
  const unready = rows.filter((r) => r.notReady)
  if (unready.length > 0) {
    lines.push('', `Not ready (${git ? 'not published' : 'incomplete'} until every readiness gate is True):`)
    for (const r of unready) lines.push(`  ${r.package ?? r.variant}: ${r.notReady}`)
  }
  // Edits unknown for the same reason are usually many packages (another --cache, say): one line per reason.
  const unknown = new Map<string, number>()
  for (const r of rows)
    if (r.localEdits === 'unknown')
      unknown.set(r.localEditsReason ?? '', (unknown.get(r.localEditsReason ?? '') ?? 0) + 1)
  if (unknown.size > 0) {
    lines.push('', 'Local edits unknown:')
    for (const [reason, count] of unknown) lines.push(`  ${count} package(s): ${reason}`)
  }
  return `${lines.join('\n')}\n`
}

function upstreamCell(r: VariantStatusRow): string {
  const held = r.publishedUpstream ?? r.renderedUpstream
  if (r.state === 'installed' || (r.dependency && r.state)) {
    const version = r.dependency ? `${r.dependency.name}${r.dependency.version ? ` ${r.dependency.version}` : ''}` : ''
    return `${r.state}: ${[version, held && `(${held})`].filter(Boolean).join(' ') || '-'}`
  }
  const v = r.upstreamVersion
  const version = v ? ` = ${v.version} by ${JSON.stringify(v.constraint)}${v.newest ? `; newest ${v.newest}` : ''}` : ''
  if (r.state === 'behind') return `behind: ${held} -> ${r.upstream}${version}`
  return r.state ? `${r.state}: ${r.upstream}${version}` : '-'
}
