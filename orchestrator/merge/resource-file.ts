/**
 * One resource file of an update (mergeYamlFile) as files in and a file out,
 * remembered by the identity of its inputs' contents: when the caller shares
 * file objects across variants (UpdateInput.pool) and reads each upstream
 * revision once, the unedited files of every variant are the same three
 * buffers, and their merge is looked up without reading or hashing their text.
 */
import { fileText } from '../package/files.js'
import type { PackageFile } from '../package/files.js'
import type { ConflictPolicy } from './fields.js'
import { mergeYamlFile } from './resources.js'
import type { ResourceConflict } from './resources.js'

export type ResourceFileMerge =
  | { ok: true; file: PackageFile | undefined; conflicts: ResourceConflict[]; warnings: string[] }
  | { ok: false; message: string }

/** What is remembered: `local` where the downstream's own file stands (the caller's object is given back). */
type Remembered =
  | { ok: true; file: PackageFile | 'local' | undefined; conflicts: ResourceConflict[]; warnings: string[] }
  | { ok: false; message: string }

/** Stands for a version that lacks the file. */
const absent = Buffer.alloc(0)
const remembered = new WeakMap<Buffer, WeakMap<Buffer, WeakMap<Buffer, Map<string, Remembered>>>>()

/**
 * The merged file at `path` (undefined: it goes away). `newFile` makes the
 * file of a merged text; `remember`: the inputs' contents are shared objects
 * worth remembering the merge by.
 */
export function mergeResourceFile(
  path: string,
  versions: { local?: PackageFile; origin?: PackageFile; updated?: PackageFile },
  policy: ConflictPolicy,
  newFile: (text: string, executable?: boolean) => PackageFile,
  remember: boolean,
): ResourceFileMerge {
  const { local, origin, updated } = versions
  if (!remember) return merge(path, versions, policy, newFile, local)
  const key = `${policy}\0${path}\0${local?.executable ?? ''}\0${updated?.executable ?? ''}`
  const l = local?.content ?? absent
  const o = origin?.content ?? absent
  const u = updated?.content ?? absent
  let byOrigin = remembered.get(l)
  if (!byOrigin) remembered.set(l, (byOrigin = new WeakMap()))
  let byUpdated = byOrigin.get(o)
  if (!byUpdated) byOrigin.set(o, (byUpdated = new WeakMap()))
  let byKey = byUpdated.get(u)
  if (!byKey) byUpdated.set(u, (byKey = new Map<string, Remembered>()))
  let known = byKey.get(key)
  if (!known) {
    const merged = merge(path, versions, policy, newFile, local)
    known = merged.ok && merged.file === local && local !== undefined ? { ...merged, file: 'local' } : merged
    byKey.set(key, known)
  }
  if (!known.ok) return known
  return {
    ok: true,
    file: known.file === 'local' ? local : known.file,
    conflicts: [...known.conflicts],
    warnings: [...known.warnings],
  }
}

function merge(
  path: string,
  versions: { local?: PackageFile; origin?: PackageFile; updated?: PackageFile },
  policy: ConflictPolicy,
  newFile: (text: string, executable?: boolean) => PackageFile,
  local: PackageFile | undefined,
): ResourceFileMerge {
  const { origin, updated } = versions
  const merged = mergeYamlFile(
    path,
    local && fileText(local),
    origin && fileText(origin),
    updated && fileText(updated),
    policy,
  )
  if (!merged.ok) return merged
  const file =
    merged.text === undefined
      ? undefined
      : local && merged.text === fileText(local)
        ? local
        : newFile(merged.text, (local ?? updated)?.executable)
  return { ok: true, file, conflicts: merged.conflicts, warnings: merged.warnings }
}
