/**
 * The benchmark's outputs: one table for the terminal (and RESULTS.md), and
 * an SVG chart of render time and peak memory against fleet size, both axes
 * logarithmic, so that growth shows at a glance (a straight line of slope 1
 * is linear growth; flatter is sub-linear).
 */
import type { BenchResult } from './harness.js'

/** The figure render benchmarks report their fleet size, case and peak RSS under. */
export const fleetSizeFigure = 'variants'
export const renderCaseFigure = 'case'
export const peakRssFigure = 'peak RSS of the child (MiB)'

/** One row per benchmark: figure, baseline, ratio, goal and whether it is met. */
export function resultTable(results: readonly BenchResult[]): string {
  const rows = results.map((r) => [
    r.name,
    formatMs(r.medianMs) + (r.msPerUnit !== undefined ? ` (${formatMs(r.msPerUnit)}/${r.unit})` : ''),
    r.figures?.[peakRssFigure] !== undefined ? `${r.figures[peakRssFigure]} MiB` : '',
    r.baseline
      ? `${formatMs(r.baselineMedianMs!)}${r.baselineScale !== undefined ? ' (extrapolated)' : ''}: ${r.baseline}`
      : '',
    r.ratio !== undefined ? `${r.ratio}x` : '',
    r.goal ?? '',
    r.goalMet === undefined ? '' : r.goalMet ? 'met' : 'NOT met',
  ])
  const header = ['case', 'ours (median)', 'peak RSS', 'baseline (same run)', 'ratio', 'goal', '']
  const escape = (cell: string) => cell.replace(/\|/g, '\\|')
  return [header, header.map(() => '---'), ...rows].map((row) => `| ${row.map(escape).join(' | ')} |`).join('\n')
}

function formatMs(ms: number): string {
  if (ms >= 10_000) return `${(ms / 1000).toFixed(1)} s`
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`
  return `${ms < 10 ? ms.toFixed(2) : ms.toFixed(0)} ms`
}

interface Point {
  variants: number
  value: number
}

/** The render benchmarks as series per case: time in seconds and peak RSS in MiB. */
function renderSeries(results: readonly BenchResult[]): { time: Map<string, Point[]>; memory: Map<string, Point[]> } {
  const time = new Map<string, Point[]>()
  const memory = new Map<string, Point[]>()
  for (const r of results) {
    const variants = Number(r.figures?.[fleetSizeFigure])
    const kind = r.figures?.[renderCaseFigure]
    if (!Number.isFinite(variants) || typeof kind !== 'string') continue
    const add = (series: Map<string, Point[]>, value: number) =>
      (series.get(kind) ?? series.set(kind, []).get(kind)!).push({ variants, value })
    add(time, r.medianMs / 1000)
    const rss = Number(r.figures?.[peakRssFigure])
    if (Number.isFinite(rss)) add(memory, rss)
  }
  for (const series of [time, memory])
    for (const points of series.values()) points.sort((a, b) => a.variants - b.variants)
  return { time, memory }
}

const palette = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e']

/** Two log-log panels side by side: render time and peak RSS against the number of variants. */
export function scalingChart(results: readonly BenchResult[], title: string): string | undefined {
  const { time, memory } = renderSeries(results)
  if (time.size === 0) return undefined
  const kinds = [...time.keys()]
  const panelWidth = 380
  const height = 300
  const margin = { left: 60, right: 15, top: 40, bottom: 45 }
  const panel = (series: Map<string, Point[]>, offset: number, label: string, unit: string) => {
    const points = [...series.values()].flat()
    if (points.length === 0) return ''
    const xs = logRange(points.map((p) => p.variants))
    const ys = logRange(points.map((p) => p.value))
    const x = (v: number) =>
      offset + margin.left + ((Math.log10(v) - xs.min) / (xs.max - xs.min)) * (panelWidth - margin.left - margin.right)
    const y = (v: number) =>
      height - margin.bottom - ((Math.log10(v) - ys.min) / (ys.max - ys.min)) * (height - margin.top - margin.bottom)
    const parts: string[] = [
      `<text x="${offset + panelWidth / 2}" y="${margin.top - 14}" text-anchor="middle" font-weight="bold">${label}</text>`,
    ]
    for (let e = Math.ceil(xs.min); e <= Math.floor(xs.max); e++) {
      const v = 10 ** e
      parts.push(`<line x1="${x(v)}" y1="${margin.top}" x2="${x(v)}" y2="${height - margin.bottom}" stroke="#ddd"/>`)
      parts.push(
        `<text x="${x(v)}" y="${height - margin.bottom + 16}" text-anchor="middle">${v.toLocaleString('en-US')}</text>`,
      )
    }
    for (let e = Math.ceil(ys.min); e <= Math.floor(ys.max); e++) {
      const v = 10 ** e
      parts.push(
        `<line x1="${offset + margin.left}" y1="${y(v)}" x2="${offset + panelWidth - margin.right}" y2="${y(v)}" stroke="#ddd"/>`,
      )
      parts.push(
        `<text x="${offset + margin.left - 6}" y="${y(v) + 4}" text-anchor="end">${v >= 1 ? v : v.toPrecision(1)} ${unit}</text>`,
      )
    }
    parts.push(
      `<text x="${offset + panelWidth / 2}" y="${height - 8}" text-anchor="middle">variants (log scale)</text>`,
    )
    for (const [kind, pts] of series) {
      const color = palette[kinds.indexOf(kind) % palette.length]
      parts.push(
        `<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts.map((p) => `${x(p.variants).toFixed(1)},${y(p.value).toFixed(1)}`).join(' ')}"/>`,
      )
      for (const p of pts)
        parts.push(
          `<circle cx="${x(p.variants).toFixed(1)}" cy="${y(p.value).toFixed(1)}" r="3" fill="${color}"><title>${kind}, ${p.variants} variants: ${p.value.toFixed(2)} ${unit}</title></circle>`,
        )
    }
    return parts.join('\n')
  }
  const legend = kinds
    .map(
      (kind, i) =>
        `<rect x="${60 + i * 190}" y="${height + 6}" width="12" height="12" fill="${palette[i % palette.length]}"/><text x="${78 + i * 190}" y="${height + 16}">${kind}</text>`,
    )
    .join('\n')
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${panelWidth * 2}" height="${height + 30}" font-family="sans-serif" font-size="11">
<title>${title}</title>
<rect width="100%" height="100%" fill="white"/>
${panel(time, 0, 'render time', 's')}
${panel(memory, panelWidth, 'peak RSS', 'MiB')}
${legend}
</svg>
`
}

/** The decades (powers of ten) that hold the values, widened to at least one. */
function logRange(values: number[]): { min: number; max: number } {
  const min = Math.floor(Math.log10(Math.min(...values)))
  let max = Math.ceil(Math.log10(Math.max(...values)))
  if (max === min) max = min + 1
  return { min, max }
}
