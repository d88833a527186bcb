/**
 * An existing downstream package updated to a new upstream revision, as
 * `kpt pkg update` does it, with the strategy each package's Kptfile names
 * (`upstream.updateStrategy`, see strategies.ts). `resource-merge`, the
 * default, is a 3-way merge of the old upstream (origin: the package at the
 * downstream's `upstreamLock`), the new upstream (updated) and the downstream
 * (local):
 *
 * - YAML files merge resource by resource and field by field (`resources.ts`,
 *   `fields.ts`);
 * - Kptfiles merge through the Kptfile struct (`kptfile.ts`); the root one
 *   gets the new `upstream` and `upstreamLock`;
 * - other files: a downstream edit wins, else upstream's version (or
 *   deletion) is taken; a file deleted downstream comes back when upstream
 *   still has it;
 * - at the end every resource carries its upstream identity (kpt's final
 *   merge-comment pass).
 *
 * Unlike kpt, a field both sides changed differently is reported as a
 * conflict and resolved by `onConflict` ('upstream' is kpt's choice; 'fail'
 * fails the update); kpt re-serializes every local file, here files upstream
 * did not touch are kept byte for byte.
 */
import { isMap, parse, reconcileNode } from '../../functions/krm/yaml/index.js'
import { readableDocument } from '../../functions/krm/index.js'
import { packageContextText } from '../clone/clone.js'
import { decodeKptfile, encodeKptfile, kptfileValue } from '../clone/kptfile-struct.js'
import type { KptfileStruct } from '../clone/kptfile-struct.js'
import { addMergeComment, upstreamIdentifierAnnotation } from '../clone/merge-comments.js'
import { isEmptyDocument, sequenceStyle, splitDocuments } from '../package/documents.js'
import { fileText, packageDirectories, sameFile, sortedFiles, textFile } from '../package/files.js'
import type { PackageFile, PackageFiles } from '../package/files.js'
import type { ContentPool } from '../package/content-pool.js'
import { krmIgnoreFilter } from '../package/krmignore.js'
import type { ConflictPolicy } from './fields.js'
import { mergeKptfiles } from './kptfile.js'
import { mergeResourceFile } from './resource-file.js'
import { fastForwardRefusal, localChanges, strategyUnits, unitOf } from './strategies.js'
import type { StrategyUnit } from './strategies.js'

export type { ConflictPolicy } from './fields.js'

export interface UpdateInput {
  /** The upstream package the downstream was cloned or last updated from (empty when unknown). */
  origin: PackageFiles
  /** The upstream package at the new revision. */
  updated: PackageFiles
  /** The downstream package as it is. */
  local: PackageFiles
  onConflict: ConflictPolicy
  /** The root Kptfile's new `upstream.git` and `upstreamLock.git`. */
  upstream: { repo: string; directory: string; ref: string }
  upstreamLock: { repo: string; directory: string; ref: string; commit: string }
  /** Where merged files are shared across updates (the same merge gives the same file object); none: new objects. */
  pool?: ContentPool
}

/** A field the downstream and the new upstream both changed, differently. */
export interface MergeConflict {
  file: string
  /** `Kind namespace/name`, or `Kptfile`. */
  resource: string
  field: string
  /** The values as text; absent where the field is absent. */
  origin?: string
  local?: string
  upstream?: string
  /** Which side the result holds ('fail': the update was not applied). */
  resolution: ConflictPolicy
}

export interface UpdateResult {
  /** False when a file cannot be merged, on a conflict with `onConflict: 'fail'`, or when a fast-forward meets local changes. */
  ok: boolean
  files: PackageFiles
  conflicts: MergeConflict[]
  errors: string[]
  /** Resources written without their comments, which printed with them would not parse (readableDocument), each naming its file. */
  warnings: string[]
}

