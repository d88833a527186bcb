/**
 * What the fleet page shows, as pure functions of its model: the filter, the
 * matrix (repositories by packages or sets), the counts, the rows in view,
 * and the layout of a dependency graph. The page's script (browser.ts) only
 * puts their results into the DOM; these run in Node's tests as they are.
 */
import { pageStates } from './types.js'
import type { PageState, PageVariant, RepositoryDependencies } from './types.js'

/** What the reader narrowed the fleet to. */
export interface Filter {
  /** Words that must all occur in the variant's repository, package, subject, set, upstream, local edits or labels (case-insensitive). */
  text: string
  /** The repository: exact, or a prefix ending in `*`. */
  repo: string
  /** `key=value`, or '' for any. */
  label: string
  /** The states shown (empty: all). */
  states: ReadonlySet<PageState>
  /** A failure code: only the variants that failed with it ('' for any). */
  failure?: string
}

export const noFilter: Filter = { text: '', repo: '', label: '', states: new Set() }

/** The matrix's columns: downstream packages, or the PackageVariantSets that generated them. */
export type ColumnsBy = 'package' | 'set'

/** The searchable text of each variant, made once (lower case): its failure codes too. */
export function searchIndex(variants: readonly PageVariant[]): string[] {
  return variants.map((v) =>
    [
      v.repo,
      v.package,
      v.subject,
      v.set ?? '',
      v.upstream ?? '',
      v.localEdits ?? '',
      ...v.reasons.map((r) => r.code),
      ...Object.entries(v.labels).map(([k, value]) => `${k}=${value}`),
    ]
      .join('\n')
      .toLowerCase(),
  )
}

/** The indices of the variants the filter keeps. */
export function filterVariants(variants: readonly PageVariant[], index: readonly string[], filter: Filter): number[] {
  const words = filter.text.toLowerCase().split(/\s+/).filter(Boolean)
  const repo = filter.repo.trim()
  const prefix = repo.endsWith('*') ? repo.slice(0, -1) : undefined
  const eq = filter.label.indexOf('=')
  const [labelKey, labelValue] =
    eq < 0 ? [filter.label, undefined] : [filter.label.slice(0, eq), filter.label.slice(eq + 1)]
  const kept: number[] = []
  for (let i = 0; i < variants.length; i++) {
    const v = variants[i]!
    if (filter.states.size > 0 && !filter.states.has(v.state)) continue
    if (repo && (prefix !== undefined ? !v.repo.startsWith(prefix) : v.repo !== repo)) continue
    if (
      labelKey &&
      (!Object.hasOwn(v.labels, labelKey) || (labelValue !== undefined && v.labels[labelKey] !== labelValue))
    )
      continue
    if (filter.failure && !v.reasons.some((r) => r.code === filter.failure)) continue
    if (words.length > 0 && !words.every((w) => index[i]!.includes(w))) continue
    kept.push(i)
  }
  return kept
}

/** Variants per state among `ids` (every state present, zero or not). */
export function countStates(variants: readonly PageVariant[], ids: readonly number[]): Record<PageState, number> {
  const counts = Object.fromEntries(pageStates.map((s) => [s, 0])) as Record<PageState, number>
  for (const i of ids) counts[variants[i]!.state]++
  return counts
}

/** The failures grouped by code: how many variants failed with each, the most frequent first (then by code). */
export function failureGroups(variants: readonly PageVariant[]): { code: string; count: number }[] {
  const counts = new Map<string, number>()
  for (const v of variants)
    for (const code of new Set(v.reasons.map((r) => r.code))) counts.set(code, (counts.get(code) ?? 0) + 1)
  return [...counts].map(([code, count]) => ({ code, count })).sort((a, b) => b.count - a.count || cmp(a.code, b.code))
}

/** Every `key=value` label of the fleet, sorted, for the label filter. */
export function labelOptions(variants: readonly PageVariant[]): string[] {
  const seen = new Set<string>()
  for (const v of variants) for (const [k, value] of Object.entries(v.labels)) seen.add(`${k}=${value}`)
  return [...seen].sort()
}

/** The column a variant falls in. */
export function columnOf(v: PageVariant, by: ColumnsBy): string {
  return by === 'set' ? (v.set ?? '(no set)') : v.package || '(no package)'
}

/** The columns that read best by default: packages, unless sets make far fewer columns. */
export function defaultColumns(variants: readonly PageVariant[]): ColumnsBy {
  const packages = new Set(variants.map((v) => columnOf(v, 'package'))).size
  const sets = new Set(variants.map((v) => columnOf(v, 'set'))).size
  return packages > 30 && sets < packages ? 'set' : 'package'
}

/** One row of the matrix: a repository, and per column the indices of its variants there. */
export interface MatrixRow {
  repo: string
  cells: number[][]
}

export interface Matrix {
  columns: string[]
  rows: MatrixRow[]
}

