/**
 * A reader for the plainest YAML, which is most of what a fleet holds: block
 * maps and sequences of one-line scalars, as kpt, kubectl and generators
 * write them, with no blank lines and no comments but kpt's own (below). The
 * `yaml` library's lexer, parser and composer spend ~100 µs on a ten-line Repository, most of
 * loading a fleet of thousands; this builds the very nodes they would (the
 * same classes, values, styles, sources and ranges; plain-block.property.test.ts
 * holds it to the library) in a fraction of that.
 *
 * The one comment it reads is kpt's own, after a key that opens a block
 * (`metadata: # kpt-merge: ns/name`), which every resource of a package that
 * kpt fetched or updated carries.
 *
 * Anything outside that subset (other comments, blank lines, anchors, tags, block or
 * multi-line scalars, flow collections other than `{}` and `[]`, numbers other
 * than plain decimal integers, nulls, keys that are not plain names, quoted
 * strings with escapes, tabs, odd indentation) makes it return undefined, and
 * the caller parses the text with the library, errors and all.
 */
import { Pair, Scalar, YAMLMap, YAMLSeq } from 'yaml'
import type { Schema } from 'yaml'

type Node = Scalar | YAMLMap | YAMLSeq

/** A node and the offset just past it (its range's end), or undefined: not plain. */
type Read = { node: Node; end: number; next: number } | undefined

/** Keys: plain names (`app.kubernetes.io/name`) that the core schema reads as strings. */
const plainKey = /^[A-Za-z_][A-Za-z0-9_./-]*$/
/**
 * Plain string values: a name-like start (or a path's `.`) and printable ASCII, single spaces inside. Past the
 * first character, quotes, commas, brackets and braces are text in a block scalar (a condition's
 * `message: injected resource "x" from cluster`); `#` never reaches here and `: ` is checked apart.
 */
