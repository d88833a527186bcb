/**
 * Where a KubeObject's content lives (the Go SDK keeps it behind an internal
 * map variant; we have two kinds):
 * - `NodeBacking`: the YAML map node it was parsed from or built as;
 * - `SourceBacking`: a ResourceList item kept as its source text (see
 *   lazy-items.ts) or a new object rendered straight to text (emit.ts). Its
 *   identity is read from a scanned header, and the text is parsed into nodes
 *   only when anything else is read; never parsed, it prints back verbatim.
 */
import { Document, isMap, isSeq, visit, YAMLSeq } from 'yaml'
import type { YAMLMap } from 'yaml'
import { LRUCache } from 'lru-cache'
import { scanHeader } from './lazy-items.js'
import type { ItemHeader } from './lazy-items.js'
import { dropComments } from './read-back.js'
import { parseRepeatedYamlDocument } from './repeated-parse.js'
import { checkNode, maxAliasCount, readPlainItemValue, stringifyYamlDocument, YamlSyntaxError } from './documents.js'

export interface ObjectBacking {
  /** The map node; a source is parsed on first use. */
  readonly node: YAMLMap
  /** The document the node lives in (anchors and schema), if any. */
  readonly doc: Document | undefined
  /** The exact source text while it has not been parsed; undefined once it has. */
  readonly unparsedText: string | undefined
  /** The scanned identity while the source has not been parsed; undefined otherwise (or when the scanner gives up, which parses). */
  header(): ItemHeader | undefined
  /** The object as an entry of a block sequence (`- apiVersion: ...`), as ResourceList items are printed. */
  itemText(): string
  /** The object as plain JavaScript, read without parsing an unparsed source into nodes where the text allows. */
  value(): Record<string, unknown>
  /** Removes every comment `itemText()` would print (a source is parsed first); true when there was one. */
  dropComments(): boolean
}

export class NodeBacking implements ObjectBacking {
  constructor(
    readonly node: YAMLMap,
    readonly doc: Document | undefined,
  ) {}

  get unparsedText(): undefined {
    return undefined
  }

  header(): undefined {
    return undefined
  }

  itemText(): string {
    return itemTextOf(this.node)
  }

  value(): Record<string, unknown> {
    return nodeValue(this.node, this.doc)
  }

  dropComments(): boolean {
    return dropComments(this.node)
  }
}

function nodeValue(node: YAMLMap, doc: Document | undefined): Record<string, unknown> {
  return node.toJS(doc ?? new Document(), { maxAliasCount }) as Record<string, unknown>
}

/**
 * Scanned headers by item text. The same item text recurs in every variant of
 * a blueprint (the orchestrator shares one text per document), so each is
 * scanned once; headers are never mutated (readers get copies). Budget: 8,000
 * headers, the most recently used kept, each a few short strings keyed by a
 * text the items share: a few MB. Made on first use (its slots are allocated
 * then), so a function that never scans pays nothing; false: no header.
 */
let headers: LRUCache<string, ItemHeader | false> | undefined

function scannedHeader(text: string): ItemHeader | null {
  headers ??= new LRUCache({ max: 8_000 })
  let header = headers.get(text)
  if (header === undefined) {
    header = scanHeader(text) ?? false
    headers.set(text, header)
  }
  return header || null
}

export interface SourceOptions {
  /** The caller has proven the text well-formed (see item-syntax.ts): the parse need not check keys and aliases. */
  checked?: boolean
  /** The caller's parse of the text, if it made one. */
  parsed?: Document.Parsed | undefined
  /** Rendered by emit.ts rather than read: block style throughout, nothing to check. */
  generated?: boolean
  /** The identity of a generated text, known from the value it was rendered from (emit.ts `renderedHeader`): not scanned. */
  header?: ItemHeader | undefined
}

export class SourceBacking implements ObjectBacking {
  #node: YAMLMap | undefined
  /** The item's own document (`- ` entry and all) once parsed: it prints the item back. */
  #doc: Document | undefined
  #parsed: Document.Parsed | undefined
  /** Scanned on first read; null when the scanner gave up. */
  #header: ItemHeader | null | undefined
  readonly #checked: boolean
  readonly #generated: boolean

  constructor(
    readonly text: string,
    readonly index: number,
    options: SourceOptions = {},
  ) {
    this.#checked = options.checked ?? false
    this.#parsed = options.parsed
    this.#generated = options.generated ?? false
    if (options.header) this.#header = options.header
  }

  get node(): YAMLMap {
    if (this.#node === undefined) this.#load()
    return this.#node!
  }

  get doc(): Document | undefined {
    if (this.#node === undefined) this.#load()
    return this.#doc
  }

  get unparsedText(): string | undefined {
    return this.#node === undefined ? this.text : undefined
  }

  header(): ItemHeader | undefined {
    if (this.#node !== undefined) return undefined
    if (this.#header === undefined) this.#header = scannedHeader(this.text)
    if (this.#header === null) {
      this.#load()
      return undefined
    }
    return this.#header
  }

  itemText(): string {
    if (this.#node === undefined) return this.text
    return stringifyYamlDocument(this.#doc!)
  }

  value(): Record<string, unknown> {
    if (this.#node === undefined) {
      // Read straight to values (plain-block.ts): the item stays text, and prints back verbatim.
      const read = readPlainItemValue(this.text)
      if (read !== undefined) return read
      this.#load()
    }
    return nodeValue(this.#node!, this.#doc)
  }

  dropComments(): boolean {
    if (this.#node === undefined) this.#load()
    // The item's own document prints it back: its comments around the `- ` entry too.
    return dropComments(this.#doc!)
  }

  #load(): void {
    const name = `ResourceList items[${this.index}]`
    const checkItem = (doc: Document.Parsed) => {
      const seq = doc.contents
      if (!isSeq(seq) || seq.items.length !== 1 || !isMap(seq.items[0])) {
        throw new YamlSyntaxError(`ResourceList \`items[${this.index}]\` is not an object`)
      }
      if (!this.#checked && !this.#generated) checkNode(seq.items[0], doc, name)
    }
    const doc = this.#parsed ?? parseRepeatedYamlDocument(this.text, name, checkItem)
    if (this.#parsed) checkItem(this.#parsed)
    this.#parsed = undefined
    const seq = doc.contents as YAMLSeq<YAMLMap>
    // Empty collections print as `{}` / `[]` either way, but a parsed one is flow
    // style and would stay so when filled; a generated object is block style throughout.
    if (this.#generated) {
      visit(doc, {
        Map: (_, map) => void (map.items.length === 0 && (map.flow = undefined)),
        Seq: (_, seq) => void (seq.items.length === 0 && (seq.flow = undefined)),
      })
    }
    this.#node = seq.items[0]
    this.#doc = doc
  }
}

/** A map node printed as the one entry of a block sequence. */
function itemTextOf(node: YAMLMap): string {
  const doc = new Document()
  const seq = new YAMLSeq()
  seq.items.push(node)
  doc.contents = seq
  return stringifyYamlDocument(doc)
}
