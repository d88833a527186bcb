/** The human report on stderr: one line per variant that did something, the reasons, warnings and conflicts, then the totals. */
import { describeFailure } from './failure.js'
import { countByStatus, countDependencySteps, describeStep, totalsLine } from './report.js'
import type { RunReport, VariantReport } from './report.js'

/** How the reports are printed: `debug` (`--debug`) adds an internal error's stack. */
export interface FormatOptions {
  debug?: boolean
}

/** The summary table and details, as text. */
export function formatSummary(report: RunReport, options: FormatOptions = {}): string {
  const lines: string[] = []
  const shown = report.variants
  if (shown.length > 0) {
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
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
    const format = (cells: string[]) =>
      cells
        .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd()
    lines.push(format(header), ...rows.map(format))
  }
  const failed = shown.filter((v) => v.status === 'failed')
  if (failed.length > 0) {
    lines.push('', 'Failed:')
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
  }
  const conflicted = shown.filter((v) => v.conflicts.length > 0)
  if (conflicted.length > 0) {
    lines.push('', 'Conflicts (a field changed both upstream and downstream):')
    for (const v of conflicted) {
      for (const c of v.conflicts) {
        const took = c.resolution === 'fail' ? 'failed' : `took ${c.resolution}`
        lines.push(
          `  ${v.path}: ${c.file} ${c.resource} ${c.field}: downstream ${c.local ?? '(deleted)'}, upstream ${c.upstream ?? '(deleted)'} (was ${c.origin ?? '(absent)'}): ${took}`,
        )
      }
    }
  }
  // Not ready and not already said (a held draft's reason is that it is not ready).
  const unready = shown.filter((v) => v.notReady && v.held !== v.notReady)
  if (unready.length > 0) {
    lines.push('', 'Not ready (readiness gates not all True: a draft of it is not published):')
    for (const v of unready) lines.push(`  ${v.path ?? v.subject}: ${v.notReady}`)
  }
  const held = shown.filter((v) => v.held)
  if (held.length > 0) {
    lines.push('', 'Held back (not published):')
    for (const v of held) lines.push(`  ${v.path ?? v.subject}: ${v.held}`)
  }
  for (const r of report.rollouts ?? []) {
    lines.push('', `Rollout ${r.rollout} (${r.revision}): ${r.state}: ${r.reason}`)
    for (const step of r.steps) lines.push(`  ${step.name}: ${step.state}${step.reason ? `: ${step.reason}` : ''}`)
  }
  const warned = shown.filter((v) => v.warnings.length > 0)
  if (warned.length > 0) {
    lines.push('', 'Warnings:')
    for (const v of warned) for (const w of v.warnings) lines.push(`  ${v.path ?? v.subject}: ${w}`)
  }
  if ((report.warnings ?? []).length > 0) {
    lines.push('', 'Fleet warnings:')
    for (const w of report.warnings!) lines.push(`  ${w}`)
  }
  if (report.problems.length > 0) {
    lines.push('', 'Fleet problems:')
    for (const p of report.problems) lines.push(`  ${p}`)
  }
  if (report.deletionsSkipped) lines.push('', `No package deleted: ${report.deletionsSkipped}.`)
  const beyond = newerVersions(shown)
  if (beyond.length > 0)
    lines.push('', 'Newer versions beyond the constraints followed:', ...beyond.map((l) => `  ${l}`))
  const planned = (report.dependencies ?? []).filter((r) => r.steps.length > 0)
  if (planned.length > 0) {
    lines.push('', 'Dependencies (each repository in dependency order):')
    for (const repo of planned) for (const step of repo.steps) lines.push(`  ${describeStep(repo.name, step)}`)
  }
  const kept = (report.dependencies ?? []).filter((r) => (r.kept ?? []).length > 0)
  if (kept.length > 0) {
    lines.push('', 'Dependencies not removed:')
    for (const repo of kept) for (const k of repo.kept!) lines.push(`  ${repo.name}: ${k}`)
  }
  const overridden = (report.dependencies ?? []).filter((r) => (r.overrides ?? []).length > 0)
  if (overridden.length > 0) {
    lines.push('', 'Pins overriding what dependants ask (DependencyPolicy):')
    for (const repo of overridden) for (const o of repo.overrides!) lines.push(`  ${repo.name}: ${o}`)
  }
  lines.push(
    '',
    totalsLine(report, ['created', 'updated', 'unchanged', 'deleted', 'orphaned', 'failed'], String, [], held.length),
  )
  return `${lines.join('\n').replace(/^\n/, '')}\n`
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
