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
type Read = { value: Value; next: number } | undefined

/** The value of a plain block document, or undefined when the text is not one (or repeats a key). */
export function readPlainValue(text: string, schema: Schema): Value | undefined {
  const lines = splitLines(text)
  if (!lines || lines.indent[0] !== 0) return undefined
  const read = new ValueReader(text, lines, schema).block(0, 0)
  if (!read || read.next !== lines.count || typeof read.value !== 'object') return undefined
  return read.value
}

class ValueReader {
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
      const entry = this.#entryKey(lines.start[i]! + col, lineEnd)
      if (!entry || entry.key === '__proto__' || Object.prototype.hasOwnProperty.call(map, entry.key)) return undefined
      let value: Read
      if (entry.colon + 1 === lineEnd) {
        const next = i + 1
        if (next >= lines.count) return undefined
        const indent = lines.indent[next]!
        if (indent > col) value = this.block(next, indent)
        else if (indent === col && this.#isDash(next, col)) value = this.#seq(next, col)
        else return undefined
      } else {
        value = this.#inline(entry.colon + 2, lineEnd, i + 1, col)
      }
      if (!value) return undefined
      map[entry.key] = value.value
      i = value.next
      if (i >= lines.count || lines.indent[i]! < col) break
      if (lines.indent[i]! > col || this.#isDash(i, col)) return undefined
    }
    return { value: map, next: i }
  }

  #seq(i: number, col: number): Read {
    const { lines } = this
    const seq: Value[] = []
    while (i < lines.count && lines.indent[i] === col && this.#isDash(i, col)) {
      const at = lines.start[i]! + col + 2
      const lineEnd = lines.end[i]!
      let item: Read
      if (this.#isDash(i, col + 2)) return undefined
      if (this.#entryKey(at, lineEnd)) item = this.#map(i, col + 2)
      else item = this.#inline(at, lineEnd, i + 1, col)
      if (!item) return undefined
      seq.push(item.value)
      i = item.next
    }
    if (i < lines.count && lines.indent[i]! >= col && !(lines.indent[i] === col && !this.#isDash(i, col))) return undefined
    return { value: seq, next: i }
  }

  #entryKey(at: number, lineEnd: number): { key: string; colon: number } | undefined {
    const colon = this.text.indexOf(':', at)
    if (colon < 0 || colon > lineEnd || (colon + 1 !== lineEnd && this.text.charCodeAt(colon + 1) !== 32)) return undefined
    const key = this.#keyAt(at, colon)
    return key === undefined ? undefined : { key, colon }
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
    if (source === '{}') return { value: {}, next }
    if (source === '[]') return { value: [], next }
    const quoted = quotedValue(source)
    if (quoted) return { value: quoted.value, next }
    const value = plainScalarValue(source, this.schema)
    return value === undefined ? undefined : { value, next }
  }
}
