/** JSON as Go's `encoding/json` writes a decoded `interface{}`: map keys sorted, two-space indent, HTML characters escaped. */

/** Encodes a JSON value the way `json.MarshalIndent(v, "", "  ")` does after kpt decoded it. */
export function encodeJsonAsGo(value: unknown, indent = ''): string {
  if (value === null || typeof value !== 'object') return escapeHtml(JSON.stringify(value) ?? 'null')
  const inner = `${indent}  `
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]'
    return `[\n${value.map((v) => `${inner}${encodeJsonAsGo(v, inner)}`).join(',\n')}\n${indent}]`
  }
  const keys = Object.keys(value).sort()
  if (keys.length === 0) return '{}'
  const record = value as Record<string, unknown>
  return `{\n${keys.map((k) => `${inner}${escapeHtml(JSON.stringify(k))}: ${encodeJsonAsGo(record[k], inner)}`).join(',\n')}\n${indent}}`
}

/** Go escapes `<`, `>`, `&`, U+2028 and U+2029 inside strings. */
function escapeHtml(json: string): string {
  return json.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}
