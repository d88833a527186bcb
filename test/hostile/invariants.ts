/** What every run of a function must give, whatever its input (the wire contract under attack). */
import { parseAllDocuments } from 'yaml'
import type { HostileCase } from './corpus.js'

interface Output {
  kind?: unknown
  items?: unknown
  results?: { severity?: string; message?: string }[]
}

/**
 * Checks one run: stdout is one ResourceList that parses (no duplicate keys,
 * no alias expansion beyond 100), with `items:`; exit 1 exactly when there is
 * an error result; no internal error or stack trace; the case's expectation.
 */
export function expectContract(
  hostile: HostileCase,
  program: string,
  run: { exitCode: number; stdout: string; stderr: string },
): void {
  expect(run.stdout).not.toBe('')
  // No uniqueKeys: the library's duplicate check is quadratic, and the output of a 50,000-key map is legitimate.
  const docs = parseAllDocuments(run.stdout, { uniqueKeys: false })
  expect(Array.isArray(docs) ? docs.length : 0).toBe(1)
  const doc = (docs as ReturnType<typeof parseAllDocuments> & unknown[])[0]!
  expect(doc.errors.map((e) => e.message)).toEqual([])
  const out = doc.toJS({ maxAliasCount: 100 }) as Output
  expect(out.kind).toBe('ResourceList')
  expect(Array.isArray(out.items)).toBe(true)
  const results = out.results ?? []
  const errors = results.filter((r) => r.severity === 'error').map((r) => String(r.message))
  expect(run.exitCode).toBe(errors.length > 0 ? 1 : 0)
  for (const r of results)
    expect(String(r.message)).not.toMatch(/internal error|Maximum call stack|RangeError|TypeError/)
  expect(run.stderr).not.toMatch(/\n\s+at /)
  if (hostile.expect === 'error' && (hostile.errorIn ?? [program]).includes(program)) {
    expect(run.exitCode).toBe(1)
    expect(errors).toContainEqual(expect.stringMatching(hostile.message ?? /./))
  }
}
