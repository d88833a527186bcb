/// <reference lib="dom" />
/**
 * The fleet page's script (bundled by scripts/bundle.ts into the page, see
 * html.ts): reads the model embedded in the page, draws the matrix with only
 * the rows in view in the DOM, and a variant's detail on demand. What to show
 * is decided by view.ts; diffs are drawn by diff2html and highlighted by
 * highlight.js (YAML only, the language of packages).
 */
import hljs from 'highlight.js/lib/core'
import yaml from 'highlight.js/lib/languages/yaml'
import { Diff2HtmlUI } from 'diff2html/lib-esm/ui/js/diff2html-ui-base.js'
import { pageStates, stateDescriptions } from './types.js'
import type { PageModel, PageState, PageVariant } from './types.js'
import {
  buildMatrix,
  cellState,
  cellText,
  countStates,
  defaultColumns,
  failureGroups,
  filterVariants,
  graphGeometry,
  labelOptions,
  layoutGraph,
  rowWindow,
  searchIndex,
} from './view.js'
import type { ColumnsBy, Filter, Matrix } from './view.js'

hljs.registerLanguage('yaml', yaml)
// diff2html names a file's language by its extension, and a file without one `plaintext`: in a package that is the Kptfile, YAML too.
hljs.registerLanguage('plaintext', yaml)

/** The model as html.ts embeds it: each diff replaced by its place in the compressed chunks. */
type EmbeddedVariant = Omit<PageVariant, 'diff'> & { diffRef?: number }
interface EmbeddedDiffs {
  chunkSize: number
  /** Each a gzip-compressed JSON array of diffs, base64-encoded. */
  chunks: string[]
}

const rowHeight = 28
const model = readJson<Omit<PageModel, 'variants'> & { variants: EmbeddedVariant[] }>('fleet-model')
const diffs = readJson<EmbeddedDiffs>('fleet-diffs')
const variants = model.variants
const index = searchIndex(variants)
const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T
const states = new Set<PageState>()
const filter: Filter = { text: '', repo: '', label: '', states, failure: '' }
let columnsBy: ColumnsBy = defaultColumns(variants)
let matrix: Matrix = { columns: [], rows: [] }
let diffFormat: 'side-by-side' | 'line-by-line' = 'line-by-line'
let shownVariant: number | undefined

function readJson<T>(id: string): T {
  return JSON.parse(document.getElementById(id)!.textContent) as T
}

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v)
  node.append(...children)
  return node
}

/** Applies the filter: counts, matrix, the rows in view. */
function update(): void {
  const ids = filterVariants(variants, index, filter)
  const counts = countStates(variants, ids)
  for (const state of pageStates) {
    const chip = $(`count-${state}`)
    chip.querySelector('b')!.textContent = String(counts[state])
    chip.hidden = counts[state] === 0 && !filter.states.has(state)
    chip.setAttribute('aria-pressed', String(filter.states.has(state)))
  }
  $('shown').textContent =
    `${ids.length} of ${variants.length} package(s) in ${new Set(ids.map((i) => variants[i]!.repo)).size} repositories`
  matrix = buildMatrix(variants, ids, columnsBy)
  const head = $('matrix-head')
  head.replaceChildren(
    el('div', { class: 'repo' }, columnsBy === 'set' ? 'repository \\ set' : 'repository \\ package'),
    ...matrix.columns.map((c) => el('div', { class: 'col', title: c }, c)),
  )
  $('matrix-body').style.height = `${matrix.rows.length * rowHeight}px`
  drawRows()
}

