/**
 * A package's files as ResourceList items and back, as kpt's package reader
 * and writer do around a function: every KRM document of a `*.yaml`, `*.yml`,
 * `*.json` or `Kptfile` becomes an item annotated with its path and index;
 * afterwards each item goes back to its file. Documents a function left alone
 * are written back as their exact original text, so only what changed moves.
 * A document that is not a KRM object (a values file a user keeps beside the
 * resources) is no item and stays in its file as it was.
 *
 * Turning a document into an item (parse, annotate, print) is the costly part
 * and the same document recurs in every variant of a blueprint, so the item
 * text of each distinct document is cached: a fleet parses each once.
 */
import { isMap, isScalar, parse } from '../../functions/krm/yaml/index.js'
import { LRUCache } from 'lru-cache'
import {
  commentsDroppedMessage,
  indexAnnotation,
  KubeObject,
  legacyIndexAnnotation,
  legacyPathAnnotation,
  packagePathAnnotation,
  pathAnnotation,
} from '../../functions/krm/index.js'
import { isEmptyDocument, joinDocuments, sequenceStyle, splitDocuments } from './documents.js'
import type { DocumentText } from './documents.js'
import { fileText, owningPackage, packageDirectories, textFile } from './files.js'
import type { PackageFile, PackageFiles } from './files.js'
import { krmIgnoreFilter } from './krmignore.js'

/** How item paths are given: relative to the root package (`kpt fn eval`), or to each (sub)package with `package-path` (`kpt fn render`). */
export type PathStyle = { style: 'eval' } | { style: 'render'; root: string }

/** A document that is not a KRM object, which kpt refuses to render. */
export interface NotKrm {
  path: string
  message: string
}

/** The items of a package and what is needed to write them back. */
export interface PackageResources {
  items: KubeObject[]
  /** Documents that are not KRM objects (kpt fn render would refuse the package). */
  notKrm: NotKrm[]
  /** Internal: where each item came from. */
  readonly origins: Map<KubeObject, ItemOrigin>
  /** Internal: the split text of each resource file. */
  readonly layouts: Map<string, FileLayout>
  readonly pathStyle: PathStyle
}

interface ItemOrigin {
  file: string
  /** Position among the file's documents. */
  slot: number
  chunk: string
  prepared: Prepared & { ok: true }
}

/** A resource file read into documents and their prepared items, shared by every reading of the same content at the same place. */
interface FileLayout {
  readonly docs: readonly DocumentText[]
  /** Each document's prepared item: undefined for an empty document, not ok for one that is not a KRM object. */
  readonly prepared: readonly (Prepared | undefined)[]
  /** How many of the documents are items. */
  readonly items: number
}

/**
 * A document made ready: its item text, its sequence style, and, once known,
 * whether it is in the printer's normal form (printing the parsed item gives
 * the document back), which lets `write` tell a changed item by printing it
 * once. Finding that out costs a parse and a print, which pays only for a
 * document that recurs (a blueprint's, in every variant), so it is found out
 * on the second use; `uses` counts them.
 */
type Prepared =
  { ok: true; chunk: string; wide: boolean; normal?: boolean; uses: number } | { ok: false; message: string }

const resourceFile = /(^|\/)(Kptfile|[^/]*\.(ya?ml|json))$/

/** True for the files kpt reads as resources: `*.yaml`, `*.yml`, `*.json` and `Kptfile`. */
export function isResourceFile(path: string): boolean {
  return resourceFile.test(path)
}

/** Reads packages into items and writes items back; one per run, so its cache serves every variant. */
export class ResourceCodec {
  /**
   * Prepared documents by text and place, most recently used kept. Budget: 4,000 entries, each holding a
   * document's text and its parse (a few KB for a fleet's typical resource): tens of MB at most, enough for
   * the distinct documents of the upstream revisions of a run.
   */
  readonly #cache: LRUCache<string, Prepared>
  /** Files already read, by content buffer, then by where they are read (item path and package path). */
  readonly #readings = new WeakMap<Buffer, Map<string, FileLayout>>()
  readonly #seen = new WeakSet<Buffer>()