/** The matrix of the kept variants: repositories (sorted) by columns (the fullest first, then by name). */
export function buildMatrix(variants: readonly PageVariant[], ids: readonly number[], by: ColumnsBy): Matrix {
  const columnCounts = new Map<string, number>()
  for (const i of ids) {
    const column = columnOf(variants[i]!, by)
    columnCounts.set(column, (columnCounts.get(column) ?? 0) + 1)
  }
  const columns = [...columnCounts].sort(([a, n], [b, m]) => m - n || cmp(a, b)).map(([c]) => c)
  const position = new Map(columns.map((c, i) => [c, i]))
  const rows = new Map<string, MatrixRow>()
  for (const i of ids) {
    const v = variants[i]!
    const repo = v.repo || '(no repository)'
    let row = rows.get(repo)
    if (!row) rows.set(repo, (row = { repo, cells: columns.map(() => []) }))
    row.cells[position.get(columnOf(v, by))!]!.push(i)
  }
  return { columns, rows: [...rows.values()].sort((a, b) => cmp(a.repo, b.repo)) }
}

/** A cell's state: the most urgent of its variants'. */
export function cellState(variants: readonly PageVariant[], ids: readonly number[]): PageState | undefined {
  let best: number | undefined
  for (const i of ids) {
    const rank = pageStates.indexOf(variants[i]!.state)
    if (best === undefined || rank < best) best = rank
  }
  return best === undefined ? undefined : pageStates[best]
}

/** The short text in a cell: the revision (a tag's last part, the one the package holds, or the upstream's), or how many variants it holds. */
export function cellText(variants: readonly PageVariant[], ids: readonly number[]): string {
  if (ids.length !== 1) return ids.length === 0 ? '' : `${ids.length} variants`
  const v = variants[ids[0]!]!
  const tag = v.published ?? v.rendered ?? v.upstream?.split(' ')[1]
  return tag ? `${v.state} ${tag.slice(tag.lastIndexOf('/') + 1)}` : v.state
}

/** The rows to put in the DOM for a scroll position: those in view, and `overscan` more on each side. */
export function rowWindow(
  scrollTop: number,
  viewportHeight: number,
  rowHeight: number,
  count: number,
  overscan = 10,
): { start: number; end: number } {
  const first = Math.floor(Math.max(0, scrollTop) / rowHeight)
  const start = Math.max(0, first - overscan)
  const end = Math.min(count, first + Math.ceil(viewportHeight / rowHeight) + overscan)
  return { start, end: Math.max(start, end) }
}

/** A dependency graph laid out in layers: a package stands right of everything it requires. */
export interface GraphLayout {
  nodes: { name: string; label: string; x: number; y: number; missing: boolean; installedAsDependency: boolean }[]
  edges: { from: string; to: string; range: string; x1: number; y1: number; x2: number; y2: number }[]
  width: number
  height: number
}

export const graphGeometry = { nodeWidth: 170, nodeHeight: 34, columnGap: 70, rowGap: 16, margin: 10 }

/**
 * Lays out one repository's packages: each in the column of its longest
 * chain of requirements (cycles cut where they close), rows in name order.
 * A requirement no package of the repository meets is drawn as a missing node.
 */
export function layoutGraph(repo: RepositoryDependencies): GraphLayout {
  const { nodeWidth, nodeHeight, columnGap, rowGap, margin } = graphGeometry
  const packages = new Map(repo.packages.map((p) => [p.name, p]))
  const names = [...new Set([...packages.keys(), ...repo.packages.flatMap((p) => p.requires.map((r) => r.name))])].sort(
    cmp,
  )
  const depth = new Map<string, number>()
  const visiting = new Set<string>()
  const depthOf = (name: string): number => {
    const known = depth.get(name)
    if (known !== undefined) return known
    if (visiting.has(name)) return 0
    visiting.add(name)
    const requires = packages.get(name)?.requires ?? []
    const d = requires.length === 0 ? 0 : 1 + Math.max(...requires.map((r) => depthOf(r.name)))
    visiting.delete(name)
    depth.set(name, d)
    return d
  }
  const columns: string[][] = []
  for (const name of names) (columns[depthOf(name)] ??= []).push(name)
  const place = new Map<string, { x: number; y: number }>()
  columns.forEach((column, c) =>
    column.forEach((name, r) =>
      place.set(name, { x: margin + c * (nodeWidth + columnGap), y: margin + r * (nodeHeight + rowGap) }),
    ),
  )
  const nodes = names.map((name) => {
    const p = packages.get(name)
    return {
      name,
      label: p?.version ? `${name} ${p.version}` : name,
      ...place.get(name)!,
      missing: !p,
      installedAsDependency: p?.installedAsDependency ?? false,
    }
  })
  const edges = repo.packages.flatMap((p) =>
    p.requires.map((r) => {
      const from = place.get(p.name)!
      const to = place.get(r.name)!
      return {
        from: p.name,
        to: r.name,
        range: r.range,
        x1: from.x,
        y1: from.y + nodeHeight / 2,
        x2: to.x + nodeWidth,
        y2: to.y + nodeHeight / 2,
      }
    }),
  )
  const tallest = Math.max(0, ...columns.map((c) => c.length))
  return {
    nodes,
    edges,
    width: margin * 2 + Math.max(1, columns.length) * nodeWidth + Math.max(0, columns.length - 1) * columnGap,
    height: margin * 2 + Math.max(1, tallest) * nodeHeight + Math.max(0, tallest - 1) * rowGap,
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
