/** ResourceList: the wire format between kpt and a KRM function. */
import { Document, isMap, isNode, isScalar, isSeq, YAMLSeq } from 'yaml'
import type { Node, YAMLMap } from 'yaml'
import { KubeObject } from './kube-object.js'
import { commentsDroppedMessage } from './readable.js'
import { newResult, Results } from './results.js'
import type { Result } from './results.js'
import {
  checkNode,
  dropComments,
  isPlainBlockItem,
  itemsPlaceholder,
  parse,
  print,
  readsBack,
  renderItemText,
  scalarKey,
  scanHeader,
  splitItems,
  toNode,
  YamlSyntaxError,
} from './yaml/index.js'
import type { SharedTexts } from './yaml/index.js'

/** The input could not be read as a ResourceList; the message says why. */
export class ResourceListError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ResourceListError'
  }
}

const defaultApiVersion = 'config.kubernetes.io/v1'

/**
 * A parsed ResourceList. Transforms edit `items` (in place, or by adding and
 * removing entries) and append to `results`; `toString()` prints the list in
 * kpt's style, keeping everything that was not changed byte for byte.
 */
export class ResourceList {
  /** The objects the function reads and writes, in input order. */
  items: KubeObject[]
  /** The function's configuration, if kpt passed one. */
  functionConfig: KubeObject | undefined
  /** Results produced by this run (appended after any the input carried). */
  readonly results = new Results()
  /** Items whose `status` a failed run's output keeps (see keepStatusOnFailure). */
  readonly #statusOnFailure: KubeObject[] = []
  /** Items whose comments were dropped for the output to read back; each print warns of them. */
  readonly #commentsDropped = new Set<KubeObject>()
  /** Whether a print set `results` (which an item removed since can leave empty). */
  #resultsSet = false

  private constructor(
    private readonly doc: Document,
    items: KubeObject[],
    functionConfig: KubeObject | undefined,
    private readonly inputResults: unknown[],
    /** True when `doc` is the shell of a lazily split list (its items print from their own text). */
    private readonly lazy = false,
  ) {
    this.items = items
    this.functionConfig = functionConfig
  }

  /**
   * Parses a ResourceList; throws ResourceListError with a one-line reason.
   * Items of a list in kpt's layout are parsed lazily (see lazy-items.ts)
   * unless `lazy` is false.
   */
  static parse(text: string, options: { lazy?: boolean } = {}): ResourceList {
    if (text.trim() === '') throw new ResourceListError('input is empty: expected a ResourceList on stdin')
    const split = options.lazy === false ? undefined : splitItems(text)
    const doc = parseListDocument(text, split?.shell)
    const root = doc.contents
    if (!isMap(root)) throw new ResourceListError('input is not a ResourceList: expected a YAML map at the top level')
    checkListFields(root, doc)
    const kind: unknown = root.get('kind')
    if (kind !== 'ResourceList') {
      throw new ResourceListError(
        `input is not a ResourceList: \`kind\` is ${JSON.stringify(kind ?? null)}, expected "ResourceList"`,
      )
    }
    const itemsNode = itemsSequence(root)
    const items = split ? lazyItems(split.chunks) : itemsNode ? parsedItems(itemsNode, doc) : []
    const functionConfig = readFunctionConfig(root, doc)
    const resultsNode = root.get('results', true)
    const inputResults = isSeq(resultsNode) ? resultsNode.items : []
    return new ResourceList(doc, items, functionConfig, inputResults, split !== undefined)
  }

