/** `source` template tag: dedents inline YAML so tests can indent it with the code. */
export function source(strings: TemplateStringsArray, ...values: unknown[]): string {
  const raw = strings.reduce((acc, s, i) => acc + s + (i < values.length ? String(values[i]) : ''), '')
  const lines = raw
    .replace(/^\n/, '')
    .replace(/\n[ \t]*$/, '\n')
    .split('\n')
  const indent = Math.min(...lines.filter((l) => l.trim() !== '').map((l) => l.match(/^ */)![0].length))
  return lines.map((l) => l.slice(indent)).join('\n')
}

/** Indents every line but the first by `by` (to embed a block under a key). */
export function indent(text: string, by: string): string {
  return text
    .trimEnd()
    .split('\n')
    .map((line, i) => (i === 0 ? line : `${by}${line}`))
    .join('\n')
}