/** Puts the rows in view (and a few more) into the DOM. */
function drawRows(): void {
  const scroller = $('matrix')
  const { start, end } = rowWindow(scroller.scrollTop, scroller.clientHeight, rowHeight, matrix.rows.length)
  const rows: HTMLElement[] = []
  for (let r = start; r < end; r++) {
    const row = matrix.rows[r]!
    const cells = row.cells.map((ids) => {
      const state = cellState(variants, ids)
      if (!state) return el('div', { class: 'cell empty' })
      return el(
        'button',
        {
          class: `cell s-${state}`,
          'data-ids': ids.join(','),
          title: ids.map((i) => `${variants[i]!.subject}: ${variants[i]!.state}${codesOf(variants[i]!)}`).join('\n'),
        },
        cellText(variants as PageVariant[], ids),
      )
    })
    const line = el(
      'div',
      { class: 'row', role: 'row' },
      el('div', { class: 'repo', title: row.repo }, row.repo),
      ...cells,
    )
    line.style.transform = `translateY(${r * rowHeight}px)`
    rows.push(line)
  }
  $('matrix-body').replaceChildren(...rows)
}

/** A variant's detail, or the list of a cell's variants to choose from. */
function showCell(ids: number[]): void {
  if (ids.length === 1) return void showVariant(ids[0]!)
  const list = el(
    'ul',
    {},
    ...ids.map((i) =>
      el(
        'li',
        {},
        el(
          'button',
          { class: `link s-${variants[i]!.state}`, 'data-ids': String(i) },
          `${variants[i]!.package || variants[i]!.subject} (${variants[i]!.state})`,
        ),
      ),
    ),
  )
  $('detail').replaceChildren(el('h2', {}, `${ids.length} variants`), list)
  $('detail').hidden = false
}

/** A failed variant's codes for a cell's tooltip: ` (MergeConflict)`. */
function codesOf(v: EmbeddedVariant): string {
  return v.reasons.length > 0 ? ` (${[...new Set(v.reasons.map((r) => r.code))].join(', ')})` : ''
}

/** `PackageVariant ns/name`, `Dependency repo/package`, `PackageVariantSet ns/name target …`: its kind, then what. */
function subjectField(subject: string): [string, string] {
  const space = subject.indexOf(' ')
  return space > 0 ? [subject.slice(0, space), subject.slice(space + 1)] : ['subject', subject]
}

function showVariant(i: number): void {
  const v = variants[i]!
  shownVariant = i
  const parts: Node[] = [
    el('h2', {}, el('span', { class: `badge s-${v.state}` }, v.state), ` ${v.repo}/${v.package}`),
    variantFields(v),
    ...listSection(
      'labels',
      Object.entries(v.labels).map(([k, value]) => `${k}=${value}`),
    ),
    ...failuresSection(v),
    ...listSection('warnings', v.warnings),
    ...listSection('injected', v.injected),
    ...listSection(
      'conditions',
      v.conditions.map((c) => `${c.type} ${c.status} (${c.reason}): ${c.message}`),
    ),
    ...conflictsSection(v),
    ...listSection('dependency plan', v.dependencyPlan),
    ...graphSection(v),
  ]
  if (v.diffRef !== undefined) {
    const toggle = el('button', { id: 'diff-format' }, diffFormat === 'line-by-line' ? 'side by side' : 'unified')
    parts.push(el('h3', {}, 'diff ', toggle), el('div', { id: 'diff' }, 'decompressing…'))
  }
  $('detail').replaceChildren(...parts)
  $('detail').hidden = false
  if (v.diffRef !== undefined) void drawDiff(v.diffRef)
}

/** A variant's facts as a definition list, leaving out those it does not have. */
function variantFields(v: EmbeddedVariant): HTMLDListElement {
  const fields: [string, string | undefined][] = [
    subjectField(v.subject),
    ['set', v.set],
    ['downstream', v.repo ? `${v.repo}/${v.package}` : undefined],
    ['version', v.version],
    ['upstream', v.upstream],
    ['follows', v.follows],
    ['newest published', v.newest],
    ['previous upstream', v.previousUpstream],
    ['rendered from', v.previousUpstream ? undefined : v.rendered],
    ['local edits', v.localEdits],
    ['published', v.published],
    ['draft', v.draft],
    ['held by', v.heldBy],
    ['not ready', v.notReady?.replace(/^not ready: /, '')],
  ]
  return el(
    'dl',
    {},
    ...fields.filter(([, value]) => value).flatMap(([k, value]) => [el('dt', {}, k), el('dd', {}, value!)]),
  )
}