  constructor(cacheLimit = 4_000) {
    this.#cache = new LRUCache({ max: cacheLimit })
  }

  /**
   * The items of a package, in file order (sorted paths), then document order.
   * `.krmignore` is honoured per package; `packages` (the package directories)
   * is needed only when `files` is a part of a package without its Kptfiles.
   */
  read(
    files: PackageFiles,
    pathStyle: PathStyle = { style: 'eval' },
    packages: readonly string[] = packageDirectories(files),
  ): PackageResources {
    const ignored = krmIgnoreFilter(files, packages)
    const resources: PackageResources = { items: [], notKrm: [], origins: new Map(), layouts: new Map(), pathStyle }
    for (const [path, file] of [...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      if (!isResourceFile(path) || ignored(path)) continue
      const pkg = owningPackage(path, packages)
      const itemPath = pathStyle.style === 'render' && pkg !== '' ? path.slice(pkg.length + 1) : path
      const packagePath =
        pathStyle.style === 'render' ? (pkg === '' ? pathStyle.root : `${pathStyle.root}/${pkg}`) : undefined
      const layout = this.#readFile(file, itemPath, packagePath)
      resources.layouts.set(path, layout)
      layout.prepared.forEach((doc, slot) => {
        if (doc === undefined) return
        if (!doc.ok) {
          resources.notKrm.push({ path, message: doc.message })
          return
        }
        const item = KubeObject.fromItemSource(doc.chunk, resources.items.length)
        resources.items.push(item)
        resources.origins.set(item, { file: path, slot, chunk: doc.chunk, prepared: doc })
      })
    }
    return resources
  }

  /**
   * The files after a function: `files` with every resource file rebuilt from
   * `items` (an item's path and index annotations say where it goes; a file
   * left without items is deleted; new paths become new files). The items are
   * used up: changed ones lose the annotations the reader added. Every changed
   * item is printed checked to read back (`KubeObject.toReadableYaml`): one that
   * would not parse with its comments is written without them, and `warnings`
   * says so, naming its file and the object.
   */
  write(
    resources: PackageResources,
    items: readonly KubeObject[],
    files: PackageFiles,
  ): { files: PackageFiles; warnings: string[] } {
    const placed = new Map<string, { index: number; order: number; text: string; slot?: number }[]>()
    const warnings: string[] = []
    items.forEach((item, order) => {
      const origin = resources.origins.get(item)
      const path = fullPath(item, resources.pathStyle)
      const index = item.index
      const { text, commentsDropped } = itemText(item, origin, resources)
      if (commentsDropped) warnings.push(commentsDroppedMessage(path, item.describe()))
      const entry: { index: number; order: number; text: string; slot?: number } = { index, order, text }
      if (origin && origin.file === path) entry.slot = origin.slot
      let list = placed.get(path)
      if (!list) placed.set(path, (list = []))
      list.push(entry)
    })
    const out: PackageFiles = new Map(files)
    for (const [path, layout] of resources.layouts) {
      const entries = placed.get(path)
      placed.delete(path)
      if (!entries) {
        // A file that held no KRM object at all stays as it is. One whose items are all gone goes, unless it
        // also held documents that are not KRM objects (kpt refuses to render them; they are never dropped).
        if (layout.items === 0) continue
        if (!layout.prepared.some((doc) => doc?.ok === false)) {
          out.delete(path)
          continue
        }
      } else if (keptAsRead(layout, entries)) continue
      const text = rebuildFile(layout, entries ?? [])
      if (text !== joinDocuments(layout.docs))
        out.set(path, { ...files.get(path)!, content: Buffer.from(text, 'utf8') })
    }
    for (const [path, entries] of placed) {
      const existing = files.get(path)
      const text = joinDocuments(
        sortEntries(entries).map((e, i) => ({ separator: i === 0 ? '' : '---\n', text: e.text })),
      )
      out.set(path, existing ? { ...existing, content: Buffer.from(text, 'utf8') } : textFile(text))
    }
    return { files: new Map([...out].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))), warnings }
  }

  /**
   * A resource file's documents and each one's prepared item (none for an
   * empty document). The clones of a blueprint share their files' contents,
   * so a file read again is answered by its content buffer, without decoding
   * or splitting its text or looking its documents up by their text.
   */
  #readFile(file: PackageFile, itemPath: string, packagePath: string | undefined): FileLayout {
    const place = `${itemPath}\0${packagePath ?? ''}`
    let readings = this.#readings.get(file.content)
    let reading = readings?.get(place)
    if (reading) {
      for (const doc of reading.prepared) if (doc?.ok) doc.uses++
      return reading
    }
    const text = fileText(file)
    const docs = splitDocuments(text) ?? [{ separator: '', text }]
    let index = 0
    const prepared = docs.map((doc) => {
      if (isEmptyDocument(doc.text)) return undefined
      const item = this.#prepare(doc.text, itemPath, index, packagePath)
      if (item.ok) index++
      return item
    })
    reading = { docs, prepared, items: index }
    // Kept from the second reading of a content on: most contents read from disk are read once.
    if (!this.#seen.has(file.content)) this.#seen.add(file.content)
    else {
      if (!readings) this.#readings.set(file.content, (readings = new Map<string, FileLayout>()))
      readings.set(place, reading)
    }
    return reading
  }

  #prepare(text: string, path: string, index: number, packagePath: string | undefined): Prepared {
    const key = `${path}\0${index}\0${packagePath ?? ''}\0${text}`
    let prepared = this.#cache.get(key)
    if (prepared?.ok) prepared.uses++
    if (!prepared) {
      prepared = prepareItem(text, path, index, packagePath)
      this.#cache.set(key, prepared)
    }
    return prepared
  }
}

