/** The human report on stderr: one line per variant that did something, the reasons, warnings and conflicts, then the totals. */
import { describeFailure } from './failure.js'
import { countByStatus, countDependencySteps, describeStep, totalsLine } from './report.js'
import type { RunReport, VariantReport } from './report.js'
import { alignColumns } from '../util/columns.js'

/** How the reports are printed: `debug` (`--debug`) adds an internal error's stack. */
export interface FormatOptions {
  debug?: boolean
}

/** The summary table and details, as text. */
export function formatSummary(report: RunReport, options: FormatOptions = {}): string {
  const shown = report.variants
  const lines = shown.length > 0 ? variantTable(shown) : []
  const failed = shown.filter((v) => v.status === 'failed')
  // Headed whenever a variant failed, even one without a reason: the table already says it failed.
  if (failed.length > 0) lines.push('', 'Failed:', ...failureLines(failed, options))
  lines.push(
    ...section(
      'Conflicts (a field changed both upstream and downstream):',
      shown.flatMap((v) => v.conflicts.map((c) => `${v.path}: ${conflictText(c)}`)),
    ),
  )
  // Not ready and not already said (a held draft's reason is that it is not ready).
  const unready = shown.filter((v) => v.notReady && v.held !== v.notReady)
  lines.push(
    ...section(
      'Not ready (readiness gates not all True: a draft of it is not published):',
      unready.map((v) => `${v.path ?? v.subject}: ${v.notReady}`),
    ),
  )
  const held = shown.filter((v) => v.held)
  lines.push(
    ...section(
      'Held back (not published):',
      held.map((v) => `${v.path ?? v.subject}: ${v.held}`),
    ),
  )
  for (const r of report.rollouts ?? []) {
    lines.push('', `Rollout ${r.rollout} (${r.revision}): ${r.state}: ${r.reason}`)
    for (const step of r.steps) lines.push(`  ${step.name}: ${step.state}${step.reason ? `: ${step.reason}` : ''}`)
  }
  lines.push(
    ...section(
      'Warnings:',
      shown.flatMap((v) => v.warnings.map((w) => `${v.path ?? v.subject}: ${w}`)),
    ),
  )
  lines.push(...section('Fleet warnings:', report.warnings ?? []))
  lines.push(...section('Fleet problems:', report.problems))
  if (report.deletionsSkipped) lines.push('', `No package deleted: ${report.deletionsSkipped}.`)
  lines.push(...section('Newer versions beyond the constraints followed:', newerVersions(shown)))
  lines.push(...dependencySections(report.dependencies ?? []))
  lines.push(
    '',
    totalsLine(report, ['created', 'updated', 'unchanged', 'deleted', 'orphaned', 'failed'], String, [], held.length),
  )
  return `${lines.join('\n').replace(/^\n/, '')}\n`
}

/** A titled block of indented lines after a blank one; nothing at all when there are no lines. */
function section(title: string, entries: readonly string[]): string[] {
  return entries.length > 0 ? ['', title, ...entries.map((e) => `  ${e}`)] : []
}

/** One row per variant that did something: its status, package, name, where it went with --git, and its upstream. */
function variantTable(shown: readonly VariantReport[]): string[] {
  // With --git, where each change went: its draft branch, or the tag it was published as.
  const git = shown.some((v) => v.draft || v.published)
  const rows = shown.map((v) => [
    v.status,
    v.path ?? '-',
    v.subject.replace(/^PackageVariant /, ''),
    ...(git ? [v.published ?? v.draft ?? '-'] : []),
    upstreamColumn(v),
  ])
  const header = ['STATUS', 'PACKAGE', 'VARIANT', ...(git ? ['GIT'] : []), 'UPSTREAM']
  return alignColumns(header, rows)
}

