/**
 * The wire contract of every executable in bin/, as kpt sees it: `--help`
 * works, and bad input gives exit 1 with a ResourceList (never empty stdout,
 * which would make kpt delete the package).
 */
import { join } from 'node:path'
import { execa } from 'execa'
import { parseValue } from '../functions/krm/yaml/index.js'
import { functionBins, repoRoot } from './e2e/runner.js'

const bins = functionBins()

describe.each(bins)('bin/%s', (name) => {
  const bin = join(repoRoot, 'bin', name)

  test('--help prints usage', async () => {
    const run = await execa(bin, ['--help'], { reject: false })
    expect(run.exitCode).toBe(0)
    expect(String(run.stdout)).toContain(`${name}: `)
    expect(String(run.stdout)).toContain('--sources PATH')
  })

  test.each([
    ['empty stdin', '', 'input is empty'],
    ['malformed YAML', 'kind: ResourceList\nitems: [\n', 'malformed YAML'],
    ['a ResourceList without items', 'apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n', 'no `items` field'],
    ['another kind', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n', 'input is not a ResourceList'],
  ])('%s: exit 1, an error result, a ResourceList on stdout', async (_case, input, message) => {
    const run = await execa(bin, [], { input, reject: false })
    expect(run.exitCode).toBe(1)
    const out = parseValue(String(run.stdout)) as {
      kind: string
      items: unknown[]
      results: { message: string; severity: string }[]
    }
    expect(out.kind).toBe('ResourceList')
    expect(out.items).toEqual([])
    expect(out.results[0]).toMatchObject({ severity: 'error', message: expect.stringContaining(message) })
    expect(String(run.stderr)).toContain(message)
  })
})
