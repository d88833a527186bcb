/**
 * Fast rendering of new objects: a plain value printed straight to text, byte
 * for byte as the `yaml` library prints the nodes `toNode` builds, so a
 * function that generates thousands of objects (fan-out) does not build and
 * print thousands of node trees. Anything outside the simple cases (multi-line
 * or unusual strings, non-integer numbers, nested sequences) returns undefined
 * and the caller uses the library. A property test holds the two to the same
 * bytes (`emit.property.test.ts`).
 */
import { Document } from 'yaml'
import type { ItemHeader } from './lazy-items.js'
import { stringValueText } from './string-style.js'
import { isAmbiguousString, yaml11Words } from './ambiguous-string.js'

/** Thrown internally when a value needs the library's judgement. */
class NotSimple extends Error {}

/**
 * The value as one entry of a block sequence (`- apiVersion: ...\n  kind: ...\n`),
 * or undefined when it needs the yaml library.
 */
export function renderItemText(value: Record<string, unknown>, shared?: SharedTexts): string | undefined {
  try {
    const lines: string[] = []
    if (Object.keys(value).every((k) => value[k] === undefined)) return undefined
    sharedTexts = shared
    renderMap(value, 2, lines, '- ')
    return `${lines.join('\n')}\n`
  } catch (err) {
    if (err instanceof NotSimple) return undefined
    throw err
  } finally {
    sharedTexts = undefined
  }
}

/**
 * The texts of maps that several values share (the same object, the same
 * indentation), for rendering many values that nothing changes meanwhile:
 * the results of one run share their object's reference and file.
 */
export type SharedTexts = Map<object, { indent: number; text: string }>

let sharedTexts: SharedTexts | undefined

/** Indentation strings by width, made once (a large object renders hundreds of thousands of lines). */
const pads: string[] = []
const padOf = (width: number) => (pads[width] ??= ' '.repeat(width))

function renderMap(map: Record<string, unknown>, indent: number, lines: string[], firstPrefix?: string): void {
  const pad = padOf(indent)
  let first = true
  for (const key in map) {
    if (!Object.prototype.hasOwnProperty.call(map, key)) continue
    const value = map[key]
    if (value === undefined) continue
    const lead = first && firstPrefix !== undefined ? `${padOf(indent - 2)}${firstPrefix}` : pad
    first = false
    const k = keyText(key)
    if (Array.isArray(value)) {
      if (value.length === 0) lines.push(`${lead}${k}: []`)
      else {
        lines.push(`${lead}${k}:`)
        renderSeq(value, indent, lines)
      }
    } else if (isObject(value)) {
      if (isEmpty(value)) lines.push(`${lead}${k}: {}`)
      else {
        lines.push(`${lead}${k}:`)
        const known = sharedTexts?.get(value)
        if (known && known.indent === indent) lines.push(known.text)
        else if (sharedTexts) {
          const own: string[] = []
          renderMap(value, indent + 2, own)
          const text = own.join('\n')
          sharedTexts.set(value, { indent, text })
          lines.push(text)
        } else renderMap(value, indent + 2, lines)
      }
    } else {
      lines.push(`${lead}${k}: ${scalarText(value)}`)
    }
  }
}

function renderSeq(seq: readonly unknown[], indent: number, lines: string[]): void {
  const pad = padOf(indent)
  for (const item of seq) {
    if (Array.isArray(item)) throw new NotSimple()
    if (isObject(item)) {
      if (isEmpty(item)) lines.push(`${pad}- {}`)
      else {
        // Each entry's lines joined at once: short-lived pieces, not one list of every line of a long sequence.
        const entry: string[] = []
        renderMap(item, indent + 2, entry, '- ')
        lines.push(entry.join('\n'))
      }
    } else {
      lines.push(`${pad}- ${scalarText(item)}`)
    }
  }
}