/** Each failed variant's reasons, indented. */
function failureLines(failed: readonly VariantReport[], options: FormatOptions): string[] {
  const lines: string[] = []
  for (const v of failed)
    for (const reason of v.reasons) {
      lines.push(`  ${v.path ?? v.subject}: ${describeFailure(reason)}`)
      // An internal error is a bug of kpt-variants, not the user's: say so, and where it happened with --debug.
      if (reason.code === 'InternalError')
        lines.push(
          ...(options.debug && reason.stack
            ? reason.stack.split('\n').map((l) => `    ${l.trim()}`)
            : ['    a bug in kpt-variants, not in the fleet: --debug prints where it happened']),
        )
    }
  return lines
}

/** A conflict as the summary says it: the field, both sides, what they were, and what the run did. */
function conflictText(c: VariantReport['conflicts'][number]): string {
  const took = c.resolution === 'fail' ? 'failed' : `took ${c.resolution}`
  return `${c.file} ${c.resource} ${c.field}: downstream ${c.local ?? '(deleted)'}, upstream ${c.upstream ?? '(deleted)'} (was ${c.origin ?? '(absent)'}): ${took}`
}

/** The dependency plans' steps, the removals held back, and the pins that override dependants. */
function dependencySections(dependencies: NonNullable<RunReport['dependencies']>): string[] {
  return [
    ...section(
      'Dependencies (each repository in dependency order):',
      dependencies.flatMap((repo) => repo.steps.map((step) => describeStep(repo.name, step))),
    ),
    ...section(
      'Dependencies not removed:',
      dependencies.flatMap((repo) => (repo.kept ?? []).map((k) => `${repo.name}: ${k}`)),
    ),
    ...section(
      'Pins overriding what dependants ask (DependencyPolicy):',
      dependencies.flatMap((repo) => (repo.overrides ?? []).map((o) => `${repo.name}: ${o}`)),
    ),
  ]
}

function upstreamColumn(v: VariantReport): string {
  if (!v.upstream) return ''
  const upstream = v.upstreamVersion ? `${v.upstream} = ${v.upstreamVersion.version}` : v.upstream
  return v.previousUpstream ? `${upstream} (from ${v.previousUpstream})` : upstream
}

/**
 * The variants that follow a version while a newer one is published beyond
 * their constraint, one line per set (or PackageVariant), constraint and
 * versions: `PackageVariantSet default/nginx (12): v2.0.0 is published; ">=1.0.0 <2.0.0" follows v1.4.0`.
 */
export function newerVersions(variants: readonly VariantReport[]): string[] {
  const groups = new Map<string, { who: string; count: number; text: string }>()
  for (const v of variants) {
    const u = v.upstreamVersion
    if (!u?.newest || v.status === 'failed') continue
    const who = v.set ? `PackageVariantSet ${v.set}` : v.subject
    const text = `${u.newest} is published; ${JSON.stringify(u.constraint)} follows ${u.version}`
    const key = `${who}\0${text}`
    const group = groups.get(key)
    if (group) group.count++
    else groups.set(key, { who, count: 1, text })
  }
  return [...groups.values()].map((g) => `${g.who}${g.count > 1 ? ` (${g.count})` : ''}: ${g.text}`)
}

/** The machine-readable report (`--json`); an internal error's stack only with `debug`. */
export function formatJson(report: RunReport, options: FormatOptions = {}): string {
  const counts = countByStatus(report)
  const variants = options.debug
    ? report.variants
    : report.variants.map((v) =>
        v.reasons.some((r) => r.stack) ? { ...v, reasons: v.reasons.map(({ stack: _stack, ...r }) => r) } : v,
      )
  return `${JSON.stringify(
    {
      apiVersion: 'kpt-variants.dev/v1alpha1',
      kind: 'RenderReport',
      dryRun: report.dryRun,
      summary: counts,
      variants,
      problems: report.problems,
      ...(report.deletionsSkipped ? { deletionsSkipped: report.deletionsSkipped } : {}),
      ...(report.dependencies
        ? { dependencies: report.dependencies, dependencySummary: countDependencySteps(report) }
        : {}),
      ...(report.warnings && report.warnings.length > 0 ? { warnings: report.warnings } : {}),
      ...(report.rollouts ? { rollouts: report.rollouts } : {}),
    },
    null,
    2,
  )}\n`
}