/** Parses one document and prints it as an annotated item (`- apiVersion: ...`). */
function prepareItem(text: string, path: string, index: number, packagePath: string | undefined): Prepared {
  let doc
  try {
    doc = parse(text, { source: `${path}[${index}]` })
  } catch (err) {
    return { ok: false, message: (err as Error).message }
  }
  const root = doc.contents
  if (!isMap(root)) return { ok: false, message: `${path}: resource must be a map` }
  for (const field of ['apiVersion', 'kind'] as const) {
    const value = root.get(field, true)
    if (!isScalar(value) || typeof value.value !== 'string' || value.value === '') {
      return { ok: false, message: `${path}: resource must have \`${field}\`` }
    }
  }
  // A comment at the top of the document travels with the object.
  if (doc.commentBefore) {
    root.commentBefore = root.commentBefore ? `${doc.commentBefore}\n${root.commentBefore}` : doc.commentBefore
    doc.commentBefore = null
  }
  const object = new KubeObject(root, doc)
  object.setPath(path, index)
  if (packagePath !== undefined) object.setAnnotation(packagePathAnnotation, packagePath)
  const chunk = object.toItemText()
  const wide = sequenceStyle(text) === 'wide'
  return { ok: true, chunk, wide, uses: 1 }
}

/**
 * The document text of an item: the original when the item is unchanged.
 * A parsed item of a normal document is printed once and compared with the
 * original; otherwise its item text is compared with the chunk it came from.
 * `commentsDropped`: the item was printed without its comments (see printDocument).
 */
