/**
 * KubeObject: a KRM object backed by the YAML nodes it was parsed from, so
 * every edit happens in place and comments, key order and styles survive
 * (modelled on the Go SDK's `fn.KubeObject`). Where the content lives, nodes
 * or an item's unparsed source text, is its backing's business (object-backing.ts).
 */
import { Document, isMap, isScalar, isSeq, Pair, YAMLMap } from 'yaml'
import type { Node } from 'yaml'
import {
  indexAnnotation,
  legacyIndexAnnotation,
  legacyPathAnnotation,
  localConfigAnnotation,
  packagePathAnnotation,
  pathAnnotation,
  upstreamIdentifierAnnotation,
} from './annotations.js'
import {
  maxAliasCount,
  newScalar,
  NodeBacking,
  print,
  printReadable,
  reconcileNode,
  renderedHeader,
  renderFieldText,
  renderItemText,
  scalarKey,
  SourceBacking,
  toNode,
  topLevelFieldText,
  YamlSyntaxError,
} from './yaml/index.js'
import type { ItemHeader, ObjectBacking } from './yaml/index.js'
import { formatFieldPath } from './field-path.js'
import type { FieldPath } from './field-path.js'
import { pathAnnotations, withPathAnnotations } from './path-annotations.js'

/** The file an object is in (and a result is about), relative to the package, and its index there. */
export interface FileRef {
  path: string
  index?: number
}

/** A field holds a value of another type than the caller asked for. */
export class FieldTypeError extends Error {
  constructor(
    readonly object: KubeObject,
    readonly field: string,
    readonly expected: string,
  ) {
    super(`${object.describe()}: \`${field}\` must be ${expected}`)
    this.name = 'FieldTypeError'
  }
}

/** Where a read-only source object came from (for results about it). */
export interface ObjectOrigin {
  file: string
  index: number
}

/** A Kubernetes-style object wrapping a YAML map node. */
export class KubeObject {
  /** Set on objects read from `--sources`. */
  origin?: ObjectOrigin

  readonly #backing: ObjectBacking

  constructor(node: YAMLMap, doc?: Document)
  /** An object over a backing of its own (object-backing.ts). */
  constructor(backing: ObjectBacking)
  constructor(content: YAMLMap | ObjectBacking, doc?: Document) {
    this.#backing = isMap(content) ? new NodeBacking(content, doc) : content
  }

  /**
   * Creates a new object from a plain value, with safe quoting and block style.
   * With `placement`, the path annotations are set as `setPath` would. Simple
   * values are rendered straight to text (see emit.ts) and parsed only if read.
   */
  static fromObject(value: Record<string, unknown>, placement?: { path: string; index?: number }): KubeObject {
    const placed = placement ? withPathAnnotations(value, placement.path, placement.index ?? 0) : value
    const text = renderItemText(placed)
    if (text !== undefined)
      return new KubeObject(new SourceBacking(text, -1, { generated: true, header: renderedHeader(placed) }))
    const node = toNode(placed)
    if (!isMap(node)) throw new TypeError('a KubeObject must be a map')
    return new KubeObject(node)
  }

  /**
   * An item of a ResourceList kept as its source text (see lazy-items.ts): it
   * is parsed the first time anything beyond its identity is read, and printed
   * back verbatim if it never is. `checked`: the caller has proven the text
   * well-formed (see item-syntax.ts), with `parsed` its parse if it made one;
   * otherwise the first parse also checks keys and aliases.
   */
  static fromItemSource(text: string, index: number, checked?: { parsed?: Document.Parsed | undefined }): KubeObject {
    return new KubeObject(new SourceBacking(text, index, checked ? { checked: true, parsed: checked.parsed } : {}))
  }

  /** The map node; edits through this object change it in place. */
  get node(): YAMLMap {
    return this.#backing.node
  }

  /** The document the node lives in (anchors and schema), if any. */
  get doc(): Document | undefined {
    return this.#backing.doc
  }

  /** Throws FieldTypeError when `apiVersion` is not a string (as do kind, name and namespace). */
  get apiVersion(): string {
    const header = this.#backing.header()
    return (header ? header.apiVersion : this.getString(['apiVersion'])) ?? ''
  }

  get kind(): string {
    const header = this.#backing.header()
    return (header ? header.kind : this.getString(['kind'])) ?? ''
  }

  get name(): string {
    const header = this.#backing.header()
    return (header ? header.name : this.getString(['metadata', 'name'])) ?? ''
  }

  get namespace(): string {
    const header = this.#backing.header()
    return (header ? header.namespace : this.getString(['metadata', 'namespace'])) ?? ''
  }

