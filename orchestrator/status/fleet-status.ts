/**
 * `kpt-variants status`: what Porch's `porchctl rpkg get` shows for a
 * fleet's variants, read from the downstream repositories: the published
 * revision, the open draft, whether the published package is at the upstream
 * revision the PackageVariant wants, and the last failure.
 */
import type { RepositorySnapshot } from '../output/git/repository.js'
import { readPackages } from '../output/git/repository.js'
import type { LastFailures } from '../output/last-failures.js'
import type { FleetPlan } from '../plan/plan.js'
import { revisionLabel } from '../upstream/revisions.js'
import { readPackageRecord } from '../package/ownership.js'

/** One variant's line. */
export interface VariantStatusRow {
  variant: string
  /** `<repo>/<package>`, when known. */
  package?: string
  /** The upstream revision the PackageVariant wants, e.g. `blueprints/nginx v2` (its tag in parentheses). */
  upstream?: string
  /** The latest published revision's tag, e.g. `nginx/v2`. */
  published?: string
  /** The open draft's branch. */
  draft?: string
  /** `current`: published at the wanted upstream revision; `behind`: published at another; `unpublished`: never published. */
  state?: 'current' | 'behind' | 'unpublished'
  /** The upstream revision the published package came from (its upstreamLock), when behind. */
  publishedUpstream?: string
  /** Why the last render of this variant failed, or why it cannot be planned now. */
  lastFailure?: string
}

/** The status of every planned (and unplannable) variant of a fleet, in package order. */
export async function fleetStatus(plan: FleetPlan, snapshots: readonly RepositorySnapshot[], failures: LastFailures): Promise<VariantStatusRow[]> {
  const rows: VariantStatusRow[] = []
  const byRepo = new Map(snapshots.map((s) => [s.name, s]))
  const stored = new Map<string, Awaited<ReturnType<typeof readPackages>>>()
  for (const snapshot of snapshots) {
    const packages = plan.variants.filter((v) => v.downstream.repo === snapshot.name).map((v) => v.downstream.package)
    stored.set(snapshot.name, await readPackages(snapshot, packages))
  }
  for (const v of plan.variants) {
    const path = `${v.downstream.repo}/${v.downstream.package}`
    const row: VariantStatusRow = { variant: v.key, package: path, upstream: `${v.upstream.repository}/${v.upstream.packageName} ${revisionLabel(v.upstream)} (${v.upstream.ref})` }
    const snapshot = byRepo.get(v.downstream.repo)
    const pkg = stored.get(v.downstream.repo)?.get(v.downstream.package)
    const revisions = snapshot?.published[v.downstream.package] ?? []
    if (revisions.length > 0) row.published = revisions[revisions.length - 1]!.tag
    const draft = snapshot?.drafts[v.downstream.package]
    if (draft) row.draft = draft.branch
    const lock = pkg?.published ? readPackageRecord(pkg.published).lock : undefined
    if (!pkg?.published) row.state = 'unpublished'
    else if (lock?.commit === v.upstream.commit) row.state = 'current'
    else {
      row.state = 'behind'
      row.publishedUpstream = lock ? lock.ref || lock.commit.slice(0, 12) : 'none'
    }
    const failure = failures[`PackageVariant ${v.key}`]
    if (failure) row.lastFailure = `${failure.time}: ${failure.reasons.join('; ')}`
    rows.push(row)
  }
  for (const f of plan.failures) {
    const row: VariantStatusRow = { variant: f.subject.replace(/^PackageVariant /, ''), lastFailure: f.message }
    if (f.downstream) row.package = f.downstream
    rows.push(row)
  }
  return rows.sort((a, b) => ((a.package ?? '\uffff') < (b.package ?? '\uffff') ? -1 : (a.package ?? '\uffff') > (b.package ?? '\uffff') ? 1 : a.variant < b.variant ? -1 : 1))
}

/** The status as a table: one line per variant, failures below. */
export function formatStatus(rows: readonly VariantStatusRow[]): string {
  const header = ['PACKAGE', 'VARIANT', 'PUBLISHED', 'DRAFT', 'UPSTREAM']
  const cells = rows.map((r) => [
    r.package ?? '-',
    r.variant,
    r.published ?? '-',
    r.draft ?? '-',
    r.state === 'behind' ? `behind: ${r.publishedUpstream} -> ${r.upstream}` : r.state ? `${r.state}: ${r.upstream}` : '-',
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)))
  const line = (c: string[]) =>
    c
      .map((x, i) => (i === c.length - 1 ? x : x.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd()
  const lines = [line(header), ...cells.map(line)]
  const failed = rows.filter((r) => r.lastFailure)
  if (failed.length > 0) {
    lines.push('', 'Last failures:')
    for (const r of failed) lines.push(`  ${r.package ?? r.variant}: ${r.lastFailure}`)
  }
  return `${lines.join('\n')}\n`
}