/** Keys the library prints plain when they are not ambiguous (checked by the property test). */
const plainSafe = /^[A-Za-z0-9_/(][A-Za-z0-9_./:@+=()<>$~^ ,-]*$/
/** Strings the library double-quotes without escapes. */
const quoteSafe = /^[\x20-\x7e]*$/
/** The schema of the documents `toNode` values are printed in (YAML 1.2 core). */
const schema = new Document().schema

function scalarText(value: unknown): string {
  if (value === null) return 'null'
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  if (typeof value === 'number') {
    if (Number.isSafeInteger(value) && !Object.is(value, -0)) return String(value)
    throw new NotSimple()
  }
  if (typeof value !== 'string') throw new NotSimple()
  // A line of text starting with a letter (a name, a path, a message) prints plain, unless it is a keyword, which
  // `toNode` double-quotes, or holds what the library quotes (string-style.ts) for: `: `, ` #`, an end in `:` or space.
  // (Such a line is ambiguous only as a keyword: isAmbiguousString's own fast path.)
  if (letterLine.test(value) && !value.includes(': ') && !value.includes(' #') && !/[: ]$/.test(value))
    return yaml11Words.has(value) ? `"${value}"` : value
  // `toNode` double-quotes what YAML 1.1 would misread; the library decides the rest (string-style.ts). Versions and
  // ranges (`1.0.0`, `^1`) recur, and their test tries every tag of the schema: the answers are kept.
  let text = otherTexts.get(value)
  if (text === undefined) {
    text = stringValueText(value, schema, isAmbiguousString(value))
    if (text === undefined) throw new NotSimple()
    if (otherTexts.size >= 10_000) otherTexts.clear()
    otherTexts.set(value, text)
  }
  return text
}

/**
 * Texts of strings that start with no letter, by string. Budget: 10,000 short strings, started afresh when
 * full. A plain Map, not lru-cache: it is read once per such scalar printed, where an LRU's bookkeeping
 * doubles the cost of a hit (26 against 14 ns, measured), and an answer lost to a clear is cheap to redo.
 */
const otherTexts = new Map<string, string>()

const letterLine = /^[A-Za-z][\x20-\x7e]*$/

/** Keys as printed, by key: objects repeat the same few keys many times. */
const keyTexts = new Map<string, string>()

/** A map key: plain, or double-quoted when ambiguous; anything else (the library's implicit-key rules) is the library's. */
function keyText(value: string): string {
  let text = keyTexts.get(value)
  if (text === undefined) {
    text = newKeyText(value)
    if (keyTexts.size < 10_000) keyTexts.set(value, text)
  }
  return text
}

function newKeyText(value: string): string {
  if (isAmbiguousString(value)) {
    if (!quoteSafe.test(value) || value.includes('"') || value.includes('\\')) throw new NotSimple()
    return `"${value}"`
  }
  if (
    !plainSafe.test(value) ||
    value.endsWith(':') ||
    value.endsWith(' ') ||
    value.includes(': ') ||
    value.includes(' #')
  ) {
    throw new NotSimple()
  }
  return value
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isEmpty(map: Record<string, unknown>): boolean {
  for (const key in map) if (map[key] !== undefined) return false
  return true
}

/**
 * A top-level field of an item (`  key: ...` and the lines under it, at the
 * indentation of a block-sequence entry), or undefined when it needs the
 * yaml library.
 */
export function renderFieldText(key: string, value: unknown): string | undefined {
  if (value === undefined) return undefined
  try {
    const lines: string[] = []
    renderMap({ [key]: value }, 2, lines)
    return `${lines.join('\n')}\n`
  } catch (err) {
    if (err instanceof NotSimple) return undefined
    throw err
  }
}

/**
 * The identity (apiVersion, kind, metadata name, namespace, labels and
 * annotations) of a value rendered by renderItemText, read from the value
 * itself: what the line scanner would read from the text, without scanning
 * it. Undefined when any of them is not a string (or a map of strings): the
 * text is then scanned or parsed, as any other.
 */
export function renderedHeader(value: Record<string, unknown>): ItemHeader | undefined {
  const header: ItemHeader = {}
  for (const key of ['apiVersion', 'kind'] as const) {
    const field = value[key]
    if (field === undefined) continue
    if (typeof field !== 'string') return undefined
    header[key] = field
  }
  const metadata = value['metadata']
  if (metadata === undefined) return header
  if (!isObject(metadata)) return undefined
  for (const key of ['name', 'namespace'] as const) {
    const field = metadata[key]
    if (field === undefined) continue
    if (typeof field !== 'string') return undefined
    header[key] = field
  }
  for (const key of ['labels', 'annotations'] as const) {
    const map = metadata[key]
    if (map === undefined) continue
    if (!isObject(map)) return undefined
    const strings: Record<string, string> = {}
    for (const [name, field] of Object.entries(map)) {
      if (field === undefined) continue
      if (typeof field !== 'string' || name === '__proto__') return undefined
      strings[name] = field
    }
    header[key] = strings
  }
  return header
}
