import { source } from '../../test/support/source.js'
import type { KrmFunction } from './run.js'
import { runFunction } from './run.js'
import { runMain } from './main.js'
import type { MainIO } from './main.js'

const labeler: KrmFunction = {
  name: 'labeler',
  description: 'adds a label',
  usage: 'functionConfig: ConfigMap with data.value',
  transform(rl, { sources }) {
    const value = rl.functionConfig?.getString(['data', 'value'])
    if (!value) {
      rl.results.error('`data.value` must not be empty', { object: rl.functionConfig, field: 'data.value' })
      return
    }
    for (const item of rl.items) item.setLabel('probe', value)
    rl.results.info(`labelled ${rl.items.length} object(s), ${sources.length} source(s)`)
  },
}

const input = (value: string) => source`
  apiVersion: config.kubernetes.io/v1
  kind: ResourceList
  items:
  - # head
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: a
  functionConfig:
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: function-input
    data:
      value: ${value}
`

describe('runFunction', () => {
  test('success prints the edited list and exit 0', () => {
    const run = runFunction(labeler, input('blue'))
    expect(run.exitCode).toBe(0)
    expect(run.output).toContain('- # head\n  apiVersion: v1\n')
    expect(run.output).toContain('    labels:\n      probe: blue\n')
    expect(run.output).toContain('results:\n- message: labelled 1 object(s), 0 source(s)\n  severity: info\n')
  })

  test('an error result gives exit 1 and the items unchanged', () => {
    const run = runFunction(labeler, input('""'))
    expect(run.exitCode).toBe(1)
    expect(run.output).not.toContain('probe:')
    expect(run.output).toContain('- message: "`data.value` must not be empty"\n  severity: error\n')
    expect(run.output).toContain('  field:\n    path: data.value\n')
    expect(run.stderr).toEqual(['labeler: 1 error(s); the package was not changed'])
  })

  test('a thrown bug becomes one error result, never a stack trace on stdout', () => {
    const broken: KrmFunction = {
      ...labeler,
      transform: () => {
        throw new Error('boom')
      },
    }
    const run = runFunction(broken, input('x'))
    expect(run.exitCode).toBe(1)
    expect(run.output).toContain('labeler: internal error: boom')
    expect(run.output).toContain('items:\n- # head')
  })

  test.each([
    ['empty input', '', 'input is empty: expected a ResourceList on stdin'],
    ['malformed YAML', 'items: [a\n', 'malformed YAML in ResourceList:'],
    ['not a map', '- a\n', 'input is not a ResourceList: expected a YAML map at the top level'],
    ['wrong kind', 'kind: List\nitems: []\n', 'input is not a ResourceList: `kind` is "List", expected "ResourceList"'],
    ['no items', 'kind: ResourceList\n', 'ResourceList has no `items` field'],
    ['items not a list', 'kind: ResourceList\nitems: {}\n', 'ResourceList `items` must be a list of objects'],
    ['an item not an object', 'kind: ResourceList\nitems:\n- a\n', 'ResourceList `items[0]` is not an object'],
    [
      'functionConfig not an object',
      'kind: ResourceList\nitems: []\nfunctionConfig: x\n',
      'ResourceList `functionConfig` must be an object',
    ],
  ])('%s: exit 1, an error result and still a ResourceList with items', (_name, text, message) => {
    const run = runFunction(labeler, text)
    expect(run.exitCode).toBe(1)
    expect(run.output).toMatch(/^apiVersion: config.kubernetes.io\/v1\nkind: ResourceList\nitems: \[\]\n/)
    expect(run.output).toContain(JSON.stringify(message).slice(1, -1))
    expect(run.stderr[0]).toContain(message)
  })
})

function fakeIO(stdin: string | Buffer, env: Record<string, string> = {}) {
  const out = { stdout: '', stderr: '' }
  const io: MainIO = {
    readStdin: async () => (typeof stdin === 'string' ? Buffer.from(stdin) : stdin),
    stdinIsTTY: false,
    stdout: (t) => void (out.stdout += t),
    stderr: (t) => void (out.stderr += t),
    env,
  }
  return { io, out }
}

describe('runMain', () => {
  test('--help prints usage and exits 0', async () => {
    const { io, out } = fakeIO('')
    expect(await runMain(labeler, ['--help'], io)).toBe(0)
    expect(out.stdout).toContain('labeler: adds a label')
    expect(out.stdout).toContain('--sources PATH')
  })

  test('an unknown flag is an error with a ResourceList on stdout', async () => {
    const { io, out } = fakeIO('')
    expect(await runMain(labeler, ['--nope'], io)).toBe(1)
    expect(out.stdout).toContain('items: []')
    expect(out.stderr).toContain("Unknown option '--nope'")
  })

  test.each([
    ['invalid UTF-8', Buffer.from([0x6b, 0x69, 0x6e, 0x64, 0xff, 0xfe]), 'input is not valid UTF-8'],
    ['a NUL byte', Buffer.from('kind: ResourceList\u0000\n'), 'input contains a NUL character at offset 18'],
  ])('%s is rejected', async (_name, bytes, message) => {
    const { io, out } = fakeIO(bytes)
    expect(await runMain(labeler, [], io)).toBe(1)
    expect(out.stdout).toContain(message)
  })

  test('--sources and the environment variable add read-only objects', async () => {
    const { mkdtempSync, writeFileSync, mkdirSync } = await import('node:fs')
    const { join } = await import('node:path')
    const { tmpdir } = await import('node:os')
    const dir = mkdtempSync(join(tmpdir(), 'sources-'))
    mkdirSync(join(dir, 'cluster'))
    writeFileSync(
      join(dir, 'cluster', 'a.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n',
    )
    writeFileSync(join(dir, 'c.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n')
    const { io, out } = fakeIO(input('x'), { KPT_VARIANTS_SOURCES: join(dir, 'c.yaml') })
    expect(await runMain(labeler, ['--sources', join(dir, 'cluster')], io)).toBe(0)
    expect(out.stdout).toContain('labelled 1 object(s), 3 source(s)')
    expect(out.stdout).not.toContain('name: b')
  })

  test('a sources file that does not parse fails the run, naming the file', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs')
    const { join } = await import('node:path')
    const { tmpdir } = await import('node:os')
    const dir = mkdtempSync(join(tmpdir(), 'sources-'))
    writeFileSync(join(dir, 'bad.yaml'), 'a: [\n')
    const { io, out } = fakeIO(input('x'))
    expect(await runMain(labeler, ['--sources', dir], io)).toBe(1)
    expect(out.stdout).toContain(`invalid --sources file: ${join(dir, 'bad.yaml')}:2:1`)
    expect(out.stdout).not.toContain('probe:')
  })

  test('a missing sources path fails the run', async () => {
    const { io, out } = fakeIO(input('x'))
    expect(await runMain(labeler, ['--sources', '/nonexistent/path'], io)).toBe(1)
    expect(out.stdout).toContain('cannot read --sources /nonexistent/path: ENOENT')
  })
})
