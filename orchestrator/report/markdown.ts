/**
 * `render --format markdown`: the run as a pull-request comment (GitHub-flavoured
 * Markdown, which GitLab reads too): the counts, a table of the variants that
 * change, failures, conflicts and fleet problems, then each diff in a collapsible
 * `<details>` block, smallest first, until the comment would pass the size
 * GitHub accepts (65,536 characters; GitLab's limit is higher). What does not fit
 * is named in a closing note, so a reviewer knows the comment is not the whole run.
 */
import { describeStep, totalsLine } from './report.js'
import type { RunReport, VariantReport } from './report.js'

/** GitHub refuses a comment longer than this (characters); GitLab accepts more. */
export const commentLimit = 65_536

/** Below this many characters left, a diff that does not fit whole is left out rather than cut. */
const minimumCut = 1_500

export interface MarkdownOptions {
  /** The longest the summary may be (default: commentLimit). */
  limit?: number
}

/** The run as Markdown, at most `limit` characters. */
export function formatMarkdown(report: RunReport, options: MarkdownOptions = {}): string {
  const limit = options.limit ?? commentLimit
  const changed = report.variants.filter(isChange)
  const head = [heading(report), '', countsLine(report), '']
  const sections = [
    ...dependenciesSection(report),
    ...failuresSection(changed),
    ...conflictsSection(changed),
    ...problemsSection(report),
  ]
  // The note that closes a cut summary is at most this long; room is kept for it.
  const reserve = 400
  let out = `${head.join('\n')}\n`
  const rows = tableRows(changed)
  const table =
    rows.length > 0 ? ['| status | package | variant | upstream | conflicts |', '| --- | --- | --- | --- | ---: |'] : []
  let rowsShown = 0
  for (const row of rows) {
    if (out.length + table.join('\n').length + row.length + reserve > limit / 2) break
    table.push(row)
    rowsShown++
  }
  if (table.length > 0) out += `${table.join('\n')}\n`
  if (rowsShown < rows.length) out += `\n…and ${rows.length - rowsShown} more changed variant(s), not listed here.\n`
  const tail = sections.length > 0 ? `\n${sections.join('\n')}\n` : ''
  out +=
    tail.length + out.length + reserve <= limit
      ? tail
      : '\nFailures, conflicts and fleet problems are left out: the comment would be too long. See the job output.\n'

  const diffs = changed
    .filter((v) => v.diff)
    .sort((a, b) => a.diff!.length - b.diff!.length || cmp(a.path ?? a.subject, b.path ?? b.subject))
  const left: VariantReport[] = []
  let cut: VariantReport | undefined
  for (const v of diffs) {
    if (left.length > 0 || cut) {
      left.push(v)
      continue
    }
    const block = diffBlock(v, v.diff!)
    if (out.length + block.length + reserve <= limit) {
      out += block
      continue
    }
    const room = limit - out.length - reserve - diffBlock(v, '', true).length
    if (room >= minimumCut) {
      out += diffBlock(v, cutAtLine(v.diff!, room), true)
      cut = v
    } else left.push(v)
  }
  if (cut || left.length > 0) out += closingNote(cut, left, limit)
  return out
}

/** Whether a variant belongs in the table: it changes, failed, or has conflicts. */
function isChange(v: VariantReport): boolean {
  return v.status !== 'unchanged' || v.conflicts.length > 0
}

function heading(report: RunReport): string {
  const failed = report.problems.length > 0 || report.variants.some((v) => v.status === 'failed')
  const title = report.dryRun ? 'kpt-variants render --dry-run' : 'kpt-variants render'
  return `### ${failed ? '❌' : '✅'} ${title}`
}

function countsLine(report: RunReport): string {
  const conflicts = report.variants.reduce((n, v) => n + v.conflicts.length, 0)
  const bold = (n: number) => `**${n}**`
  return totalsLine(
    report,
    ['created', 'updated', 'deleted', 'orphaned', 'unchanged', 'failed'],
    bold,
    conflicts > 0 ? [`${bold(conflicts)} conflict(s)`] : [],
  )
}

/** Each repository's dependency steps, in dependency order. */
function dependenciesSection(report: RunReport): string[] {
  const planned = (report.dependencies ?? []).filter((r) => r.steps.length > 0)
  if (planned.length === 0) return []
  return [
    '#### Dependencies (each repository in dependency order)',
    '',
    ...planned.flatMap((r) => r.steps.map((s) => `- ${text(describeStep(r.name, s))}`)),
    '',
  ]
}

function tableRows(changed: readonly VariantReport[]): string[] {
  return changed.map((v) => {
    const upstream = v.upstream ? (v.previousUpstream ? `${v.upstream} (from ${v.previousUpstream})` : v.upstream) : ''
    const cells = [
      v.status,
      code(v.path ?? '-'),
      code(v.subject.replace(/^PackageVariant /, '')),
      text(upstream),
      String(v.conflicts.length),
    ]
    return `| ${cells.join(' | ')} |`
  })
}