function itemText(
  item: KubeObject,
  origin: ItemOrigin | undefined,
  resources: PackageResources,
): { text: string; commentsDropped: boolean } {
  if (origin === undefined) return printDocument(item, false)
  const original = resources.layouts.get(origin.file)!.docs[origin.slot]!.text
  if (item.unparsedText === origin.chunk) return { text: original, commentsDropped: false }
  const prepared = origin.prepared
  if (prepared.normal === undefined && prepared.uses > 1)
    prepared.normal = printDocument(KubeObject.fromItemSource(prepared.chunk, 0), prepared.wide).text === original
  if (prepared.normal) return printDocument(item, prepared.wide)
  return item.toItemText() === origin.chunk
    ? { text: original, commentsDropped: false }
    : printDocument(item, prepared.wide)
}

/**
 * The item as a standalone document without the annotations the reader added,
 * checked to read back: where it would not with its comments, it is printed
 * without them (`commentsDropped`). The annotations and comments are removed
 * from the item itself: `write` is the last use of the items it is given.
 */
function printDocument(item: KubeObject, wide: boolean): { text: string; commentsDropped: boolean } {
  for (const key of [
    pathAnnotation,
    legacyPathAnnotation,
    indexAnnotation,
    legacyIndexAnnotation,
    packagePathAnnotation,
  ])
    item.removeAnnotation(key)
  const annotations = item.getNode(['metadata', 'annotations'])
  if (isMap(annotations) && annotations.items.length === 0) item.remove(['metadata', 'annotations'])
  return item.toReadableYaml({ wide })
}

function fullPath(item: KubeObject, pathStyle: PathStyle): string {
  const path = item.path ?? ''
  if (pathStyle.style === 'eval') return path
  const pkg = item.packagePath
  if (pkg === undefined || pkg === pathStyle.root) return path
  return `${pkg.slice(pathStyle.root.length + 1)}/${path}`
}

function sortEntries<T extends { index: number; order: number }>(entries: T[]): T[] {
  return [...entries].sort((a, b) => a.index - b.index || a.order - b.order)
}

/**
 * True when a file's items are its documents as read, in order, each back in
 * its own slot with its original text: the file is unchanged (what most files
 * of a variant are), and need not be rebuilt to find that out.
 */
function keptAsRead(layout: FileLayout, entries: readonly { text: string; slot?: number }[]): boolean {
  if (entries.length !== layout.items) return false
  let previous = -1
  for (const { slot, text } of entries) {
    if (slot === undefined || slot <= previous || text !== layout.docs[slot]!.text) return false
    previous = slot
  }
  return true
}

/** The file's documents with each original slot replaced by its item's text, removed items dropped and new items appended. */
function rebuildFile(
  layout: FileLayout,
  entries: { index: number; order: number; text: string; slot?: number }[],
): string {
  const bySlot = new Map<number, string>()
  const extra: { index: number; order: number; text: string }[] = []
  for (const e of entries) {
    if (e.slot !== undefined && !bySlot.has(e.slot)) bySlot.set(e.slot, e.text)
    else extra.push(e)
  }
  const docs: DocumentText[] = []
  layout.docs.forEach((doc, slot) => {
    // Empty documents and those that are not KRM objects (never items) stay where they are.
    if (isEmptyDocument(doc.text) || layout.prepared[slot]?.ok === false) docs.push(doc)
    else if (bySlot.has(slot)) docs.push({ separator: doc.separator, text: bySlot.get(slot)! })
  })
  for (const e of sortEntries(extra)) docs.push({ separator: '---\n', text: e.text })
  if (docs.length > 0 && docs[0]!.separator === '---\n' && layout.docs[0]!.separator === '')
    docs[0] = { ...docs[0]!, separator: '' }
  return ensureSeparated(docs)
}

/** Every document but the first starts after a separator, and every separator follows a newline. */
function ensureSeparated(docs: DocumentText[]): string {
  let out = ''
  docs.forEach((doc, i) => {
    let separator = doc.separator
    if (i > 0 && separator === '') separator = '---\n'
    if (separator !== '' && out !== '' && !out.endsWith('\n')) out += '\n'
    out += separator + doc.text
  })
  return out
}
