/**
 * Editing a Rollout where it lives in a fleet directory: its file is read,
 * only its own document is parsed and changed (through the SDK, so comments,
 * key order and quoting stay), the other documents keep their exact bytes,
 * and so do the lines of its own document that the edit did not touch (the
 * printer's spacing before a comment is not let into the diff), and the file
 * is replaced atomically (a temporary file beside it, then a
 * rename). A file that changed while it was being edited is left alone.
 */
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { KubeObject } from '../../functions/krm/index.js'
import { isMap, parse, print } from '../../functions/krm/yaml/index.js'
import { diffArrays } from 'diff'
import { writeFileAtomic } from '../cache/atomic-write.js'
import { joinDocuments, splitDocuments } from '../package/documents.js'

/** Why a fleet file could not be edited (a user's problem, for exit 1: no stack trace). */
export class FleetEditError extends Error {
  override name = 'FleetEditError'
}

/** The object to edit: its identity, and where the fleet loader found it (`object.origin`). */
export interface FleetObjectRef {
  apiVersion: string
  kind: string
  name: string
  /** As the fleet has it: a document without `metadata.namespace` is in the fleet's default namespace. */
  namespace: string
  /** The file, relative to the fleet directory, and the document's index in it. */
  origin: { file: string; index: number }
}

/**
 * Applies `edit` to the object's document in `fleetDir/<origin.file>` and
 * writes the file back atomically; returns false (and writes nothing) when
 * the edit changed no byte.
 */
export function editFleetObject(fleetDir: string, ref: FleetObjectRef, edit: (object: KubeObject) => void): boolean {
  const path = join(fleetDir, ref.origin.file)
  if (/\.json$/i.test(path))
    throw new FleetEditError(
      `${ref.origin.file}: ${describe(ref)} is in a JSON file, which this edit would rewrite as YAML: edit it by hand, or move it to a .yaml file`,
    )
  const before = readFileSync(path, 'utf8')
  const docs = splitDocuments(before)
  if (!docs)
    throw new FleetEditError(
      `${ref.origin.file}: a document separator carries content (\`--- |\`, \`--- !tag\`): edit ${describe(ref)} by hand`,
    )
  const index = findDocument(docs, ref)
  if (index === undefined)
    throw new FleetEditError(`${ref.origin.file}: no document holds ${describe(ref)} any more (did the file change?)`)
  const doc = parse(docs[index]!.text, { source: ref.origin.file })
  if (!isMap(doc.contents)) throw new FleetEditError(`${ref.origin.file}: ${describe(ref)} is not a map`)
  // Compared with the document printed before the edit, not with its text: an edit that changes nothing writes nothing.
  const unedited = print(doc)
  edit(new KubeObject(doc.contents, doc))
  const edited = print(doc)
  if (edited === unedited) return false
  const text = keepUntouchedLines(docs[index]!.text, unedited, edited)
  docs[index] = { ...docs[index]!, text }
  const after = joinDocuments(docs)
  writeFileAtomic(path, after, {
    mode: statSync(path).mode & 0o7777,
    beforeRename: () => {
      if (readFileSync(path, 'utf8') !== before)
        throw new FleetEditError(
          `${ref.origin.file} changed while ${describe(ref)} was being edited: nothing was written; run the command again`,
        )
    },
  })
  return true
}

/**
 * The edited document with each line the edit did not touch as the file had
 * it: `original` and `unedited` (its print before the edit) are matched line
 * by line when they differ only in spacing, and the lines `edited` keeps from
 * `unedited` are taken from `original`. Otherwise the print stands.
 */
export function keepUntouchedLines(original: string, unedited: string, edited: string): string {
  const source = original.split('\n')
  const printed = unedited.split('\n')
  const squeeze = (line: string) => line.replace(/\s+/g, ' ').trim()
  if (source.length !== printed.length || source.some((line, i) => squeeze(line) !== squeeze(printed[i]!)))
    return edited
  const out: string[] = []
  let at = 0
  for (const change of diffArrays(printed, edited.split('\n'))) {
    if (change.added) out.push(...change.value)
    else if (change.removed) at += change.value.length
    else {
      out.push(...source.slice(at, at + change.value.length))
      at += change.value.length
    }
  }
  return out.join('\n')
}

/** The index of the document that holds the object: the loader's index when it still does, else the only document that does. */
function findDocument(docs: readonly { text: string }[], ref: FleetObjectRef): number | undefined {
  const holds = (i: number): boolean => {
    const text = docs[i]?.text
    if (text === undefined || !/\bkind:/.test(text)) return false
    let doc
    try {
      doc = parse(text)
    } catch {
      return false
    }
    if (!isMap(doc.contents)) return false
    const object = new KubeObject(doc.contents, doc)
    const namespace = object.namespace
    return (
      object.apiVersion === ref.apiVersion &&
      object.kind === ref.kind &&
      object.name === ref.name &&
      (namespace === ref.namespace || namespace === '')
    )
  }
  if (holds(ref.origin.index)) return ref.origin.index
  const found = docs.map((_, i) => i).filter(holds)
  return found.length === 1 ? found[0] : undefined
}

function describe(ref: Pick<FleetObjectRef, 'kind' | 'name' | 'namespace'>): string {
  return `${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`
}