function failuresSection(changed: readonly VariantReport[]): string[] {
  const failed = changed.filter((v) => v.status === 'failed')
  if (failed.length === 0) return []
  return [
    '#### Failed',
    '',
    ...failed.flatMap((v) =>
      v.reasons.map((r) => `- ${code(v.path ?? v.subject)}: ${code(r.code)} ${text(r.message)}`),
    ),
    '',
  ]
}

function conflictsSection(changed: readonly VariantReport[]): string[] {
  const conflicted = changed.filter((v) => v.conflicts.length > 0)
  if (conflicted.length === 0) return []
  const lines = ['#### Conflicts (a field changed both upstream and downstream)', '']
  for (const v of conflicted) {
    for (const c of v.conflicts) {
      const took = c.resolution === 'fail' ? 'failed' : `took ${c.resolution}`
      lines.push(
        `- ${code(v.path ?? v.subject)} ${code(c.file)} ${text(c.resource)} ${code(c.field)}: downstream ${code(c.local ?? '(deleted)')}, upstream ${code(c.upstream ?? '(deleted)')} (was ${code(c.origin ?? '(absent)')}): ${took}`,
      )
    }
  }
  return [...lines, '']
}

function problemsSection(report: RunReport): string[] {
  const lines =
    report.problems.length > 0 ? ['#### Fleet problems', '', ...report.problems.map((p) => `- ${text(p)}`), ''] : []
  if (report.deletionsSkipped) lines.push(`No package deleted: ${text(report.deletionsSkipped)}.`, '')
  return lines
}

/** One variant's diff, collapsed: the summary names the package and counts the lines. */
function diffBlock(v: VariantReport, diff: string, cut = false): string {
  const { files, added, removed } = diffStat(v.diff ?? '')
  const summary = `<code>${html(v.path ?? v.subject)}</code> ${v.status}: ${files} file(s), +${added} −${removed}${cut ? ' (cut short)' : ''}`
  const fence = '`'.repeat(Math.max(3, longestRun(diff, '`') + 1))
  const body = diff.endsWith('\n') || diff === '' ? diff : `${diff}\n`
  return `\n<details>\n<summary>${summary}</summary>\n\n${fence}diff\n${body}${fence}\n\n</details>\n`
}

function closingNote(cut: VariantReport | undefined, left: readonly VariantReport[], limit: number): string {
  const names = left.map((v) => v.path ?? v.subject)
  const listed = names.slice(0, 5).join(', ') + (names.length > 5 ? ` and ${names.length - 5} more` : '')
  const parts: string[] = []
  if (cut) parts.push(`the diff of ${cut.path ?? cut.subject} is cut short`)
  if (left.length > 0) parts.push(`${left.length} diff(s) are left out (${listed})`)
  return `\n> [!NOTE]\n> To stay within a ${limit.toLocaleString('en-US')}-character comment, ${parts.join(' and ')}. The whole diff is in the job's output of \`--dry-run --diff\`, and on the fleet page (\`--report\`).\n`
}

/** Files, added and removed lines of a unified diff. */
export function diffStat(diff: string): { files: number; added: number; removed: number } {
  let files = 0
  let added = 0
  let removed = 0
  for (const line of diff.split('\n')) {
    if (line.startsWith('+++ ')) files++
    else if (line.startsWith('+')) added++
    else if (line.startsWith('---') && /^--- (a\/|\/dev\/null)/.test(line)) continue
    else if (line.startsWith('-')) removed++
  }
  return { files, added, removed }
}

/** The longest prefix of `text` of whole lines within `max` characters. */
function cutAtLine(text: string, max: number): string {
  const head = text.slice(0, max)
  const end = head.lastIndexOf('\n')
  return end < 0 ? '' : head.slice(0, end + 1)
}

function longestRun(text: string, char: string): number {
  let best = 0
  let run = 0
  for (const c of text) {
    run = c === char ? run + 1 : 0
    if (run > best) best = run
  }
  return best
}

/** Text for a table cell or list item: HTML and Markdown syntax escaped, one line. */
function text(value: string): string {
  return html(value)
    .replace(/[\\`*_[\]|#~]/g, '\\$&')
    .replace(/\s*\n\s*/g, ' ')
}

/** A code span that holds any text: the fence is longer than any run of backticks in it; `|` escaped for tables (GFM reads `\|` in a cell first). */
function code(value: string): string {
  const oneLine = value.replace(/\s*\n\s*/g, ' ')
  const fence = '`'.repeat(longestRun(oneLine, '`') + 1)
  const pad = oneLine.startsWith('`') || oneLine.endsWith('`') ? ' ' : ''
  return `${fence}${pad}${oneLine.replace(/\|/g, '\\|')}${pad}${fence}`
}

function html(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
