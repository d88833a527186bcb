/**
 * Which PackageVariant a downstream package belongs to, recorded in the
 * package itself (annotations on its root Kptfile), so adoption and deletion
 * work across runs without a state file that could drift from the packages:
 *
 *   kpt-variants.dev/package-variant: <namespace>/<name>   the owner
 *   kpt-variants.dev/package-variant-set: <namespace>/<name> the set that generated it, if any
 *   kpt-variants.dev/deletion-policy: delete | orphan        what to do when the owner is gone
 *   kpt-variants.dev/installed-as-dependency: "true"       installed by a render because another
 *                                                          package needed it (no owner): removed, or
 *                                                          with deletion-policy orphan unmarked, once
 *                                                          nothing needs it
 *
 * A package with neither an owner nor the mark was put there by someone on
 * purpose: a render may update it when a dependency needs a newer version,
 * but never removes it.
 */
import { isMap, parse } from '../../functions/krm/yaml/index.js'
import { readableDocument } from '../../functions/krm/index.js'
import { sequenceStyle } from './documents.js'
import type { KubeObject } from '../../functions/krm/index.js'
import { fileText } from './files.js'
import type { PackageFiles } from './files.js'

export const ownerAnnotation = 'kpt-variants.dev/package-variant'
export const ownerSetAnnotation = 'kpt-variants.dev/package-variant-set'
export const deletionPolicyAnnotation = 'kpt-variants.dev/deletion-policy'
export const installedAsDependencyAnnotation = 'kpt-variants.dev/installed-as-dependency'

/** What a package's root Kptfile says about its owner and upstream. */
export interface PackageRecord {
  owner?: string
  set?: string
  deletionPolicy?: 'delete' | 'orphan'
  /** Installed by a render as another package's dependency. */
  installedAsDependency?: true
  /** `upstreamLock.git`, the upstream revision the package was last updated from. */
  lock?: { repo: string; directory: string; ref: string; commit: string }
}

/** Reads the ownership annotations and `upstreamLock` of a package (an unreadable Kptfile records nothing). */
export function readPackageRecord(files: PackageFiles): PackageRecord {
  const kptfile = files.get('Kptfile')
  if (!kptfile) return {}
  let value: unknown
  try {
    value = parse(fileText(kptfile), { source: 'Kptfile' }).toJS({ maxAliasCount: 100 })
  } catch {
    return {}
  }
  const record: PackageRecord = {}
  const k = (value ?? {}) as {
    metadata?: { annotations?: Record<string, unknown> }
    upstreamLock?: { git?: Record<string, unknown> }
  }
  const annotations = k.metadata?.annotations ?? {}
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined)
  const owner = str(annotations[ownerAnnotation])
  const set = str(annotations[ownerSetAnnotation])
  const policy = annotations[deletionPolicyAnnotation]
  if (owner) record.owner = owner
  if (set) record.set = set
  if (policy === 'delete' || policy === 'orphan') record.deletionPolicy = policy
  if (annotations[installedAsDependencyAnnotation] === 'true') record.installedAsDependency = true
  const git = k.upstreamLock?.git
  if (git && str(git['commit'])) {
    record.lock = {
      repo: String(git['repo'] ?? ''),
      directory: String(git['directory'] ?? ''),
      ref: String(git['ref'] ?? ''),
      commit: String(git['commit']),
    }
  }
  return record
}

/** Records the owner on the root Kptfile item. */
export function recordOwner(
  kptfile: KubeObject,
  owner: { key: string; set?: string; deletionPolicy: 'delete' | 'orphan' },
): void {
  kptfile.setAnnotation(ownerAnnotation, owner.key)
  if (owner.set) kptfile.setAnnotation(ownerSetAnnotation, owner.set)
  else kptfile.removeAnnotation(ownerSetAnnotation)
  kptfile.setAnnotation(deletionPolicyAnnotation, owner.deletionPolicy)
}

/** Marks the root Kptfile item as installed as a dependency, and what to do once nothing needs it. */
export function recordDependency(kptfile: KubeObject, deletionPolicy: 'delete' | 'orphan'): void {
  kptfile.setAnnotation(installedAsDependencyAnnotation, 'true')
  kptfile.setAnnotation(deletionPolicyAnnotation, deletionPolicy)
}

/**
 * The package without its owner: the ownership annotations (and the
 * installed-as-dependency mark) removed from its Kptfile (deletionPolicy
 * orphan). It stays, as a package someone installed on purpose. A Kptfile
 * that would not parse printed with its comments is written without them,
 * and `warnings` gets one that says so (readableDocument).
 */
export function orphanPackage(files: PackageFiles, warnings: string[]): PackageFiles {
  const kptfile = files.get('Kptfile')
  if (!kptfile) return files
  const text = fileText(kptfile)
  const doc = parse(text, { source: 'Kptfile' })
  const annotations = doc.getIn(['metadata', 'annotations'], true)
  if (!isMap(annotations)) return files
  for (const key of [ownerAnnotation, ownerSetAnnotation, deletionPolicyAnnotation, installedAsDependencyAnnotation])
    annotations.delete(key)
  if (annotations.items.length === 0) doc.deleteIn(['metadata', 'annotations'])
  const written = readableDocument(doc, { wide: sequenceStyle(text) === 'wide', file: 'Kptfile' })
  if (written.warning && !warnings.includes(written.warning)) warnings.push(written.warning)
  const out = new Map(files)
  out.set('Kptfile', { ...kptfile, content: Buffer.from(written.text, 'utf8') })
  return out
}