/** Merges the new upstream into the downstream; pure (files in, files out). */
export function updatePackage(input: UpdateInput): UpdateResult {
  const { origin, updated, local, onConflict } = input
  const out = new Map<string, PackageFile>()
  const conflicts: MergeConflict[] = []
  const errors: string[] = []
  const warnings: string[] = []
  const newFile = (text: string, executable?: boolean) =>
    input.pool ? input.pool.text(text, executable) : textFile(text, executable)
  const ignoredIn = (files: PackageFiles) => krmIgnoreFilter(files, ['', ...packageDirectories(files)])
  const ignored = [ignoredIn(local), ignoredIn(updated)]
  const isResourceFile = (path: string) => /\.ya?ml$/.test(path) && !ignored.some((skip) => skip(path))

  const found = strategyUnits(local)
  if (!found.ok) return { ok: false, files: local, conflicts, errors: [found.message], warnings }
  const { units } = found
  for (const unit of units) {
    if (unit.strategy !== 'fast-forward') continue
    const changed = localChanges(unit, local, origin)
    if (changed.length > 0) errors.push(fastForwardRefusal(unit, changed))
  }
  if (errors.length > 0) return { ok: false, files: local, conflicts, errors, warnings }

  const paths = new Set([...local.keys(), ...origin.keys(), ...updated.keys()])
  for (const path of [...paths].sort()) {
    const l = local.get(path)
    const o = origin.get(path)
    const u = updated.get(path)
    const base = path.slice(path.lastIndexOf('/') + 1)
    const unit = unitOf(path, units)
    if (unit.strategy !== 'resource-merge') {
      const taken = takeUpstream(unit, path, l, o, u, input, warnings)
      if (!taken.ok) errors.push(taken.message)
      else if (taken.file) out.set(path, taken.file)
    } else if (base === 'Kptfile') {
      const merged = mergeKptfile(path, l, o, u, input, warnings)
      if (!merged.ok) errors.push(merged.message)
      else {
        if (merged.file) out.set(path, merged.file)
        conflicts.push(
          ...merged.conflicts.map((c) => ({ ...c, file: path, resource: 'Kptfile', resolution: onConflict })),
        )
      }
    } else if (isResourceFile(path)) {
      const merged = mergeResourceFile(path, { local: l, origin: o, updated: u }, onConflict, newFile, !!input.pool)
      if (!merged.ok) errors.push(`${path}: ${merged.message.replace(`${path}: `, '')}`)
      else {
        if (merged.file) out.set(path, merged.file)
        conflicts.push(...merged.conflicts.map((c) => ({ ...c, resolution: onConflict })))
        warnings.push(...merged.warnings)
      }
    } else {
      const kept = otherFile(path, l, o, u)
      if (kept) out.set(path, kept)
    }
  }
  if (errors.length > 0 || (onConflict === 'fail' && conflicts.length > 0))
    return { ok: false, files: local, conflicts, errors, warnings }
  markResources(out, isResourceFile, warnings)
  return { ok: true, files: sortedFiles(out), conflicts, errors, warnings }
}

/**
 * A file of a package whose strategy takes upstream's files (strategies.ts):
 * fast-forward (past its check) and force-delete-replace take the new
 * upstream's files only, but for the root Kptfile, which stays the
 * downstream's with the new upstream records (kpt's ReplaceUpdater); copy-merge
 * merges the package's Kptfile 3-way, takes every upstream file, deletes what
 * upstream deleted and keeps the downstream's own files.
 */
function takeUpstream(
  unit: StrategyUnit,
  path: string,
  local: PackageFile | undefined,
  origin: PackageFile | undefined,
  updated: PackageFile | undefined,
  input: UpdateInput,
  warnings: string[],
): { ok: true; file: PackageFile | undefined } | { ok: false; message: string } {
  // kpt copies every file but the .git directory (a .gitignore too, which resource-merge never syncs).
  if (path.split('/').includes('.git')) return { ok: true, file: local }
  const unitKptfile = path === (unit.dir === '' ? 'Kptfile' : `${unit.dir}/Kptfile`)
  if (unit.strategy === 'copy-merge') {
    if (unitKptfile && local) {
      const merged = mergeKptfile(path, local, origin, updated, input, warnings)
      return merged.ok ? { ok: true, file: merged.file } : merged
    }
    return { ok: true, file: updated ?? (origin ? undefined : local) }
  }
  if (path === 'Kptfile' && local) {
    const decoded = decodeKptfile(fileText(local))
    if (!decoded.ok) return { ok: false, message: `Kptfile: ${decoded.message}` }
    const kptfile = decoded.value
    kptfile.upstream = newUpstream(input, kptfile.upstream?.updateStrategy)
    kptfile.upstreamLock = { type: 'git', git: { ...input.upstreamLock } }
    const text = keepLayout(path, fileText(local), kptfile, warnings)
    return { ok: true, file: text === fileText(local) ? local : textFile(text) }
  }
  // A deployment package keeps a package context (kpt's replace deletes the one `kpt pkg get --for-deployment`
  // made, which upstream never has): a fresh one, as the clone writes it.
  if (!updated && local && (path === 'package-context.yaml' || path.endsWith('/package-context.yaml'))) {
    const dir = path.slice(0, -'package-context.yaml'.length)
    const kptfile = input.local.get(`${dir}Kptfile`)
    const decoded = kptfile && decodeKptfile(fileText(kptfile))
    if (decoded && decoded.ok)
      return { ok: true, file: textFile(packageContextText(decoded.value.metadata?.name ?? '')) }
  }
  return { ok: true, file: updated }
}

/** The root Kptfile's new `upstream`: the new ref, the downstream's own strategy kept (resource-merge when it names none). */
function newUpstream(input: UpdateInput, strategy: string | undefined): NonNullable<KptfileStruct['upstream']> {
  return { type: 'git', git: { ...input.upstream }, updateStrategy: strategy || 'resource-merge' }
}

/** kpt's `ReplaceNonKRMFiles`: paths holding `.git` are never touched. */
function otherFile(
  path: string,
  local?: PackageFile,
  origin?: PackageFile,
  updated?: PackageFile,
): PackageFile | undefined {
  if (path.includes('.git')) return local
  if (local === undefined) return origin !== undefined || updated !== undefined ? updated : undefined
  if (origin === undefined || !sameFile(local, origin)) return local
  return updated
}

