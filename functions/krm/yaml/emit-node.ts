/**
 * Fast printing of a document's nodes in their simple, common form: block
 * maps and sequences of strings, no comments, anchors or tags. A fleet prints
 * each variant's changed Kptfile, package context and injected objects, and
 * the `yaml` library's printer costs about 20 µs a line on the machines we
 * measure (three quarters of a millisecond a variant). Anything beyond the
 * simple form returns undefined and the caller uses the library; a property
 * test (emit-node.property.test.ts) holds the two to the same bytes.
 */
import { fastPath } from '../fast-paths.js'
import { isMap, isPair, isScalar, isSeq, Scalar } from 'yaml'
import type { Document, Schema } from 'yaml'
import { printOptions } from './print-options.js'
import { stringValueText } from './string-style.js'

/** Thrown internally when a node needs the library's judgement. */
class NotSimple extends Error {}

/**
 * The document of `contents` (a block map) as the library prints it with the
 * kpt print options (`wide`: sequences indented under their key), or
 * undefined when it is not in the simple form.
 */
export function printSimpleDocument(contents: unknown, schema: Schema, wide: boolean): string | undefined {
  return printSimple(contents, schema, wide, 0, undefined)
}

/**
 * A block map as the one entry of a block sequence (`- apiVersion: ...`), the
 * form of a ResourceList item, as the library prints it with the kpt print
 * options; undefined when it is not in the simple form.
 */
export function printSimpleItem(contents: unknown, schema: Schema): string | undefined {
  return printSimple(contents, schema, false, 2, '- ')
}

/**
 * A whole document printed fast when it holds nothing the simple printer
 * leaves out (comments, markers, directives): a block map (an object, as
 * printSimpleDocument prints it), or a block sequence of one block map (a
 * ResourceList item, compact style only); otherwise undefined.
 */
export function printSimpleWholeDocument(doc: Document, wide: boolean): string | undefined {
  const { contents, directives } = doc
  if (doc.commentBefore || doc.comment || directives?.docStart || directives?.docEnd || directives?.yaml.explicit)
    return undefined
  if (isMap(contents)) return printSimpleDocument(contents, doc.schema, wide)
  if (wide || !isSeq(contents) || contents.items.length !== 1 || !isPlainNode(contents)) return undefined
  return printSimpleItem(contents.items[0], doc.schema)
}

function printSimple(
  contents: unknown,
  schema: Schema,
  wide: boolean,
  indent: number,
  firstPrefix: string | undefined,
): string | undefined {
  if (printOptions.lineWidth !== 0 || !fastPath('yaml')) return undefined // folding long lines is the library's
  if (!isMap(contents) || contents.items.length === 0) return undefined
  try {
    const lines: string[] = []
    new Printer(schema, wide, lines).map(contents, indent, firstPrefix)
    return `${lines.join('\n')}\n`
  } catch (err) {
    if (err instanceof NotSimple) return undefined
    throw err
  }
}