  /**
   * apiVersion, kind, name and namespace for messages and results: never
   * throws, a field of the wrong type reads as empty.
   */
  identity(): { apiVersion: string; kind: string; name: string; namespace: string } {
    let header: ItemHeader | undefined
    try {
      header = this.#backing.header()
    } catch (err) {
      if (!(err instanceof YamlSyntaxError)) throw err
      return { apiVersion: '', kind: '', name: '', namespace: '' }
    }
    // Walks the nodes without the typed getters, which would build a FieldTypeError, which describes the object...
    const read = (path: FieldPath): string => {
      let node: unknown = this.node
      for (const key of path) node = isMap(node) ? findPair(node, key as string)?.value : undefined
      return isScalar(node) && typeof node.value === 'string' ? node.value : ''
    }
    if (header)
      return {
        apiVersion: header.apiVersion ?? '',
        kind: header.kind ?? '',
        name: header.name ?? '',
        namespace: header.namespace ?? '',
      }
    return {
      apiVersion: read(['apiVersion']),
      kind: read(['kind']),
      name: read(['metadata', 'name']),
      namespace: read(['metadata', 'namespace']),
    }
  }

  /** The API group: `""` for the core group. */
  get group(): string {
    const apiVersion = this.apiVersion
    const slash = apiVersion.indexOf('/')
    return slash < 0 ? '' : apiVersion.slice(0, slash)
  }

  /** The API version without group: `v1` for `apps/v1`. */
  get version(): string {
    const apiVersion = this.apiVersion
    return apiVersion.slice(apiVersion.indexOf('/') + 1)
  }

  /** True for this exact apiVersion and kind. */
  isGVK(apiVersion: string, kind: string): boolean {
    return this.kind === kind && this.apiVersion === apiVersion
  }

  /** True for this group and kind, whatever the version. */
  isGroupKind(group: string, kind: string): boolean {
    return this.kind === kind && this.group === group
  }

  /** True when annotated `config.kubernetes.io/local-config: "true"`. */
  isLocalConfig(): boolean {
    return this.getAnnotation(localConfigAnnotation) === 'true'
  }

  /** `Kind/namespace/name` (or `Kind/name`), for messages. */
  describe(): string {
    const { kind, name, namespace } = this.identity()
    return namespace ? `${kind}/${namespace}/${name}` : `${kind}/${name}`
  }

  /**
   * The node at a path, or undefined when the path is absent (or null on the
   * way). A field on the way that holds another type (`spec` a string where
   * `spec.x` is asked for) is not taken as absent: it throws FieldTypeError.
   */
  getNode(path: FieldPath): Node | undefined {
    let node: unknown = this.node
    for (let i = 0; i < path.length; i++) {
      const part = path[i]!
      if (i > 0 && !(typeof part === 'number' ? isSeq(node) : isMap(node))) {
        if (isScalar(node) && node.value === null) return undefined
        throw new FieldTypeError(this, formatFieldPath(path.slice(0, i)), typeof part === 'number' ? 'a list' : 'a map')
      }
      if (typeof part === 'number') {
        if (!isSeq(node)) return undefined
        node = node.items[part]
      } else {
        if (!isMap(node)) return undefined
        node = findPair(node, part)?.value
      }
      if (node === undefined || node === null) return undefined
    }
    return node as Node
  }

  /** True when the path exists (even with a null value). */
  has(path: FieldPath): boolean {
    if (path.length === 0) return true
    const parent = this.getNode(path.slice(0, -1))
    const last = path[path.length - 1]!
    if (typeof last === 'number') return isSeq(parent) && last < parent.items.length
    return isMap(parent) && findPair(parent, last) !== undefined
  }

  /** The plain JS value at a path (maps become objects), or undefined. */
  get(path: FieldPath = []): unknown {
    const node = this.getNode(path)
    if (node === undefined) return undefined
    if (isScalar(node)) return node.value
    return node.toJS(this.doc ?? new Document(), { maxAliasCount })
  }

  /** A string field; throws FieldTypeError when the field holds something else. */
  getString(path: FieldPath): string | undefined {
    const node = this.getNode(path)
    if (node === undefined || (isScalar(node) && node.value === null)) return undefined
    if (isScalar(node) && typeof node.value === 'string') return node.value
    throw new FieldTypeError(this, formatFieldPath(path), 'a string')
  }