type KptfileResult =
  | {
      ok: true
      file: PackageFile | undefined
      conflicts: { field: string; origin?: string; local?: string; upstream?: string }[]
    }
  | { ok: false; message: string }

function mergeKptfile(
  path: string,
  local: PackageFile | undefined,
  origin: PackageFile | undefined,
  updated: PackageFile | undefined,
  input: UpdateInput,
  warnings: string[],
): KptfileResult {
  const root = path === 'Kptfile'
  if (local === undefined) {
    // A subpackage added upstream is copied; one deleted downstream stays deleted.
    return { ok: true, file: !root && origin === undefined ? updated : undefined, conflicts: [] }
  }
  if (updated === undefined && !root) return { ok: true, file: local, conflicts: [] }
  const merged = mergeKptfiles(
    fileText(local),
    origin && fileText(origin),
    updated ? fileText(updated) : 'apiVersion: kpt.dev/v1\nkind: Kptfile\n',
    input.onConflict,
  )
  if (!merged.ok) return { ok: false, message: `${path}: ${merged.message}` }
  const kptfile: KptfileStruct = merged.kptfile
  if (root) {
    const own = decodeKptfile(fileText(local))
    kptfile.upstream = newUpstream(input, own.ok ? own.value.upstream?.updateStrategy : undefined)
    kptfile.upstreamLock = { type: 'git', git: { ...input.upstreamLock } }
  } else if (updated) {
    // A remote subpackage follows its upstream's record of where it comes from.
    const decoded = decodeKptfile(fileText(updated))
    if (decoded.ok && decoded.value.upstream) kptfile.upstream = decoded.value.upstream
    if (decoded.ok && decoded.value.upstreamLock) kptfile.upstreamLock = decoded.value.upstreamLock
  }
  const text = keepLayout(path, fileText(local), kptfile, warnings)
  return { ok: true, file: text === fileText(local) ? local : textFile(text), conflicts: merged.conflicts }
}

/**
 * The merged Kptfile written over the downstream's own text, so its key order,
 * comments and list style stay and the diff shows only what changed (kpt
 * re-encodes the whole file from its struct, which is what a downstream
 * Kptfile that cannot be parsed gets).
 */
function keepLayout(path: string, localText: string, kptfile: KptfileStruct, warnings: string[]): string {
  try {
    const doc = parse(localText, { source: 'Kptfile' })
    const value = kptfileValue(kptfile)
    const root = reconcileNode(doc.contents, value)
    // A top-level field new to the downstream (upstreamLock after an adoption) goes where the struct has it.
    const order = Object.keys(value)
    if (isMap(root))
      root.items.sort(
        (a, b) =>
          order.indexOf(String((a.key as { value?: unknown }).value)) -
          order.indexOf(String((b.key as { value?: unknown }).value)),
      )
    doc.contents = root as typeof doc.contents
    const written = readableDocument(doc, { wide: sequenceStyle(localText) === 'wide', file: path })
    if (written.warning) warnings.push(written.warning)
    return written.text
  } catch {
    return encodeKptfile(kptfile)
  }
}

/** kpt's final pass: every resource carries its `kpt-merge:` comment and upstream identifier. */
function markResources(
  files: Map<string, PackageFile>,
  isResourceFile: (path: string) => boolean,
  warnings: string[],
): void {
  for (const [path, file] of files) {
    if (!isResourceFile(path)) continue
    const known = marked.get(file)
    if (known?.path === path) {
      warnings.push(...known.warnings)
      if (known.file !== file) files.set(path, known.file)
      continue
    }
    const found: string[] = []
    files.set(path, markFile(path, file, found))
    warnings.push(...found)
    marked.set(file, { path, file: files.get(path)!, warnings: found })
  }
}

/**
 * Files already marked: the merged files of an update are mostly
 * the same objects from variant to variant (UpdateInput.pool), and marking
 * one is a pure function of its path and content.
 */
const marked = new WeakMap<PackageFile, { path: string; file: PackageFile; warnings: readonly string[] }>()

/** One file of markResources: the file itself when every resource in it is marked already. */
function markFile(path: string, file: PackageFile, warnings: string[]): PackageFile {
  const text = fileText(file)
  const docs = splitDocuments(text)
  if (!docs) return file
  let changed = false
  const out = docs.map(({ separator, text: docText }) => {
    if (isEmptyDocument(docText) || (docText.includes('kpt-merge:') && docText.includes(upstreamIdentifierAnnotation)))
      return separator + docText
    let doc
    try {
      doc = parse(docText, { source: path })
    } catch {
      return separator + docText
    }
    if (!isMap(doc.contents) || !addMergeComment(doc)) return separator + docText
    changed = true
    const written = readableDocument(doc, { wide: sequenceStyle(docText) === 'wide', file: path })
    if (written.warning) warnings.push(written.warning)
    return separator + written.text
  })
  return changed ? textFile(out.join(''), file.executable) : file
}