/** A titled list of the detail; nothing where there are no items. */
function listSection(title: string, items: string[]): HTMLElement[] {
  return items.length > 0 ? [el('h3', {}, title), el('ul', {}, ...items.map((t) => el('li', {}, t)))] : []
}

/** Why the variant failed, each reason with its code. */
function failuresSection(v: EmbeddedVariant): HTMLElement[] {
  if (v.reasons.length === 0) return []
  return [
    el('h3', {}, 'failed'),
    el(
      'ul',
      { class: 'failures' },
      ...v.reasons.map((r) => el('li', {}, el('code', { class: 'failure-code' }, r.code), ` ${r.message}`)),
    ),
  ]
}

/** The merge's conflicts as a table: the field, both sides, what it was, and what the run took. */
function conflictsSection(v: EmbeddedVariant): HTMLElement[] {
  if (v.conflicts.length === 0) return []
  const rows = v.conflicts.map((c) =>
    el(
      'tr',
      {},
      ...[
        c.file,
        `${c.resource} ${c.field}`,
        c.local ?? '(deleted)',
        c.upstream ?? '(deleted)',
        c.origin ?? '(absent)',
        c.resolution,
      ].map((t) => el('td', {}, t)),
    ),
  )
  const head = el('tr', {}, ...['file', 'field', 'downstream', 'upstream', 'was', 'took'].map((t) => el('th', {}, t)))
  return [el('h3', {}, 'conflicts'), el('table', { class: 'conflicts' }, head, ...rows)]
}

/** The dependency graph of the variant's repository, where it has packages. */
function graphSection(v: EmbeddedVariant): Node[] {
  const graph = model.repositories.find((r) => r.name === v.repo)
  return graph && graph.packages.length > 0 ? [el('h3', {}, `dependencies in ${v.repo}`), dependencyGraph(graph)] : []
}

/** A repository's dependency graph as SVG (layout: view.ts). */
function dependencyGraph(repo: PageModel['repositories'][number]): SVGSVGElement {
  const ns = 'http://www.w3.org/2000/svg'
  const layout = layoutGraph(repo)
  const svg = document.createElementNS(ns, 'svg')
  const make = (tag: string, attrs: Record<string, string | number>, text?: string) => {
    const node = document.createElementNS(ns, tag)
    for (const [k, value] of Object.entries(attrs)) node.setAttribute(k, String(value))
    if (text !== undefined) node.textContent = text
    return node
  }
  svg.setAttribute('class', 'graph')
  svg.setAttribute('viewBox', `0 0 ${layout.width} ${layout.height}`)
  svg.setAttribute('width', String(layout.width))
  svg.setAttribute('role', 'img')
  svg.setAttribute('aria-label', `dependency graph of ${repo.name}`)
  for (const e of layout.edges) {
    const mid = (e.x1 + e.x2) / 2
    svg.append(
      make('path', { d: `M${e.x1},${e.y1} C${mid},${e.y1} ${mid},${e.y2} ${e.x2},${e.y2}`, class: 'edge' }),
      make('text', { x: mid, y: (e.y1 + e.y2) / 2 - 4, class: 'range' }, e.range),
    )
  }
  for (const n of layout.nodes) {
    const group = make('g', {
      class: `node${n.missing ? ' missing' : ''}${n.installedAsDependency ? ' dependency' : ''}`,
    })
    group.append(
      make('rect', { x: n.x, y: n.y, width: graphGeometry.nodeWidth, height: graphGeometry.nodeHeight, rx: 5 }),
      make('text', { x: n.x + 8, y: n.y + 21 }, n.label),
    )
    svg.append(group)
  }
  return svg
}

