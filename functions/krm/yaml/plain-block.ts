/**
 * A reader for the plainest YAML, which is most of what a fleet holds: block
 * maps and sequences of one-line scalars, as kpt, kubectl and generators
 * write them, with no blank lines and no comments but kpt's own (below). The
 * `yaml` library's lexer, parser and composer spend ~100 µs on a ten-line Repository, most of
 * loading a fleet of thousands; this builds the very nodes they would (the
 * same classes, values, styles, sources and ranges; plain-block.property.test.ts
 * holds it to the library) in a fraction of that.
 *
 * The same reader also builds plain JavaScript values instead (`readPlainValue`): what the library's `toJS()`
 * gives for the same text, for a function that only reads a large object (a dependency catalog of 50,000
 * packages is 6 MB of YAML; its nodes take seconds to build and collect, its values a fraction of that). It
 * declines one thing more there: a key given twice (the caller's check names it) and `__proto__`
 * (plain-values.property.test.ts holds it to the library).
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
import { fastPath } from '../fast-paths.js'
import { Pair, Scalar, YAMLMap, YAMLSeq } from 'yaml'
import type { Schema } from 'yaml'

/** A plain JavaScript value as `readPlainValue` builds it. */
export type PlainValue = string | number | boolean | PlainValue[] | { [key: string]: PlainValue }

type ScalarType = 'PLAIN' | 'QUOTE_SINGLE' | 'QUOTE_DOUBLE'

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
  if (!fastPath('yaml')) return undefined
  const lines = splitLines(text)
  if (!lines || lines.indent[0] !== 0) return undefined
  const reader = new PlainReader(text, lines, schema, nodeBuilder(schema))
  const contents = reader.block(0, 0)
  if (!contents || reader.next !== lines.count) return undefined
  return { contents, end: reader.end }
}

/** The value of a plain block document, or undefined when the text is not one (or repeats a key). */
export function readPlainValue(text: string, schema: Schema): PlainValue | undefined {
  if (!fastPath('yaml')) return undefined
  const lines = splitLines(text)
  if (!lines || lines.indent[0] !== 0) return undefined
  const reader = new PlainReader(text, lines, schema, valueBuilder)
  const value = reader.block(0, 0)
  if (value === undefined || reader.next !== lines.count) return undefined
  return value
}

/**
 * What the reader builds of what it reads: the library's nodes (`nodeBuilder`) or plain values
 * (`valueBuilder`). The offsets are the text's, for the nodes' ranges.
 */
interface Builder<Value, Mapping extends Value, Sequence extends Value> {
  map(): Mapping
  /** Adds an entry to a map, its key from `at` to `colon`; false declines the text. */
  entry(
    map: Mapping,
    key: string,
    keyType: ScalarType,
    at: number,
    colon: number,
    comment: string | undefined,
    value: Value,
  ): boolean
  seq(): Sequence
  item(seq: Sequence, item: Value): void
  /** A map or sequence read whole, from its first entry's `first` to `end`. */
  close(collection: Mapping | Sequence, first: number, end: number): void
  /** `{}` or `[]` from `at` to `lineEnd`, its line ending at `end`. */
  empty(map: boolean, at: number, lineEnd: number, end: number): Value
  /** A scalar from `at` to `valueEnd`, its line ending at `end`. */
  scalar(
    value: string | number | boolean,
    type: ScalarType,
    source: string,
    at: number,
    valueEnd: number,
    end: number,
  ): Value
}

/** Builds the nodes the library's composer would, with the same fields. */
function nodeBuilder(schema: Schema): Builder<Scalar | YAMLMap | YAMLSeq, YAMLMap, YAMLSeq> {
  return {
    map: () => new YAMLMap(schema),
    entry(map, key, keyType, at, colon, comment, value) {
      const keyNode = scalar(key, keyType, key, at, colon, colon)
      if (comment !== undefined) keyNode.comment = comment
      map.items.push(new Pair(keyNode, value))
      return true
    },
    seq: () => new YAMLSeq(schema),
    item(seq, item) {
      seq.items.push(item)
    },
    close(collection, first, end) {
      collection.range = [first, end, end]
    },
    empty(map, at, lineEnd, end) {
      const empty = map ? new YAMLMap(schema) : new YAMLSeq(schema)
      empty.flow = true
      empty.range = [at, lineEnd, end]
      return empty
    },
    scalar,
  }
}

