/**
 * Splitting a YAML file into its documents without parsing, so that a file
 * whose documents did not change is written back byte for byte, and a file
 * where one document changed keeps the exact text of the others.
 */

/** One document of a file and the separator line(s) before it (`---\n`, or `""` for the first). */
export interface DocumentText {
  separator: string
  text: string
}

/**
 * Splits at `---` lines (a `---` at column 0 always starts a document). Returns
 * undefined when a separator line carries content (`--- |`, `--- !tag`), which
 * only the parser can split.
 */
export function splitDocuments(text: string): DocumentText[] | undefined {
  const docs: DocumentText[] = []
  let separator = ''
  let start = 0
  let at = 0
  while (at <= text.length) {
    const eol = text.indexOf('\n', at)
    const end = eol < 0 ? text.length : eol + 1
    const line = text.slice(at, eol < 0 ? text.length : eol)
    if (line.startsWith('---') && (line.length === 3 || line[3] === ' ' || line[3] === '\t' || line[3] === '\r')) {
      if (!/^---[ \t]*(#.*)?\r?$/.test(line)) return undefined
      if (at > start || docs.length > 0 || separator !== '') docs.push({ separator, text: text.slice(start, at) })
      separator = text.slice(at, end)
      start = end
    }
    if (eol < 0) break
    at = end
  }
  docs.push({ separator, text: text.slice(start) })
  return docs
}

/** The file text from its documents. */
export function joinDocuments(docs: readonly DocumentText[]): string {
  let out = ''
  for (const doc of docs) out += doc.separator + doc.text
  return out
}

/** True when a document holds nothing but blank lines and comments (kpt drops such documents). */
export function isEmptyDocument(text: string): boolean {
  // Line by line up to the first line with content: nearly every document has one near its top.
  for (let at = 0; at <= text.length;) {
    const eol = text.indexOf('\n', at)
    const end = eol < 0 ? text.length : eol
    emptyLine.lastIndex = at
    if (!emptyLine.test(text) || emptyLine.lastIndex !== end) return false
    at = end + 1
  }
  return true
}
/** From a line's start: a document end marker (`...`, at column 0), or white space and perhaps a comment. */
const emptyLine = /\.\.\.[^\S\n]*|[^\S\n]*(?:#[^\n]*)?/y

/**
 * kyaml's `DeriveSeqIndentStyle`: the first `- ` line whose key line (the
 * previous line that is not a comment) is `key:` decides: at the key's
 * indentation `compact`, two deeper `wide`; otherwise the scan goes on.
 * Default `compact`.
 */
export function sequenceStyle(text: string): 'compact' | 'wide' {
  const lines = text.split('\n')
  for (let i = 1; i < lines.length; i++) {
    const dash = /^( *)- /.exec(lines[i]!) ?? /^( *)-$/.exec(lines[i]!)
    if (!dash) continue
    let j = i - 1
    while (j >= 0 && /^\s*#/.test(lines[j]!)) j--
    if (j < 0) continue
    const keyLine = lines[j]!.replace(/#.*$/, '').trimEnd()
    if (!/^ *[^:]+:$/.test(keyLine)) continue
    const keyIndent = keyLine.length - keyLine.trimStart().length
    if (dash[1]!.length === keyIndent) return 'compact'
    if (dash[1]!.length === keyIndent + 2) return 'wide'
  }
  return 'compact'
}
