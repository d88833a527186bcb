import { readFileSync } from 'node:fs'
import { describeFailure, failure, failureCodes, internalError, isFailureCode, messagesOf } from './failure.js'
import type { RunReport, VariantReport } from './report.js'
import { formatJson, formatSummary } from './summary.js'
import { formatMarkdown } from './markdown.js'

const failed = (reasons: VariantReport['reasons']): RunReport => ({
  dryRun: false,
  problems: [],
  variants: [
    { subject: 'PackageVariant default/a', path: 'edge-01/a', status: 'failed', reasons, warnings: [], conflicts: [] },
  ],
})

describe('failure codes', () => {
  test('docs/reports.md lists every code, and only those, with its meaning', () => {
    const doc = readFileSync('docs/reports.md', 'utf8')
    const section = doc.slice(doc.indexOf('## Failure codes'), doc.indexOf('## The pull-request summary'))
    const listed = [...section.matchAll(/^\| `(\w+)` +\| (.+?) +\|$/gm)].map((m) => m[1])
    expect(listed).toEqual(Object.keys(failureCodes))
    expect(isFailureCode('MergeConflict')).toBe(true)
    expect(isFailureCode('toString')).toBe(false)
  })

  test('an unexpected exception is an InternalError: the message for people, the stack apart', () => {
    const error = new Error('cannot read properties of undefined')
    const reason = internalError(error)
    expect(reason).toEqual({
      code: 'InternalError',
      message: 'internal error: cannot read properties of undefined',
      stack: error.stack,
    })
    expect(internalError('thrown text')).toEqual({ code: 'InternalError', message: 'internal error: thrown text' })
  })

  test('the summary names each code; an internal error says it is a bug, and its stack only with --debug', () => {
    const report = failed([failure('MergeConflict', '3-way merge failed'), internalError(new Error('boom'))])
    const text = formatSummary(report)
    expect(text).toContain('  edge-01/a: 3-way merge failed [MergeConflict]\n')
    expect(text).toContain(
      '  edge-01/a: internal error: boom [InternalError]\n    a bug in kpt-variants, not in the fleet: --debug prints where it happened\n',
    )
    expect(text).not.toMatch(/\n\s+at /)
    expect(formatSummary(report, { debug: true })).toMatch(
      /internal error: boom \[InternalError\]\n {4}Error: boom\n {4}at /,
    )
  })

  test('--json carries code and message; the stack only with --debug', () => {
    const report = failed([failure('FunctionFailed', 'exit 1'), internalError(new Error('boom'))])
    const json = JSON.parse(formatJson(report)) as { variants: VariantReport[] }
    expect(json.variants[0]!.reasons).toEqual([
      { code: 'FunctionFailed', message: 'exit 1' },
      { code: 'InternalError', message: 'internal error: boom' },
    ])
    const debug = JSON.parse(formatJson(report, { debug: true })) as { variants: VariantReport[] }
    expect(debug.variants[0]!.reasons[1]!.stack).toMatch(/\n\s+at /)
    expect(report.variants[0]!.reasons[1]!.stack).toBeDefined()
  })

  test('markdown shows the code before each message, never a stack', () => {
    const md = formatMarkdown(
      failed([failure('GitPushRefused', 'pushing was refused'), internalError(new Error('boom'))]),
    )
    expect(md).toContain('- `edge-01/a`: `GitPushRefused` pushing was refused')
    expect(md).toContain('- `edge-01/a`: `InternalError` internal error: boom')
    expect(md).not.toMatch(/\n\s+at /)
  })

  test('messages and a line of text', () => {
    const reasons = [failure('ApplyFailed', 'a'), failure('ApplyFailed', 'b')]
    expect(messagesOf(reasons)).toBe('a; b')
    expect(describeFailure(reasons[0]!)).toBe('a [ApplyFailed]')
  })
})
