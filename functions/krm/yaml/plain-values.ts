/**
 * plain-block.ts's reader, building plain JavaScript values instead of YAML
 * nodes: what the library's `toJS()` gives for the same text, for a function
 * that only reads a large object (a dependency catalog of 50,000 packages is
 * 6 MB of YAML; its nodes take seconds to build and collect, its values a
 * fraction of that). The same subset, the same declines (undefined), plus
 * one more: a key given twice (the caller's check names it) and `__proto__`.
 * A property test holds it to the library (plain-values.property.test.ts).
 */
import type { Schema } from 'yaml'
import { plainKeyValue, plainScalarValue, quotedValue, splitLines } from './plain-block.js'
import type { Lines } from './plain-block.js'

type Value = string | number | boolean | Value[] | { [key: string]: Value }
/** A value read, or undefined (not plain); the reader's `next` is then the line after it. */
type Read = Value | undefined

/** The value of a plain block document, or undefined when the text is not one (or repeats a key). */
export function readPlainValue(text: string, schema: Schema): Value | undefined {
  const lines = splitLines(text)
  if (!lines || lines.indent[0] !== 0) return undefined
  const reader = new ValueReader(text, lines, schema)
  const value = reader.block(0, 0)
  if (value === undefined || reader.next !== lines.count || typeof value !== 'object') return undefined
  return value
}

class ValueReader {
  /** The line after the value read last (values carry no wrapper: a catalog has hundreds of thousands). */
  next = 0
  /** The colon of the key read last. */
  private colon = 0

  constructor(
    private readonly text: string,
    private readonly lines: Lines,
    private readonly schema: Schema,
  ) {}

  block(i: number, col: number): Read {
    return this.#isDash(i, col) ? this.#seq(i, col) : this.#map(i, col)
  }

  #isDash(i: number, col: number): boolean {
    const at = this.lines.start[i]! + col
    return this.text.charCodeAt(at) === 45 && this.text.charCodeAt(at + 1) === 32
  }

  #map(i: number, col: number): Read {
    const { lines } = this
    const map: { [key: string]: Value } = {}
    while (i < lines.count) {
      const lineEnd = lines.end[i]!
      const key = this.#entryKey(lines.start[i]! + col, lineEnd)
      if (key === undefined || key === '__proto__' || Object.prototype.hasOwnProperty.call(map, key)) return undefined
      const colon = this.colon
      let value: Read
      if (colon + 1 === lineEnd) {
        const next = i + 1
        if (next >= lines.count) return undefined
        const indent = lines.indent[next]!
        if (indent > col) value = this.block(next, indent)
        else if (indent === col && this.#isDash(next, col)) value = this.#seq(next, col)
        else return undefined
      } else {
        value = this.#inline(colon + 2, lineEnd, i + 1, col)
      }
      if (value === undefined) return undefined
      map[key] = value
      i = this.next
      if (i >= lines.count || lines.indent[i]! < col) break
      if (lines.indent[i]! > col || this.#isDash(i, col)) return undefined
    }
    this.next = i
    return map
  }

  #seq(i: number, col: number): Read {
    const { lines } = this
    const seq: Value[] = []
    while (i < lines.count && lines.indent[i] === col && this.#isDash(i, col)) {
      const at = lines.start[i]! + col + 2
      const lineEnd = lines.end[i]!
      let item: Read
      if (this.#isDash(i, col + 2)) return undefined
      if (this.#entryKey(at, lineEnd) !== undefined) item = this.#map(i, col + 2)
      else item = this.#inline(at, lineEnd, i + 1, col)
      if (item === undefined) return undefined
      seq.push(item)
      i = this.next
    }
    if (i < lines.count && lines.indent[i]! >= col && !(lines.indent[i] === col && !this.#isDash(i, col)))
      return undefined
    this.next = i
    return seq
  }

  /** The key of an entry at `at`, its colon left in `colon`. */
  #entryKey(at: number, lineEnd: number): string | undefined {
    const colon = this.text.indexOf(':', at)
    if (colon < 0 || colon > lineEnd || (colon + 1 !== lineEnd && this.text.charCodeAt(colon + 1) !== 32))
      return undefined
    this.colon = colon
    return this.#keyAt(at, colon)
  }

  /** The key from `at` to the colon; the few keys a document repeats are matched in place, not sliced and checked again. */
  #keyAt(at: number, colon: number): string | undefined {
    const known = this.keys.get(colon - at)
    if (known) for (const key of known) if (this.text.startsWith(key, at)) return key
    const source = this.text.slice(at, colon)
    const key = plainKeyValue(source)
    // Only plain keys read as their own text: a quoted one is read afresh each time.
    if (key === source && (known?.length ?? 0) < 8) this.keys.set(colon - at, [...(known ?? []), key])
    return key
  }

  /** Plain keys seen, by length. */
  private readonly keys = new Map<number, string[]>()

  #inline(at: number, lineEnd: number, next: number, col: number): Read {
    if (next < this.lines.count && this.lines.indent[next]! > col) return undefined
    const source = this.text.slice(at, lineEnd)
    this.next = next
    if (source === '{}') return {}
    if (source === '[]') return []
    const quoted = quotedValue(source)
    if (quoted) return quoted.value
    return plainScalarValue(source, this.schema)
  }
}
