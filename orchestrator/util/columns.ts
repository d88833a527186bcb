/**
 * Rows under a header as aligned text columns, as kubectl prints them: two
 * spaces apart, each column but the last padded to its widest cell, trailing
 * spaces trimmed. The summary, `status`, `deps` and `rollout status` tables.
 */
export function alignColumns(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  // A fold, not Math.max(...cells): a fleet's table has a row per variant.
  const widths = header.map((h, i) => rows.reduce((width, row) => Math.max(width, row[i]!.length), h.length))
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd()
  return [line(header), ...rows.map(line)]
}