const chunkCache = new Map<number, Promise<string[]>>()

/** The diffs of one chunk, decompressed once. */
function chunk(n: number): Promise<string[]> {
  let chunkDiffs = chunkCache.get(n)
  if (!chunkDiffs) {
    const bytes = Uint8Array.from(atob(diffs.chunks[n]!), (c) => c.charCodeAt(0))
    const text = new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))).text()
    chunkCache.set(n, (chunkDiffs = text.then((t) => JSON.parse(t) as string[])))
  }
  return chunkDiffs
}

async function drawDiff(ref: number): Promise<void> {
  const diff = (await chunk(Math.floor(ref / diffs.chunkSize)))[ref % diffs.chunkSize]!
  const target = document.getElementById('diff')
  if (!target) return
  const ui = new Diff2HtmlUI(
    target,
    diff,
    { outputFormat: diffFormat, drawFileList: false, matching: 'lines', highlight: true, synchronisedScroll: true },
    hljs,
  )
  ui.draw()
  ui.highlightCode()
  target.dataset['drawn'] = diffFormat
}

function setup(): void {
  const chips = pageStates.map((state) =>
    el(
      'button',
      {
        id: `count-${state}`,
        class: `chip s-${state}`,
        'data-state': state,
        title: stateDescriptions[state],
        'aria-pressed': 'false',
      },
      el('b', {}, '0'),
      ` ${state}`,
    ),
  )
  $('counts').replaceChildren(...chips)
  $('counts').addEventListener('click', (e) => {
    const state = (e.target as HTMLElement).closest<HTMLElement>('[data-state]')?.dataset['state'] as
      PageState | undefined
    if (!state) return
    if (states.has(state)) states.delete(state)
    else states.add(state)
    update()
  })
  const labels = $<HTMLSelectElement>('label')
  labels.append(...labelOptions(variants as PageVariant[]).map((l) => el('option', { value: l }, l)))
  // The failures grouped by code: choosing one shows only the variants that failed with it.
  const failures = $<HTMLSelectElement>('failure')
  const groups = failureGroups(variants)
  failures.append(...groups.map((g) => el('option', { value: g.code }, `${g.code} (${g.count})`)))
  failures.hidden = groups.length === 0
  failures.addEventListener('change', () => ((filter.failure = failures.value), update()))
  const columns = $<HTMLSelectElement>('columns')
  columns.value = columnsBy
  const onInput = (id: string, apply: (value: string) => void) =>
    $<HTMLInputElement>(id).addEventListener('input', (e) => (apply((e.target as HTMLInputElement).value), update()))
  onInput('search', (value) => (filter.text = value))
  onInput('repo', (value) => (filter.repo = value))
  labels.addEventListener('change', () => ((filter.label = labels.value), update()))
  columns.addEventListener('change', () => ((columnsBy = columns.value as ColumnsBy), update()))
  let pending = false
  $('matrix').addEventListener('scroll', () => {
    if (pending) return
    pending = true
    requestAnimationFrame(() => ((pending = false), drawRows()))
  })
  window.addEventListener('resize', drawRows)
  document.body.addEventListener('click', (e) => {
    const target = e.target as HTMLElement
    const cell = target.closest<HTMLElement>('[data-ids]')
    if (cell) showCell(cell.dataset['ids']!.split(',').map(Number))
    else if (target.id === 'diff-format' && shownVariant !== undefined) {
      diffFormat = diffFormat === 'line-by-line' ? 'side-by-side' : 'line-by-line'
      showVariant(shownVariant)
    }
  })
  $('problems').replaceChildren(...model.problems.map((p) => el('li', {}, p)))
  update()
  // For the browser test and the benchmark: when the page could first be used, in ms since navigation.
  document.documentElement.dataset['ready'] = String(Math.round(performance.now()))
}

setup()
