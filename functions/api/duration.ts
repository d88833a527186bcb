/**
 * Durations as Kubernetes APIs write them (`metav1.Duration`, Go's
 * `time.ParseDuration`): a sequence of decimal numbers with units, `30m`,
 * `8h`, `1h30m`, `1.5h`, `90s`. Days are not a unit (as in Go): write `24h`.
 */

const unitMs: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
}
const part = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y

/** Milliseconds of a Go duration, or why it is not one (e.g. `"30 minutes" is not a duration (e.g. 30m, 8h, 1h30m)`). */
export function parseDuration(text: string): { ok: true; ms: number } | { ok: false; error: string } {
  const bad = { ok: false as const, error: `${JSON.stringify(text)} is not a duration (e.g. 30m, 8h, 1h30m)` }
  let rest = text
  let sign = 1
  if (rest.startsWith('-') || rest.startsWith('+')) {
    sign = rest.startsWith('-') ? -1 : 1
    rest = rest.slice(1)
  }
  // Go accepts a bare 0 as the only unitless duration.
  if (rest === '0') return { ok: true, ms: 0 }
  if (rest === '') return bad
  let ms = 0
  part.lastIndex = 0
  while (part.lastIndex < rest.length) {
    const at = part.lastIndex
    const match = part.exec(rest)
    if (!match || match.index !== at) return bad
    ms += Number(match[1]) * unitMs[match[2]!]!
  }
  if (!Number.isFinite(ms)) return bad
  return { ok: true, ms: sign * ms }
}

/** A duration for messages, in whole seconds rounded up: `1h30m`, `12m`, `45s`, `0s`. */
export function formatDuration(ms: number): string {
  const seconds = Math.ceil(Math.max(0, ms) / 1000)
  const h = Math.floor(seconds / 3600)
  const m = Math.floor((seconds % 3600) / 60)
  const s = seconds % 60
  const out = `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${s ? `${s}s` : ''}`
  return out || '0s'
}