  /** A map of strings (labels, data); throws FieldTypeError on other shapes. */
  getStringMap(path: FieldPath): Record<string, string> | undefined {
    const node = this.getNode(path)
    if (node === undefined || (isScalar(node) && node.value === null)) return undefined
    if (!isMap(node)) throw new FieldTypeError(this, formatFieldPath(path), 'a map of strings')
    const out: Record<string, string> = {}
    for (const pair of node.items) {
      const key = scalarKey(pair.key)
      const value = pair.value
      if (key === undefined) throw new FieldTypeError(this, formatFieldPath(path), 'a map of strings')
      if (isScalar(value) && value.value === null) out[key] = ''
      else if (isScalar(value) && typeof value.value !== 'object') out[key] = String(value.value)
      else throw new FieldTypeError(this, formatFieldPath([...path, key]), 'a string')
    }
    return out
  }

  /** A list of strings; throws FieldTypeError on other shapes. */
  getStringList(path: FieldPath): string[] | undefined {
    const node = this.getNode(path)
    if (node === undefined || (isScalar(node) && node.value === null)) return undefined
    if (!isSeq(node)) throw new FieldTypeError(this, formatFieldPath(path), 'a list of strings')
    return node.items.map((item, i) => {
      if (isScalar(item) && item.value !== null && typeof item.value !== 'object') return String(item.value)
      throw new FieldTypeError(this, formatFieldPath([...path, i]), 'a string')
    })
  }

  /**
   * Sets the value at a path, creating maps on the way. Existing nodes are
   * reused (see reconcileNode), so an unchanged value changes no byte.
   */
  set(path: FieldPath, value: unknown): void {
    if (path.length === 0) throw new TypeError('set needs a path')
    if (path[0] === 'metadata' && path[1] === 'annotations' && path[2] === upstreamIdentifierAnnotation) {
      throw new Error(
        `${this.describe()}: \`${upstreamIdentifierAnnotation}\` is managed by kpt and must not be changed`,
      )
    }
    const parent = this.ensureMap(path.slice(0, -1))
    const last = path[path.length - 1]!
    if (typeof last === 'number') throw new TypeError('set cannot address a sequence index')
    const pair = findPair(parent, last)
    if (pair) pair.value = reconcileNode(pair.value as Node, value)
    else parent.items.push(new Pair(newScalar(last), toNode(value)))
  }

  /** Removes the field at a path; returns true if it existed. */
  remove(path: FieldPath): boolean {
    const parent = this.getNode(path.slice(0, -1))
    const last = path[path.length - 1]
    if (!isMap(parent) || typeof last !== 'string') return false
    const index = parent.items.findIndex((p) => scalarKey(p.key) === last)
    if (index < 0) return false
    parent.items.splice(index, 1)
    return true
  }

  /** The annotations, as a fresh object. */
  annotations(): Record<string, string> {
    const header = this.#backing.header()
    if (header) return { ...header.annotations }
    return this.getStringMap(['metadata', 'annotations']) ?? {}
  }

  getAnnotation(key: string): string | undefined {
    const header = this.#backing.header()
    if (header) return header.annotations?.[key]
    return this.#metadataString('annotations', key)
  }