/** Strings the library prints plain unless a schema tag would read them as another type. */
const plainSafe = /^[A-Za-z0-9_./(][A-Za-z0-9_./:@+=()<>$~^ ,'"-]*$/
/** Strings a quoted style prints without escapes or folding. */
const quoteSafe = /^[\x20-\x7e]*$/

class Printer {
  constructor(
    private readonly schema: Schema,
    private readonly wide: boolean,
    private readonly lines: string[],
  ) {}

  /** A block map at `indent`; its first line starts with `firstPrefix` (`- `) when it is a sequence entry. */
  map(map: unknown, indent: number, firstPrefix: string | undefined): void {
    if (!isMap(map) || !isPlainNode(map)) throw new NotSimple()
    const pad = ' '.repeat(indent)
    map.items.forEach((pair, i) => {
      if (!isPair(pair)) throw new NotSimple()
      const lead = i === 0 && firstPrefix !== undefined ? `${' '.repeat(indent - 2)}${firstPrefix}` : pad
      const key = pair.key
      if (
        !isScalar(key) ||
        !isPlainNode(key, true) ||
        typeof key.value !== 'string' ||
        (key.type !== undefined && key.type !== Scalar.PLAIN)
      )
        throw new NotSimple()
      const k = this.plain(key.value)
      const value = pair.value
      // A key's own comment is printed after it only before a block collection (`metadata: # kpt-merge: ...`).
      const opensBlock = (isMap(value) || isSeq(value)) && value.items.length > 0
      if (key.comment && !opensBlock) throw new NotSimple()
      if (isScalar(value)) this.lines.push(`${lead}${k}: ${this.scalar(value)}`)
      else if (isMap(value)) {
        if (!isPlainNode(value)) throw new NotSimple()
        if (value.items.length === 0) this.lines.push(`${lead}${k}: {}`)
        else {
          this.lines.push(`${lead}${k}:${lineComment(key)}`)
          this.map(value, indent + 2, undefined)
        }
      } else if (isSeq(value)) {
        if (!isPlainNode(value)) throw new NotSimple()
        if (value.items.length === 0) this.lines.push(`${lead}${k}: []`)
        else {
          this.lines.push(`${lead}${k}:${lineComment(key)}`)
          this.seq(value.items, this.wide ? indent + 2 : indent)
        }
      } else throw new NotSimple()
    })
  }

  seq(items: readonly unknown[], indent: number): void {
    const pad = ' '.repeat(indent)
    for (const item of items) {
      if (isScalar(item)) this.lines.push(`${pad}- ${this.scalar(item)}`)
      else if (isMap(item)) {
        if (!isPlainNode(item)) throw new NotSimple()
        if (item.items.length === 0) this.lines.push(`${pad}- {}`)
        else this.map(item, indent + 2, '- ')
      } else throw new NotSimple()
    }
  }

  /** A scalar value with its trailing comment, if any. */
  scalar(node: Scalar): string {
    if (!isPlainNode(node, true) || typeof node.value !== 'string') throw new NotSimple()
    return `${this.string(node.value, node.type)}${lineComment(node)}`
  }

  string(value: string, type: Scalar['type']): string {
    let text: string | undefined
    switch (type) {
      case Scalar.QUOTE_SINGLE:
        if (!quoteSafe.test(value) || value.includes("'")) throw new NotSimple()
        return `'${value}'`
      case Scalar.QUOTE_DOUBLE:
      case undefined:
      case Scalar.PLAIN:
        text = stringValueText(value, this.schema, type === Scalar.QUOTE_DOUBLE)
        if (text === undefined) throw new NotSimple()
        return text
      default:
        throw new NotSimple()
    }
  }

  /** A key printed plain, as the library's plainString would; anything it would quote or fold is not simple. */
  plain(value: string): string {
    if (
      value.length > 1000 ||
      !plainSafe.test(value) ||
      value.endsWith(':') ||
      value.endsWith(' ') ||
      value.includes(': ')
    )
      throw new NotSimple()
    // The library quotes a plain string that one of the schema's other tags would read (true, null, 12, 1e3, 0x1F...).
    for (const tag of this.schema.tags)
      if (tag.default && tag.tag !== 'tag:yaml.org,2002:str' && tag.test?.test(value)) throw new NotSimple()
    return value
  }
}

/** No comment (but a trailing one where `trailing` allows it), blank line before, anchor, explicit tag or flow style: the rest is the library's. */
function isPlainNode(node: object, trailing = false): boolean {
  const n = node as {
    comment?: string | null
    commentBefore?: string | null
    spaceBefore?: boolean
    anchor?: string
    tag?: string
    flow?: boolean
  }
  if (n.comment && !(trailing && simpleComment.test(n.comment))) return false
  return !n.commentBefore && !n.spaceBefore && !n.anchor && !n.tag && !n.flow
}

/** A one-line comment that the library prints as `#` and its text. */
const simpleComment = /^[^\n\r]*\S[^\n\r]*$/

/** ` #comment` after a node's line, as the library's `commentString` and `lineComment` print it; '' without one. */
function lineComment(node: { comment?: string | null }): string {
  return node.comment ? ` #${node.comment}` : ''
}