type PlainMap = { [key: string]: PlainValue }

/** Builds plain values; declines a key given twice and `__proto__`. */
const valueBuilder: Builder<PlainValue, PlainMap, PlainValue[]> = {
  map: () => ({}),
  entry(map, key, _keyType, _at, _colon, _comment, value) {
    if (key === '__proto__' || Object.prototype.hasOwnProperty.call(map, key)) return false
    map[key] = value
    return true
  },
  seq: () => [],
  item(seq, item) {
    seq.push(item)
  },
  close() {},
  empty: (map) => (map ? {} : []),
  scalar: (value) => value,
}

interface Lines {
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
function splitLines(text: string): Lines | undefined {
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

/**
 * Reads block collections from `lines`, each one (returned) or undefined: not plain. Values carry no
 * wrapper (a catalog has hundreds of thousands): where the value read last ends is left in `end` and `next`.
 */
class PlainReader<Value, Mapping extends Value, Sequence extends Value> {
  /** The line after the value read last. */
  next = 0
  /** The offset just past the value read last (its range's end). */
  end = 0
  /** The colon of the key read last, and its style. */
  private colon = 0
  private keyType: ScalarType = 'PLAIN'
  /** Plain keys seen, by length. */
  private readonly keys = new Map<number, string[]>()

  constructor(
    private readonly text: string,
    private readonly lines: Lines,
    private readonly schema: Schema,
    private readonly build: Builder<Value, Mapping, Sequence>,
  ) {}

  /** The block collection whose first entry is on line `i` at column `col`: a sequence if it starts with `- `, else a map. */
  block(i: number, col: number): Mapping | Sequence | undefined {
    return this.#isDash(i, col) ? this.#seq(i, col) : this.#map(i, col)
  }

  #isDash(i: number, col: number): boolean {
    const at = this.lines.start[i]! + col
    return this.text.charCodeAt(at) === 45 && this.text.charCodeAt(at + 1) === 32
  }

  /** A block map: entries on line `i` from column `col`, then on every following line indented exactly `col`. */
  #map(i: number, col: number): Mapping | undefined {
    const { lines, build } = this
    const map = build.map()
    const first = lines.start[i]! + col
    let end = first
    while (i < lines.count) {
      const lineEnd = lines.end[i]!
      const at = lines.start[i]! + col
      const key = this.#entryKey(at, lineEnd)
      if (key === undefined) return undefined
      const { colon, keyType } = this
      let comment: string | undefined
      let value: Value | undefined
      if (colon + 1 === lineEnd) {
        // `key:` and a block below: more indented, or a sequence at the key's own indentation (as kpt writes them).
        comment = lines.comment[i]
        const next = i + 1
        if (next >= lines.count) return undefined
        const indent = lines.indent[next]!
        if (indent > col) value = this.block(next, indent)
        else if (indent === col && this.#isDash(next, col)) value = this.#seq(next, col)
        else return undefined
      } else {
        value = this.#inline(colon + 2, lineEnd, i + 1, col)
      }
      if (value === undefined || !build.entry(map, key, keyType, at, colon, comment, value)) return undefined
      end = this.end
      i = this.next
      if (i >= lines.count || lines.indent[i]! < col) break
      // Only the next entry may sit at this indentation; anything deeper, or a stray `- `, is not plain.
      if (lines.indent[i]! > col || this.#isDash(i, col)) return undefined
    }
    build.close(map, first, end)
    this.end = end
    this.next = i
    return map
  }

  /** A block sequence: `- ` entries on line `i` and the following lines, each at column `col`. */
  #seq(i: number, col: number): Sequence | undefined {
    const { lines, build } = this
    const seq = build.seq()
    const first = lines.start[i]! + col
    let end = first
    while (i < lines.count && lines.indent[i] === col && this.#isDash(i, col)) {
      const at = lines.start[i]! + col + 2
      const lineEnd = lines.end[i]!
      let item: Value | undefined
      if (this.#isDash(i, col + 2)) return undefined // `- - x`: nested on one line
      if (this.#entryKey(at, lineEnd) !== undefined) item = this.#map(i, col + 2)
      else item = this.#inline(at, lineEnd, i + 1, col)
      if (item === undefined) return undefined
      build.item(seq, item)
      end = this.end
      i = this.next
    }
    if (i < lines.count && lines.indent[i]! >= col && !(lines.indent[i] === col && !this.#isDash(i, col)))
      return undefined
    build.close(seq, first, end)
    this.end = end
    this.next = i
    return seq
  }

  /** The key of a map entry at `at` (`key:` then a space or the line's end), its colon and style left in `colon` and `keyType`; undefined for a scalar or a key that is not plain. */
  #entryKey(at: number, lineEnd: number): string | undefined {
    const colon = this.text.indexOf(':', at)
    if (colon < 0 || colon > lineEnd || (colon + 1 !== lineEnd && this.text.charCodeAt(colon + 1) !== 32))
      return undefined
    this.colon = colon
    return this.#key(at, colon)
  }

  /**
   * A key from `at` to the colon: a plain name or a simply quoted one. The few keys a document repeats are matched in
   * place, not sliced and checked again.
   */
  #key(at: number, colon: number): string | undefined {
    const known = this.keys.get(colon - at)
    if (known)
      for (const key of known)
        if (this.text.startsWith(key, at)) {
          this.keyType = 'PLAIN'
          return key
        }
    // YAML allows an implicit key at most 1,024 characters: a longer one is the library's error to report.
    if (colon - at > maxKeyLength) return undefined
    const source = this.text.slice(at, colon)
    const quoted = quotedValue(source)
    if (quoted) {
      // A quoted key is read afresh each time.
      this.keyType = quoted.type
      return quoted.value
    }
    if (!plainKey.test(source) || keywords.has(source)) return undefined
    if ((known?.length ?? 0) < 8) this.keys.set(colon - at, [...(known ?? []), source])
    this.keyType = 'PLAIN'
    return source
  }

  /** A value on the rest of a line (from `at` to `lineEnd`) in a collection at column `col`; a line below indented deeper would continue it: not plain. */
  #inline(at: number, lineEnd: number, next: number, col: number): Value | undefined {
    if (next < this.lines.count && this.lines.indent[next]! > col) return undefined
    const source = this.text.slice(at, lineEnd)
    const end = lineEnd + 1
    this.end = end
    this.next = next
    if (source === '{}' || source === '[]') return this.build.empty(source === '{}', at, lineEnd, end)
    const quoted = quotedValue(source)
    if (quoted) return this.build.scalar(quoted.value, quoted.type, quoted.value, at, lineEnd, end)
    const value = plainScalarValue(source, this.schema)
    if (value === undefined) return undefined
    return this.build.scalar(value, 'PLAIN', source, at, lineEnd, end)
  }
}

/** The value the library reads from a plain scalar on one line, in the reader's subset; undefined for anything else. */
function plainScalarValue(source: string, schema: Schema): string | number | boolean | undefined {
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
function quotedValue(source: string): { value: string; type: 'QUOTE_SINGLE' | 'QUOTE_DOUBLE' } | undefined {
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
  type: Scalar.Type,
  source: string,
  start: number,
  valueEnd: number,
  end: number,
): Scalar {
  const node = new Scalar(value)
  node.range = [start, valueEnd, end]
  ;(node as { source?: string }).source = source
  node.type = type
  return node
}
