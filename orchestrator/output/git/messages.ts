/**
 * Draft commit messages: what a reviewer needs to approve a draft without
 * opening it (which PackageVariant, which upstream revision, what changed),
 * and Porch's `kpt:` annotation naming the package and workspace.
 */
import type { VariantReport } from '../../report/report.js'

/** Trailer of a draft: the package's PackageManifest name and version, `<name> <version>`. */
export const packageTrailer = 'Package'
/** Trailer of a draft, one per package of the repository it needs (by name): publish publishes those first. */
export const requiresTrailer = 'Requires'

/** The message of a draft commit for a variant's package at `dir` in workspace `workspace`. */
export function draftMessage(report: VariantReport, dir: string, workspace: string): string {
  const dependency = report.subject.startsWith('Dependency ')
  const owner = report.subject.replace(/^PackageVariant /, '')
  const lines: string[] = []
  switch (report.status) {
    case 'created':
      lines.push(`Create ${dir} from ${report.upstream}`)
      break
    case 'deleted':
      lines.push(dependency ? `Remove ${dir}: no package of the repository needs it any more` : `Remove ${dir}: PackageVariant ${owner} is gone`)
      break
    case 'orphaned':
      lines.push(dependency ? `Orphan ${dir}: no package of the repository needs it any more (deletionPolicy orphan)` : `Orphan ${dir}: PackageVariant ${owner} is gone (deletionPolicy orphan)`)
      break
    default:
      lines.push(report.previousUpstream ? `Update ${dir} from ${report.previousUpstream} to ${report.upstream}` : `Update ${dir} (${report.upstream})`)
  }
  lines.push('', dependency ? `Dependency of: ${report.requiredBy?.length ? report.requiredBy.join(', ') : 'no package any more'}` : `PackageVariant: ${owner}`)
  if (report.upstream) lines.push(`Upstream: ${report.upstream}${report.previousUpstream ? ` (was ${report.previousUpstream})` : ''}`)
  if (report.injected && report.injected.length > 0) lines.push(`Injected: ${report.injected.join(', ')}`)
  for (const c of report.conflicts) {
    const took = c.resolution === 'fail' ? 'failed' : `took ${c.resolution}`
    lines.push(`Conflict: ${c.file} ${c.resource} ${c.field}: downstream ${c.local ?? '(deleted)'}, upstream ${c.upstream ?? '(deleted)'}: ${took}`)
  }
  for (const w of report.warnings) lines.push(`Warning: ${w}`)
  if (report.manifest) {
    lines.push(`${packageTrailer}: ${report.manifest.name}${report.manifest.version ? ` ${report.manifest.version}` : ''}`)
    for (const name of report.manifest.requires) lines.push(`${requiresTrailer}: ${name}`)
  }
  lines.push('', `kpt:${JSON.stringify({ package: dir, workspaceName: workspace, revision: '' })}`)
  return `${lines.join('\n')}\n`
}

/** What a draft's message declares of its package: its name and the packages it needs (none for a draft written without them). */
export function draftDeclaration(commit: string): { name?: string; requires: string[] } {
  const message = commit.slice(commit.indexOf('\n\n') + 2)
  const declared: { name?: string; requires: string[] } = { requires: [] }
  for (const line of message.split('\n')) {
    const [key, ...rest] = line.split(': ')
    const value = rest.join(': ').trim()
    if (key === packageTrailer && value) declared.name = value.split(' ')[0]!
    else if (key === requiresTrailer && value) declared.requires.push(value)
  }
  return declared
}