const plainString =
  /^[A-Za-z_/.][!"$%&'()*+,\-./0-9:;<=>?@A-Z[\\\]^_`a-z{|}~]*(?: [!"$%&'()*+,\-./0-9:;<=>?@A-Z[\\\]^_`a-z{|}~]+)*$/
/**
 * The same text starting with a digit (a commit, a version) or with another character that no indicator is and a
 * core-schema tag may read (a range, `^1`, `~1.2`, `<2`, `=1.0`, `+1`): a string only if the schema reads it as none
 * of its other types.
 */
const digitString =
  /^[0-9^~<=(+$;][!"$%&'()*+,\-./0-9:;<=>?@A-Z[\\\]^_`a-z{|}~]*(?: [!"$%&'()*+,\-./0-9:;<=>?@A-Z[\\\]^_`a-z{|}~]+)*$/
/** Of the strings above, those the core schema reads as floats (`.5`, `.inf`, `.NaN`). */
const dotFloat = /^\.(?:[0-9]|(?:inf|Inf|INF|nan|NaN|NAN)$)/
const decimalInteger = /^(?:0|[1-9][0-9]{0,14})$/
/** Words the core schema reads as null or booleans: `true` and `false` are read here, the rest by the library. */
const keywords = new Set(['null', 'Null', 'NULL', 'true', 'True', 'TRUE', 'false', 'False', 'FALSE'])
/** Keys longer than this are left to the library, which reports those over YAML's 1,024 characters. */
const maxKeyLength = 1000
/** Deeper indentation than this is left to the library (and its nesting checks). */
const maxIndent = 200

/** The contents of a plain block document and where it ends, or undefined when the text is not one. */
export function readPlainBlock(text: string, schema: Schema): { contents: YAMLMap | YAMLSeq; end: number } | undefined {
  const lines = splitLines(text)
  if (!lines || lines.indent[0] !== 0) return undefined
  const reader = new PlainReader(text, lines, schema)
  const read = reader.block(0, 0)
  if (!read || read.next !== lines.count || read.node instanceof Scalar) return undefined
  return { contents: read.node, end: read.end }
}

export interface Lines {
  count: number
  /** Offset of each line's first character, its indentation and the offset of its newline (of its ` #` when it has a comment). */
  start: number[]
  indent: number[]
  end: number[]
  /** The comment of a `key: # comment` line (the text after `#`, as the library keeps it); sparse. */
  comment: (string | undefined)[]
}

/**
 * The text's lines; undefined for a text with anything the reader never accepts (tabs, carriage returns, blank
 * lines, trailing spaces, no final newline, comments but the one after a key that opens a block: kpt's
 * `metadata: # kpt-merge: ns/name`).
 */
export function splitLines(text: string): Lines | undefined {
  if (text.length === 0 || text.charCodeAt(text.length - 1) !== 10 || /[\t\r]/.test(text)) return undefined
  const lines: Lines = { count: 0, start: [], indent: [], end: [], comment: [] }
  let hash = text.indexOf('#')
  for (let start = 0; start < text.length;) {
    const newline = text.indexOf('\n', start)
    let end = newline
    let indent = 0
    while (text.charCodeAt(start + indent) === 32) indent++
    // Blank lines, trailing spaces and document markers are the library's to place.
    if (start + indent === end || text.charCodeAt(end - 1) === 32 || indent > maxIndent) return undefined
    if (
      indent === 0 &&
      (text.startsWith('---', start) || text.startsWith('...', start) || text.charCodeAt(start) === 37)
    )
      return undefined
    if (hash >= 0 && hash < end) {
      // Only `key: # comment`: a colon and a space before the line's first `#`, and a key with a block below it.
      if (
        hash < start + indent + 2 ||
        text.charCodeAt(hash - 1) !== 32 ||
        text.charCodeAt(hash - 2) !== 58 ||
        hash + 1 === newline
      )
        return undefined
      lines.comment[lines.count] = text.slice(hash + 1, newline)
      end = hash - 1
      hash = text.indexOf('#', newline)
    }
    lines.start.push(start)
    lines.indent.push(indent)
    lines.end.push(end)
    lines.count++
    start = newline + 1
  }
  return lines
}

class PlainReader {
  constructor(
    private readonly text: string,
    private readonly lines: Lines,
    private readonly schema: Schema,
  ) {}

  /** The block collection whose first entry is on line `i` at column `col`: a sequence if it starts with `- `, else a map. */
  block(i: number, col: number): Read {
    return this.#isDash(i, col) ? this.#seq(i, col) : this.#map(i, col)
  }

  #isDash(i: number, col: number): boolean {
    const at = this.lines.start[i]! + col
    return this.text.charCodeAt(at) === 45 && this.text.charCodeAt(at + 1) === 32
  }

  /** A block map: entries on line `i` from column `col`, then on every following line indented exactly `col`. */
  #map(i: number, col: number): Read {
    const { lines } = this
    const map = new YAMLMap(this.schema)
    const first = lines.start[i]! + col
    let end = first
    while (i < lines.count) {
      const lineEnd = lines.end[i]!
      const entry = this.#entryKey(lines.start[i]! + col, lineEnd)
      if (!entry) return undefined
      const { key, colon } = entry
      let value: Read
      if (colon + 1 === lineEnd) {
        // `key:` and a block below: more indented, or a sequence at the key's own indentation (as kpt writes them).
        const comment = lines.comment[i]
        if (comment !== undefined) key.comment = comment
        const next = i + 1
        if (next >= lines.count) return undefined
        const indent = lines.indent[next]!
        if (indent > col) value = this.block(next, indent)
        else if (indent === col && this.#isDash(next, col)) value = this.#seq(next, col)
        else return undefined
      } else {
        value = this.#inline(colon + 2, lineEnd, i + 1, col)
      }
      if (!value) return undefined
      map.items.push(new Pair(key, value.node))
      end = value.end
      i = value.next
      if (i >= lines.count || lines.indent[i]! < col) break
      // Only the next entry may sit at this indentation; anything deeper, or a stray `- `, is not plain.
      if (lines.indent[i]! > col || this.#isDash(i, col)) return undefined
    }
    map.range = [first, end, end]
    return { node: map, end, next: i }
  }

  /** A block sequence: `- ` entries on line `i` and the following lines, each at column `col`. */
  #seq(i: number, col: number): Read {
    const { lines } = this
    const seq = new YAMLSeq(this.schema)
    const first = lines.start[i]! + col
    let end = first
    while (i < lines.count && lines.indent[i] === col && this.#isDash(i, col)) {
      const at = lines.start[i]! + col + 2
      const lineEnd = lines.end[i]!
      let item: Read
      if (this.#isDash(i, col + 2)) return undefined // `- - x`: nested on one line
      if (this.#entryKey(at, lineEnd)) item = this.#map(i, col + 2)
      else item = this.#inline(at, lineEnd, i + 1, col)
      if (!item) return undefined
      seq.items.push(item.node)
      end = item.end
      i = item.next
    }
    if (i < lines.count && lines.indent[i]! >= col && !(lines.indent[i] === col && !this.#isDash(i, col)))
      return undefined
    seq.range = [first, end, end]
    return { node: seq, end, next: i }
  }

  /** The key of a map entry at `at` (`key:` then a space or the line's end) and its colon; undefined for a scalar or a key that is not plain. */
  #entryKey(at: number, lineEnd: number): { key: Scalar; colon: number } | undefined {
    const colon = this.text.indexOf(':', at)
    if (colon < 0 || colon > lineEnd || (colon + 1 !== lineEnd && this.text.charCodeAt(colon + 1) !== 32))
      return undefined
    const key = this.#key(at, colon)
    return key && { key, colon }
  }

  /** A key from `at` to the colon: a plain name or a simply quoted one. */
  #key(at: number, colon: number): Scalar | undefined {
    // YAML allows an implicit key at most 1,024 characters: a longer one is the library's error to report.
    if (colon - at > maxKeyLength) return undefined
    const source = this.text.slice(at, colon)
    const quoted = quotedValue(source)
    if (quoted) return scalar(quoted.value, at, colon, colon, quoted.value, quoted.type)
    if (!plainKey.test(source) || keywords.has(source)) return undefined
    return scalar(source, at, colon, colon, source, 'PLAIN')
  }

  /** A value on the rest of a line (from `at` to `lineEnd`) in a collection at column `col`; a line below indented deeper would continue it: not plain. */
  #inline(at: number, lineEnd: number, next: number, col: number): Read {
    if (next < this.lines.count && this.lines.indent[next]! > col) return undefined
    const source = this.text.slice(at, lineEnd)
    const end = lineEnd + 1
    if (source === '{}' || source === '[]') {
      const empty = source === '{}' ? new YAMLMap(this.schema) : new YAMLSeq(this.schema)
      empty.flow = true
      empty.range = [at, lineEnd, end]
      return { node: empty, end, next }
    }
    const quoted = quotedValue(source)
    if (quoted) return { node: scalar(quoted.value, at, lineEnd, end, quoted.value, quoted.type), end, next }
    const value = plainScalarValue(source, this.schema)
    if (value === undefined) return undefined
    return { node: scalar(value, at, lineEnd, end, source, 'PLAIN'), end, next }
  }
}

/** The string a key from `source` (up to its colon) reads as, in the reader's subset: a plain name or a simply quoted one. */
export function plainKeyValue(source: string): string | undefined {
  if (source.length > maxKeyLength) return undefined
  const quoted = quotedValue(source)
  if (quoted) return quoted.value
  return plainKey.test(source) && !keywords.has(source) ? source : undefined
}

/** The value the library reads from a plain scalar on one line, in the reader's subset; undefined for anything else. */
export function plainScalarValue(source: string, schema: Schema): string | number | boolean | undefined {
  if (source === 'true' || source === 'false') return source === 'true'
  if (decimalInteger.test(source)) return Number(source)
  if (
    plainString.test(source) &&
    !keywords.has(source) &&
    !dotFloat.test(source) &&
    !source.includes(': ') &&
    !source.endsWith(':')
  )
    return source
  if (digitString.test(source) && !source.includes(': ') && !source.endsWith(':') && readsAsString(source, schema))
    return source
  return undefined
}

/**
 * Whether no tag of the schema but the string's reads a plain scalar (`32fdf43`, a commit, but not `1e3` or
 * `0x1F`): the composer's own test. The schemas here are YAML 1.2 core ones, whose nulls, booleans and numbers
 * all start with one of `-+0-9.~nNtTfF`; the answers for those are kept (versions recur).
 */
function readsAsString(source: string, schema: Schema): boolean {
  if (!coreScalarStart.test(source)) return true
  let reads = readsAsStringCache.get(source)
  if (reads === undefined) {
    reads = !schema.tags.some((tag) => tag.default === true && 'test' in tag && tag.test?.test(source))
    if (readsAsStringCache.size >= 10_000) readsAsStringCache.clear()
    readsAsStringCache.set(source, reads)
  }
  return reads
}

const coreScalarStart = /^[-+0-9.~nNtTfF]/
/** Budget: 10,000 short scalars, started afresh when full; a plain Map for the reason emit.ts's otherTexts is one. */
const readsAsStringCache = new Map<string, boolean>()

/** A single-quoted string without quotes inside, or a double-quoted one without escapes. */
export function quotedValue(source: string): { value: string; type: 'QUOTE_SINGLE' | 'QUOTE_DOUBLE' } | undefined {
  const quote = source.charCodeAt(0)
  if ((quote !== 39 && quote !== 34) || source.length < 2 || source.charCodeAt(source.length - 1) !== quote)
    return undefined
  const value = source.slice(1, -1)
  if (value.includes(quote === 39 ? "'" : '"') || (quote === 34 && value.includes('\\')) || /[^ -~]/.test(value))
    return undefined
  return { value, type: quote === 39 ? 'QUOTE_SINGLE' : 'QUOTE_DOUBLE' }
}

/** A scalar with the fields the library's composer gives it, in its order (value, range, source, type). */
function scalar(
  value: string | number | boolean,
  start: number,
  valueEnd: number,
  end: number,
  source: string,
  type: Scalar.Type,
): Scalar {
  const node = new Scalar(value)
  node.range = [start, valueEnd, end]
  ;(node as { source?: string }).source = source
  node.type = type
  return node
}