  /** A label or annotation value; the whole map is read, so a list there, or a map as any value, is a FieldTypeError. */
  #metadataString(map: 'labels' | 'annotations', key: string): string | undefined {
    const values = this.getStringMap(['metadata', map])
    return values && Object.prototype.hasOwnProperty.call(values, key) ? values[key] : undefined
  }

  setAnnotation(key: string, value: string): void {
    this.set(['metadata', 'annotations', key], value)
  }

  removeAnnotation(key: string): boolean {
    return this.remove(['metadata', 'annotations', key])
  }

  /** The labels, as a fresh object. */
  labels(): Record<string, string> {
    const header = this.#backing.header()
    if (header) return { ...header.labels }
    return this.getStringMap(['metadata', 'labels']) ?? {}
  }

  getLabel(key: string): string | undefined {
    const header = this.#backing.header()
    if (header) return header.labels?.[key]
    return this.#metadataString('labels', key)
  }

  setLabel(key: string, value: string): void {
    this.set(['metadata', 'labels', key], value)
  }

  /** File path relative to the package (`internal.config.kubernetes.io/path`, else the legacy key). */
  get path(): string | undefined {
    return this.getAnnotation(pathAnnotation) ?? this.getAnnotation(legacyPathAnnotation)
  }

  /** Index within the file (0 when not annotated). */
  get index(): number {
    const raw = this.getAnnotation(indexAnnotation) ?? this.getAnnotation(legacyIndexAnnotation)
    const n = raw === undefined ? 0 : Number.parseInt(raw, 10)
    return Number.isFinite(n) ? n : 0
  }

  /** Absolute path of the owning (sub)package under `kpt fn render`. */
  get packagePath(): string | undefined {
    return this.getAnnotation(packagePathAnnotation)
  }

  /** Sets the file path (both forms, as kpt expects of generated objects). */
  setPath(path: string, index = 0): void {
    for (const [key, value] of Object.entries(pathAnnotations(path, index))) this.setAnnotation(key, value)
  }

  /** The file a result about this object should name (none when its annotations cannot be read). */
  fileRef(): FileRef | undefined {
    if (this.origin)
      return this.origin.index ? { path: this.origin.file, index: this.origin.index } : { path: this.origin.file }
    let path: string | undefined
    let index: number
    try {
      path = this.path
      index = this.index
    } catch (err) {
      if (err instanceof FieldTypeError || err instanceof YamlSyntaxError) return undefined
      throw err
    }
    if (!path) return undefined
    return index ? { path, index } : { path }
  }

  /** A plain JS copy of the whole object. */
  toJS(): Record<string, unknown> {
    return (this.get() ?? {}) as Record<string, unknown>
  }

  /**
   * A plain JS copy of the whole object (as `toJS()`), which leaves an unread
   * ResourceList item unparsed where its text allows (plain block YAML), so it
   * still prints back verbatim: for reading a large object that is not
   * changed (a dependency catalog).
   */
  plainValue(): Record<string, unknown> {
    return this.#backing.value()
  }

  /** A deep copy with its own nodes (comments and styles kept). */
  clone(): KubeObject {
    const copy = new KubeObject(this.node.clone() as YAMLMap, this.doc)
    if (this.origin) copy.origin = this.origin
    return copy
  }

  /** The object as a standalone YAML document (`wide`: sequences indented under their key). */
  toYaml(options: { wide?: boolean } = {}): string {
    const doc = new Document()
    doc.contents = this.node
    return print(doc, options)
  }

  /**
   * `toYaml`, checked to read back (yaml/read-back.ts, `printReadable`): an
   * object that would not parse with its comments loses them (kpt's `# kpt-merge:`
   * one kept where it can be) and prints without them; `commentsDropped` says so,
   * for the caller to warn (see `commentsDroppedMessage`). For writers of files.
   */
  toReadableYaml(options: { wide?: boolean } = {}): { text: string; commentsDropped: boolean } {
    const doc = new Document()
    doc.contents = this.node
    return printReadable(doc, options)
  }

  // ---- as a ResourceList item: printed back from its source text while it is not parsed

  /** The item's exact source text while it has not been parsed; undefined once it has. */
  get unparsedText(): string | undefined {
    return this.#backing.unparsedText
  }

  /**
   * The object as an entry of a block sequence (`- apiVersion: ...`), as
   * ResourceList items are printed: its source text if it was never parsed.
   */
  toItemText(): string {
    return this.#backing.itemText()
  }

  /**
   * Removes every comment of the object (an unparsed item is parsed first);
   * true when there was one. The ResourceList does this to an item whose text
   * would not read back with its comments, and warns of it.
   */
  dropComments(): boolean {
    return this.#backing.dropComments()
  }

  /**
   * True when this item has not been parsed and its top-level `key` is written
   * exactly as `value` renders (see emit.ts), which proves them equal without
   * parsing. False only means "not known": compare the parsed value then.
   */
  fieldTextEquals(key: string, value: unknown): boolean {
    const text = this.unparsedText
    if (text === undefined) return false
    const field = topLevelFieldText(text, key)
    return field !== undefined && field === renderFieldText(key, value)
  }

  /** The source text of an unparsed item's top-level field (see `fieldTextEquals`). */
  unparsedFieldText(key: string): string | undefined {
    const text = this.unparsedText
    return text === undefined ? undefined : topLevelFieldText(text, key)
  }

  private ensureMap(path: FieldPath): YAMLMap {
    let map: YAMLMap = this.node
    for (const part of path) {
      if (typeof part === 'number') throw new TypeError('set cannot address a sequence index')
      const pair = findPair(map, part)
      if (pair && isMap(pair.value)) {
        map = pair.value
        continue
      }
      const child = new YAMLMap()
      if (pair) pair.value = child
      else map.items.push(new Pair(newScalar(part), child))
      map = child
    }
    return map
  }
}

function findPair(map: YAMLMap, key: string): Pair | undefined {
  for (const pair of map.items) if (scalarKey(pair.key) === key) return pair
  return undefined
}
