/**
 * Draft commit messages: what a reviewer needs to approve a draft without
 * opening it (which PackageVariant, which upstream revision, what changed),
 * and Porch's `kpt:` annotation naming the package and workspace.
 */
import type { VariantReport } from '../../report/report.js'

/** The message of a draft commit for a variant's package at `dir` in workspace `workspace`. */
export function draftMessage(report: VariantReport, dir: string, workspace: string): string {
  const owner = report.subject.replace(/^PackageVariant /, '')
  const lines: string[] = []
  switch (report.status) {
    case 'created':
      lines.push(`Create ${dir} from ${report.upstream}`)
      break
    case 'deleted':
      lines.push(`Remove ${dir}: PackageVariant ${owner} is gone`)
      break
    case 'orphaned':
      lines.push(`Orphan ${dir}: PackageVariant ${owner} is gone (deletionPolicy orphan)`)
      break
    default:
      lines.push(report.previousUpstream ? `Update ${dir} from ${report.previousUpstream} to ${report.upstream}` : `Update ${dir} (${report.upstream})`)
  }
  lines.push('', `PackageVariant: ${owner}`)
  if (report.upstream) lines.push(`Upstream: ${report.upstream}${report.previousUpstream ? ` (was ${report.previousUpstream})` : ''}`)
  if (report.injected && report.injected.length > 0) lines.push(`Injected: ${report.injected.join(', ')}`)
  for (const c of report.conflicts) {
    const took = c.resolution === 'fail' ? 'failed' : `took ${c.resolution}`
    lines.push(`Conflict: ${c.file} ${c.resource} ${c.field}: downstream ${c.local ?? '(deleted)'}, upstream ${c.upstream ?? '(deleted)'}: ${took}`)
  }
  for (const w of report.warnings) lines.push(`Warning: ${w}`)
  lines.push('', `kpt:${JSON.stringify({ package: dir, workspaceName: workspace, revision: '' })}`)
  return `${lines.join('\n')}\n`
}
