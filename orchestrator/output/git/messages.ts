/**
 * Draft commit messages: what a reviewer needs to approve a draft without
 * opening it (which PackageVariant, which upstream revision, what changed),
 * and Porch's `kpt:` annotation naming the package and workspace.
 */
import type { VariantReport } from '../../report/report.js'

/** Trailer of a draft: the PackageVariant that made it, `<namespace>/<name>`. */
export const ownerTrailer = 'PackageVariant'
/** Trailer of a draft whose PackageVariant a set made: the set, `<namespace>/<name>` (the deletion guard counts by it). */
export const setTrailer = 'PackageVariantSet'
/** Trailer of a draft: the package's PackageManifest name and version, `<name> <version>`. */
export const packageTrailer = 'Package'
/** Trailer of a draft, one per package of the repository it needs (by name): publish publishes those first. */
export const requiresTrailer = 'Requires'
/** Trailers of a draft, one per label and annotation of the revision (the PackageVariant's `spec.labels`, `spec.annotations`): `key=value`. */
export const labelTrailer = 'Label'
export const annotationTrailer = 'Annotation'

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
    case 'orphaned': {
      const why = dependency
        ? 'no package of the repository needs it any more'
        : report.movedTo
          ? `PackageVariant ${owner} now renders ${report.movedTo}`
          : `PackageVariant ${owner} is gone`
      lines.push(
        `${report.status === 'deleted' ? 'Remove' : 'Orphan'} ${dir}: ${why}${report.status === 'orphaned' ? ' (deletionPolicy orphan)' : ''}`,
      )
      break
    }
    default:
      lines.push(
        report.previousUpstream
          ? `Update ${dir} from ${report.previousUpstream} to ${report.upstream}`
          : `Update ${dir} (${report.upstream})`,
      )
  }
  lines.push(
    '',
    dependency
      ? `Dependency of: ${report.requiredBy?.length ? report.requiredBy.join(', ') : 'no package any more'}`
      : `${ownerTrailer}: ${owner}`,
  )
  if (!dependency && report.set) lines.push(`${setTrailer}: ${report.set}`)
  if (report.upstream)
    lines.push(`Upstream: ${report.upstream}${report.previousUpstream ? ` (was ${report.previousUpstream})` : ''}`)
  if (report.injected && report.injected.length > 0) lines.push(`Injected: ${report.injected.join(', ')}`)
  for (const c of report.conflicts) {
    const took = c.resolution === 'fail' ? 'failed' : `took ${c.resolution}`
    lines.push(
      `Conflict: ${c.file} ${c.resource} ${c.field}: downstream ${c.local ?? '(deleted)'}, upstream ${c.upstream ?? '(deleted)'}: ${took}`,
    )
  }
  for (const w of report.warnings) lines.push(`Warning: ${w}`)
  for (const [key, value] of Object.entries(report.revisionLabels ?? {}))
    lines.push(`${labelTrailer}: ${key}=${trailerValue(value)}`)
  for (const [key, value] of Object.entries(report.revisionAnnotations ?? {}))
    lines.push(`${annotationTrailer}: ${key}=${trailerValue(value)}`)
  if (report.manifest) {
    lines.push(
      `${packageTrailer}: ${report.manifest.name}${report.manifest.version ? ` ${report.manifest.version}` : ''}`,
    )
    for (const name of report.manifest.requires) lines.push(`${requiresTrailer}: ${name}`)
  }
  lines.push('', `kpt:${JSON.stringify({ package: dir, workspaceName: workspace, revision: '' })}`)
  return `${lines.join('\n')}\n`
}

/**
 * What a draft's (or a published revision's) message declares: the
 * PackageVariant that made it and whether it removes (or orphans) its
 * package, its package's name, the packages it needs, the revision's labels
 * and annotations.
 */
export interface DraftDeclaration {
  /** `namespace/name` of the PackageVariant whose draft it is (none for a dependency's, or one made by hand). */
  owner?: string
  /** `namespace/name` of the PackageVariantSet that made the PackageVariant, when one did. */
  set?: string
  removes: boolean
  /** Of a removal: the package is only orphaned (its owner dropped), not deleted. */
  orphans: boolean
  name?: string
  requires: string[]
  labels: Record<string, string>
  annotations: Record<string, string>
}

/** Reads a commit's declaration from its trailers (a commit written without them declares nothing). */
export function draftDeclaration(commit: string): DraftDeclaration {
  const message = commit.slice(commit.indexOf('\n\n') + 2)
  const declared: DraftDeclaration = {
    removes: /^(Remove|Orphan) /.test(message),
    orphans: message.startsWith('Orphan '),
    requires: [],
    labels: {},
    annotations: {},
  }
  for (const line of message.split('\n')) {
    const [key, ...rest] = line.split(': ')
    const value = rest.join(': ').trim()
    if (!value) continue
    if (key === ownerTrailer && declared.owner === undefined) declared.owner = value
    else if (key === setTrailer && declared.set === undefined) declared.set = value
    else if (key === packageTrailer) declared.name = value.split(' ')[0]!
    else if (key === requiresTrailer) declared.requires.push(value)
    else if ((key === labelTrailer || key === annotationTrailer) && value.includes('=')) {
      const into = key === labelTrailer ? declared.labels : declared.annotations
      into[value.slice(0, value.indexOf('='))] = unquoted(value.slice(value.indexOf('=') + 1))
    }
  }
  return declared
}

/** A label's or annotation's value in a trailer: as it is when plain, else quoted as JSON (a value may hold a line break). */
function trailerValue(value: string): string {
  return /^[\w./:-]*$/.test(value) ? value : JSON.stringify(value)
}

/** A trailer's value read back. */
function unquoted(quoted: string): string {
  if (!quoted.startsWith('"')) return quoted
  try {
    const value: unknown = JSON.parse(quoted)
    return typeof value === 'string' ? value : quoted
  } catch {
    return quoted
  }
}
