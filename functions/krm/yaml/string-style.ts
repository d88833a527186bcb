/**
 * How the `yaml` library, with kpt's print options (no line folding), prints a
 * one-line string as a value in a block collection: the fast printers
 * (emit.ts, emit-node.ts) use it to print the same bytes. Printable ASCII
 * only; anything else (control characters, line breaks, non-ASCII text, a
 * document marker) is left to the library (undefined).
 *
 * The library's choice (`stringifyString`): a plain string unless it starts
 * with an indicator, holds `: ` or ` #`, ends with a space or `:`, or reads as
 * another type under the document's schema; then double quotes (as JSON
 * escapes them), or single quotes for a string with `"` but no `'`.
 */
import type { Schema } from 'yaml'

/** What plainString refuses, as the library tests it (yaml 2.9.1, stringifyString.js). */
const notPlain = /^[\n\t ,[\]{}#&*!|>'"%@`]|^[?-]$|^[?-][ \t]|[\n:][ \t]|[ \t]\n|[\n\t ]#|[\n\t :]$/
const printableAscii = /^[\x20-\x7e]*$/
const documentMarker = /^(%|---|\.\.\.)/
const maybeOtherType = /^[-+0-9.~nNtTfFyYoO]/

/**
 * The text of a string value: `doubleQuoted` for a scalar of type
 * QUOTE_DOUBLE (what `newScalar` makes of a string YAML 1.1 would misread),
 * else plain where the library keeps it plain.
 */
export function stringValueText(value: string, schema: Schema, doubleQuoted: boolean): string | undefined {
  if (!printableAscii.test(value)) return undefined
  if (doubleQuoted) return JSON.stringify(value)
  if (notPlain.test(value) || readsAsOtherType(value, schema)) return quoted(value)
  if (documentMarker.test(value)) return undefined
  return value
}

/** The library's quotedString without `singleQuote` set: single quotes for a `"` without `'`, else double. */
function quoted(value: string): string {
  return value.includes('"') && !value.includes("'") ? `'${value}'` : JSON.stringify(value)
}

/** Whether a schema tag other than the string's reads the plain text (`true`, `12`, `0o17`, `.inf`): the library then quotes it. */
function readsAsOtherType(value: string, schema: Schema): boolean {
  // Every null, boolean and number of the core schema starts so (or is empty): most text need not be tried.
  if (value !== '' && !maybeOtherType.test(value)) return false
  const reads = (tag: Schema['tags'][number]) =>
    Boolean(tag.default) && tag.tag !== 'tag:yaml.org,2002:str' && 'test' in tag && tag.test?.test(value) === true
  return schema.tags.some(reads) || (schema.compat?.some(reads) ?? false)
}