  /**
   * Keeps this item's `status` in the output of a run that fails, whose items
   * are otherwise the input's, unchanged: as a controller writes an object's
   * status before returning its error (Porch's PackageVariantSet conditions).
   */
  keepStatusOnFailure(item: KubeObject): void {
    if (!this.#statusOnFailure.includes(item)) this.#statusOnFailure.push(item)
  }

  /** The items whose status a failed run keeps, in the order they were named. */
  get statusOnFailure(): readonly KubeObject[] {
    return this.#statusOnFailure
  }

  /** A new, empty ResourceList (for errors before any input could be read). */
  static empty(): ResourceList {
    return ResourceList.of([])
  }

  /**
   * A ResourceList over objects already in memory, for running transforms
   * in-process (the orchestrator): the items are used as they are, not copied,
   * and `toString()` prints them and the results (not the functionConfig).
   */
  static of(items: KubeObject[], functionConfig?: KubeObject): ResourceList {
    const doc = new Document({ apiVersion: defaultApiVersion, kind: 'ResourceList', items: [] })
    return new ResourceList(doc, items, functionConfig, [])
  }

  /**
   * Prints the list; `items:` is always present, `results:` only when there are any. Output that would not
   * read back loses comments instead (see yaml/read-back.ts): an item's are dropped with a warning result
   * naming its file, here and in every later print.
   */
  toString(): string {
    const root = this.doc.contents
    if (!isMap(root)) throw new Error('ResourceList document lost its root map')
    let itemsNode: unknown = root.get('items', true)
    if (!isSeq(itemsNode)) {
      itemsNode = new YAMLSeq()
      root.set('items', itemsNode)
    }
    if (this.lazy) {
      // Each item prints from its own text (untouched ones verbatim), the list around them from the shell.
      const items = this.items.map((item) => this.#readableItemText(item))
      let printed = this.#print(root)
      // The shell's comments (the functionConfig's) reach no file: kpt writes back the items only.
      if (!readsBack(printed.text) && dropComments(this.doc)) printed = this.#print(root)
      const text = printed.finish()
      if (this.items.length === 0) return text
      // The shell printed `items: []` at column 0; put the items there.
      return replacePlaceholder(text, itemsPlaceholder, `items:\n${items.join('')}`)
    }
    ;(itemsNode as YAMLSeq).items = this.items.map((o) => o.node)
    let printed = this.#print(root)
    if (readsBack(printed.text)) return printed.finish()
    // Drop the comments of the items that do not read back alone; then the list's own; then all.
    for (const item of this.items) if (!readsBack(item.toItemText())) this.#dropComments(item)
    printed = this.#print(root)
    if (readsBack(printed.text)) return printed.finish()
    if (dropComments(this.doc, new Set(this.items.map((item) => item.node)))) {
      printed = this.#print(root)
      if (readsBack(printed.text)) return printed.finish()
    }
    for (const item of this.items) this.#dropComments(item)
    return this.#print(root).finish()
  }

  #dropComments(item: KubeObject): void {
    if (item.dropComments()) this.#commentsDropped.add(item)
  }

  /** A lazily printed item's text: a parsed one is printed, and checked to read back (an unparsed one is its input). */
  #readableItemText(item: KubeObject): string {
    const text = item.toItemText()
    if (item.unparsedText !== undefined || readsBack(text)) return text
    this.#dropComments(item)
    return item.toItemText()
  }

  /**
   * The list's document printed with its results (the input's, this run's, and a warning per item whose comments
   * were dropped): `text` as printed, with new results as a placeholder line where they print straight to text;
   * `finish()` the whole text.
   */
  #print(root: YAMLMap): { text: string; finish(): string } {
    const results = [...this.results.items]
    for (const item of this.items) if (this.#commentsDropped.has(item)) results.push(commentsDroppedWarning(item))
    // New results print straight to text (emit.ts) where they can: a run can have tens of thousands.
    // (In a block-style list only, where the empty `results` prints on a line of its own.)
    const resultsText =
      this.inputResults.length === 0 && results.length > 0 && !root.flow ? resultsItemText(results) : undefined
    if (this.inputResults.length > 0 || results.length > 0) {
      const resultsNode = new YAMLSeq()
      if (resultsText === undefined) resultsNode.items = [...this.inputResults, ...results.map(resultNode)]
      root.set('results', resultsNode)
      this.#resultsSet = true
    } else if (this.#resultsSet) {
      // An earlier print's warnings, whose items are gone.
      root.delete('results')
      this.#resultsSet = false
    }
    const text = print(this.doc)
    return {
      text,
      finish: () =>
        resultsText === undefined ? text : replacePlaceholder(text, resultsPlaceholder, `results:\n${resultsText}`),
    }
  }
}

/** The warning that an item's comments were dropped, naming its file (and the item). */
function commentsDroppedWarning(item: KubeObject): Result {
  return newResult('warning', commentsDroppedMessage(item.fileRef()?.path, item.describe()), { object: item })
}

