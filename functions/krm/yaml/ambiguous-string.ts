/** Which plain strings YAML 1.1 readers (go-yaml v2, kubectl) would read as something else, so they must be quoted. */
import { parse as parseValue } from 'yaml'

/**
 * True when YAML 1.1 (go-yaml v2, kubectl) would read this plain string as
 * something else: `yes`, `on`, `0755`, `2001-12-14`, `1e3`, `~`...
 */
export function isAmbiguousString(value: string): boolean {
  if (value === '' || /^\s|\s$/.test(value)) return true
  // Fast path: a word starting with a letter is a string unless it is a YAML 1.1 bool/null.
  if (/^[A-Za-z][A-Za-z0-9_/.-]*$/.test(value)) return yaml11Words.has(value)
  // Fast paths for sentences (result messages), which would otherwise each cost a parse:
  // words and spaces are a string; `: ` after a letter makes a map or an error.
  if (/^[A-Za-z][A-Za-z0-9 _/.@+=()-]*[A-Za-z0-9_/.)-]$/.test(value)) return false
  if (/^[A-Za-z][^\n"'\\]*: /.test(value)) return true
  // A line starting with a letter reads as a string (no YAML 1.1 number, date or null starts with one) unless it is a
  // keyword, or holds what makes it a map or a comment: field paths (`spec.x[0]`) and messages, without a parse each.
  if (/^[A-Za-z][\x20-\x7e]*$/.test(value) && !value.includes(': ') && !value.includes(' #') && !/[: ]$/.test(value))
    return yaml11Words.has(value)
  let ambiguous = ambiguousStrings.get(value)
  if (ambiguous !== undefined) return ambiguous
  try {
    ambiguous = typeof parseValue(value, { version: '1.1', uniqueKeys: false, logLevel: 'error' }) !== 'string'
  } catch {
    ambiguous = true
  }
  // Versions and other repeated values are parsed once.
  if (ambiguousStrings.size < 10_000 && value.length < 100) ambiguousStrings.set(value, ambiguous)
  return ambiguous
}

const ambiguousStrings = new Map<string, boolean>()

/** The words YAML 1.1 reads as booleans or null (`yes`, `on`, `Null`...): the only ambiguous plain words starting with a letter. */
export const yaml11Words: ReadonlySet<string> = new Set(
  'y Y yes Yes YES n N no No NO true True TRUE false False FALSE on On ON off Off OFF null Null NULL'.split(' '),
)