/**
 * The index of the item whose text holds 1-based `line`, counting the `- `
 * entries of the top-level `items:` block; undefined outside it.
 */
function itemAtLine(text: string, line: number): number | undefined {
  const lines = text.split('\n', line)
  const start = lines.findIndex((l) => /^items\s*:\s*(#.*)?$/.test(l))
  if (start < 0 || start >= line - 1) return undefined
  let dash: string | undefined
  let index = -1
  for (let i = start + 1; i < line; i++) {
    const l = lines[i]!
    if (/^\S/.test(l) && !l.startsWith('-') && !l.startsWith('#')) return undefined // a later top-level key
    const entry = /^( *)- ?/.exec(l)
    if (entry && (dash === undefined || entry[1] === dash)) {
      dash ??= entry[1]
      index++
    }
  }
  return index >= 0 ? index : undefined
}

/** How messages name item `i`: its position, plus its kind and name when they can be read. */
function itemSource(i: number, item?: KubeObject): string {
  let identity = ''
  try {
    identity = item ? item.describe() : ''
  } catch {
    // A malformed identity still leaves the position to name the item.
  }
  return identity && identity !== '/' ? `ResourceList items[${i}] (${identity})` : `ResourceList items[${i}]`
}

/** The list's document: the whole text's, or a split list's shell's; a syntax error names the item it is in. */
function parseListDocument(text: string, shell: string | undefined): Document.Parsed {
  try {
    return parse(shell ?? text, { source: 'ResourceList' })
  } catch (err) {
    if (!(err instanceof YamlSyntaxError)) throw err
    const item = shell !== undefined || err.line === undefined ? undefined : itemAtLine(text, err.line)
    throw new ResourceListError(
      `malformed YAML in ${item === undefined ? err.message : err.message.replace(/^ResourceList/, `ResourceList items[${item}]`)}`,
    )
  }
}

/** Checks the list's own fields, which are printed back: keys given once, no broken alias. */
function checkListFields(root: YAMLMap, doc: Document): void {
  // go-yaml (kpt) rejects a key given twice; the parser would read the first and print both.
  const duplicate = duplicateKey(root)
  if (duplicate !== undefined)
    throw new ResourceListError(`malformed YAML in ResourceList: duplicate key \`${duplicate}\``)
  // An alias there to an anchor never set (or an alias bomb) is an input error, not a crash when the output is
  // printed. Items and the functionConfig are checked as they are read.
  for (const pair of root.items) {
    const key = scalarKey(pair.key)
    // A key that is no scalar (`? *a`, `? [x]`) is printed back too.
    if (key === undefined && isNode(pair.key)) checkOrThrow(pair.key, doc, () => 'ResourceList key')
    if (key !== 'items' && key !== 'functionConfig' && isNode(pair.value))
      checkOrThrow(pair.value, doc, () => `ResourceList ${key ?? 'key'}`)
  }
}

/** The `items` sequence; undefined when it is empty (`items:` or null); an error when absent or not a list. */
function itemsSequence(root: YAMLMap): YAMLSeq | undefined {
  const itemsNode = root.get('items', true)
  if (itemsNode === undefined || (isScalar(itemsNode) && itemsNode.value === null)) {
    if (!root.has('items')) throw new ResourceListError('ResourceList has no `items` field')
  } else if (!isSeq(itemsNode)) {
    throw new ResourceListError('ResourceList `items` must be a list of objects')
  }
  return isSeq(itemsNode) ? itemsNode : undefined
}

/**
 * The items of a split list, kept as text. An item printed back verbatim must be valid YAML: the line check proves
 * it for kpt's block style, anything else is parsed now (and the parse is kept for when it is read).
 */
function lazyItems(chunks: readonly string[]): KubeObject[] {
  const items: KubeObject[] = []
  chunks.forEach((chunk, i) =>
    items.push(
      KubeObject.fromItemSource(chunk, i, { parsed: isPlainBlockItem(chunk) ? undefined : parseItem(chunk, i) }),
    ),
  )
  return items
}

/** The items of a list parsed whole, each an object and checked. */
function parsedItems(itemsNode: YAMLSeq, doc: Document): KubeObject[] {
  const items: KubeObject[] = []
  itemsNode.items.forEach((node, i) => {
    if (!isMap(node)) throw new ResourceListError(`ResourceList \`items[${i}]\` is not an object`)
    const item = new KubeObject(node, doc)
    checkOrThrow(node, doc, () => itemSource(i, item))
    items.push(item)
  })
  return items
}

/** The functionConfig, checked; undefined when absent or null. */
function readFunctionConfig(root: YAMLMap, doc: Document): KubeObject | undefined {
  const fcNode = root.get('functionConfig', true)
  if (isMap(fcNode)) {
    const functionConfig = new KubeObject(fcNode, doc)
    checkOrThrow(fcNode, doc, () => 'ResourceList functionConfig')
    return functionConfig
  }
  if (fcNode !== undefined && !(isScalar(fcNode) && fcNode.value === null))
    throw new ResourceListError('ResourceList `functionConfig` must be an object')
  return undefined
}

/** Parses and checks a lazily kept item that the line check could not prove well-formed. */
function parseItem(chunk: string, i: number): Document.Parsed {
  const header = scanHeader(chunk)
  const name = header?.kind
    ? `${header.kind}/${header.namespace ? `${header.namespace}/` : ''}${header.name ?? ''}`
    : ''
  const source = name ? `ResourceList items[${i}] (${name})` : `ResourceList items[${i}]`
  try {
    const doc = parse(chunk, { source })
    const seq = doc.contents
    if (isSeq(seq) && isMap(seq.items[0])) checkNode(seq.items[0], doc, source)
    return doc
  } catch (err) {
    if (err instanceof YamlSyntaxError) throw new ResourceListError(`malformed YAML in ${err.message}`)
    throw err
  }
}

/**
 * The first key the list's own map holds twice (a lazily split list: its shell, whose one `items:` the
 * splitter made sure of). Only the top level: items and the functionConfig are checked as they are read.
 */
function duplicateKey(root: YAMLMap): string | undefined {
  const seen = new Set<string>()
  for (const pair of root.items) {
    const key = scalarKey(pair.key)
    if (key === undefined) continue
    if (seen.has(key)) return key
    seen.add(key)
  }
  return undefined
}

/** Checks a parsed item or functionConfig; `source` names it, built only when there is a problem. */
function checkOrThrow(node: Node, doc: Document, source: () => string): void {
  try {
    checkNode(node, doc, '\0')
  } catch (err) {
    if (err instanceof YamlSyntaxError)
      throw new ResourceListError(`malformed YAML in ${err.message.replace('\0', source())}`)
    throw err
  }
}

const resultsPlaceholder = 'results: []'

/**
 * The text with its one top-level `placeholder` line (an empty `items` or `results`, which only the list's own map
 * can hold at column 0) replaced by `replacement`, which ends with a newline.
 */
function replacePlaceholder(text: string, placeholder: string, replacement: string): string {
  const at = text.search(new RegExp(`^${placeholder.replace(/[[\]]/g, '\\$&')}$`, 'm'))
  if (at < 0) throw new Error(`ResourceList lost its placeholder \`${placeholder}\``)
  return `${text.slice(0, at)}${replacement}${text.slice(at + placeholder.length + 1)}`
}

/** The results as the entries of the `results` sequence, as the library prints them, or undefined when one needs the library. */
function resultsItemText(results: readonly Result[]): string | undefined {
  // One result at a time: each one's lines are garbage at once (one list of lines for all of them costs more).
  const texts: string[] = []
  const shared: SharedTexts = new Map()
  for (const result of results) {
    const text = renderItemText(resultValue(result), shared)
    if (text === undefined) return undefined
    texts.push(text)
  }
  return texts.join('')
}

/** A result's fields in kpt's order. */
function resultValue(result: Result): Record<string, unknown> {
  const ordered: Record<string, unknown> = { message: result.message, severity: result.severity }
  if (result.resourceRef) ordered['resourceRef'] = result.resourceRef
  if (result.field) ordered['field'] = result.field
  if (result.file) ordered['file'] = result.file
  if (result.tags) ordered['tags'] = result.tags
  return ordered
}

function resultNode(result: Result) {
  return toNode(resultValue(result))
}
