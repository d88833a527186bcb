/**
 * Malformed and mistyped input through the SDK: each is an error result that
 * names the item (and the field), exit 1, and a ResourceList that parses.
 */
import { parseAllDocuments } from 'yaml'
import type { KrmFunction } from './run.js'
import { parseObjects } from './objects.js'
import { checkNestingDepth } from './yaml/documents.js'
import { runFunction } from './run.js'

/** Reads what functions typically read of every item: identity, labels, annotations and `spec.x`. */
const reader: KrmFunction = {
  name: 'reader',
  description: 'reads items',
  usage: '',
  transform(rl) {
    for (const item of rl.items) {
      void item.name
      void item.kind
      item.labels()
      item.getAnnotation('a')
      item.getString(['spec', 'x'])
    }
    rl.results.info(`read ${rl.items.length} object(s)`)
  },
}

const list = (items: string, functionConfig = '') => `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: fine
${items}${functionConfig}`

const configMap = (body: string) => `- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n${body}`
const bomb = [
  'a: &a [x, x, x, x, x, x, x, x, x, x]',
  ...'bcdefg'.split('').map((c, i) => `${c}: &${c} [${Array(10).fill(`*${'abcdefg'[i]}`).join(', ')}]`),
]

function expectError(output: string, message: string | RegExp) {
  for (const doc of parseAllDocuments(output)) expect(doc.errors).toEqual([])
  const errors = (
    parseAllDocuments(output)[0]!.toJS() as { results: { severity: string; message: string }[] }
  ).results.filter((r) => r.severity === 'error')
  expect(errors.map((r) => r.message)).toContainEqual(
    typeof message === 'string' ? expect.stringContaining(message) : expect.stringMatching(message),
  )
}

describe.each([true, false])('lazy reader %s', (lazy) => {
  // The non-lazy path: the same text with `items:` indented, which the splitter leaves to the parser.
  const shape = (text: string) => (lazy ? text : text.replace(/^items:\n/m, 'items:\n').replace(/^(- | {2})/gm, '  $1'))

  test.each([
    ['an unclosed flow mapping', configMap('  data: {a: 1\n'), /items\[1\]( \(ConfigMap\/a\))?.*Flow map/],
    [
      'a truncated quoted scalar',
      configMap('  data:\n    a: "abc\n'),
      /items\[1\]( \(ConfigMap\/a\))?.*Missing closing "quote/,
    ],
    [
      'an implicit key over 1,024 characters',
      configMap(`  data:\n    ${'k'.repeat(1100)}: 1\n`),
      /items\[1\]( \(ConfigMap\/a\))?.*1024/,
    ],
    [
      'an alias before its anchor',
      configMap('  data:\n    a: *x\n    b: &x 1\n'),
      /items\[1\]( \(ConfigMap\/a\))?.*Unresolved alias/,
    ],
    [
      'an alias bomb',
      configMap(`  data:\n${bomb.map((l) => `    ${l}\n`).join('')}`),
      /items\[1\]( \(ConfigMap\/a\))?.*Excessive alias count/,
    ],
    ['a duplicate key', configMap('  data:\n    a: 1\n    a: 2\n'), 'items[1] (ConfigMap/a): duplicate key `data.a`'],
    [
      'a duplicate key in a list',
      configMap('  spec:\n    ports:\n    - port: 80\n    - port: 81\n      port: 82\n'),
      'items[1] (ConfigMap/a): duplicate key `spec.ports[1].port`',
    ],
    [
      'a duplicate key in a flow list',
      configMap('  spec:\n    pairs: [a: {x: 1, x: 2}]\n'),
      'items[1] (ConfigMap/a): duplicate key `spec.pairs[0].a.x`',
    ],
    [
      'nesting 100,000 deep',
      configMap(`  data:\n    x: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`),
      'nested deeper than 500 levels',
    ],
  ])('%s: an error naming the item', (_name, items, message) => {
    const run = runFunction(reader, shape(list(items)))
    expect(run.exitCode).toBe(1)
    expectError(run.output, message)
  })

  test.each([
    [
      '`metadata.annotations` as a list',
      '- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n    annotations:\n    - x\n',
      'ConfigMap/a: `metadata.annotations` must be a map of strings',
    ],
    [
      'an annotation value that is a map',
      '- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n    annotations:\n      a: {b: c}\n',
      'ConfigMap/a: `metadata.annotations.a` must be a string',
    ],
    [
      '`metadata` as a list',
      '- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n  - name: a\n',
      '`metadata` must be a map',
    ],
    ['`spec` as a string', configMap('  spec: hello\n'), 'ConfigMap/a: `spec` must be a map'],
    ['`kind` as a map', '- apiVersion: v1\n  kind: {a: b}\n  metadata:\n    name: a\n', '`kind` must be a string'],
  ])('%s: an error naming the object and field', (_name, items, message) => {
    const run = runFunction(reader, shape(list(items)))
    expect(run.exitCode).toBe(1)
    expectError(run.output, message)
  })

  test.each([
    [
      'an alias bomb',
      `functionConfig:\n${bomb.map((l) => `  ${l}\n`).join('')}`,
      /functionConfig.*Excessive alias count/,
    ],
    ['an alias before its anchor', 'functionConfig:\n  a: *x\n  b: &x 1\n', /functionConfig.*Unresolved alias/],
    ['a duplicate key', 'functionConfig:\n  kind: A\n  kind: B\n', 'functionConfig: duplicate key `kind`'],
  ])('functionConfig with %s: an error naming it', (_name, functionConfig, message) => {
    const run = runFunction(reader, list('', functionConfig))
    expect(run.exitCode).toBe(1)
    expectError(run.output, message)
  })

  // Found by the fuzz test (seeds 1215680869 and, in its 908th run, 1984151837): the list's own fields and keys are
  // printed back, and an unresolved alias there made printing the output throw.
  test.each([
    [
      'apiVersion',
      (l: string) => l.replace('apiVersion: config.kubernetes.io/v1', 'apiVersion: *aconfig.kubernetes.io/v1'),
    ],
    ['results', (l: string) => `${l}results:\n- message: *m\n  severity: info\n`],
    ['key', (l: string) => `? *a${l}`],
    ['key', (l: string) => `${l}? [*b]\n: c\n`],
  ])("the list's own %s with an alias to no anchor: an error naming the field", (field, edit) => {
    const run = runFunction(reader, edit(list('')))
    expect(run.exitCode).toBe(1)
    expectError(run.output, new RegExp(`ResourceList ${field}: Unresolved alias`))
  })

  test.each([
    ['items', 'items:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: second\n'],
    ['items', 'items: []\n'],
    ['functionConfig', 'functionConfig:\n  kind: A\nfunctionConfig:\n  kind: B\n'],
    ['results', 'results: []\nresults: []\n'],
  ])('a second `%s` key in the list itself: an error, whichever function reads it', (key, tail) => {
    const run = runFunction(reader, `${shape(list(''))}${tail}`)
    expect(run.exitCode).toBe(1)
    expectError(run.output, `malformed YAML in ResourceList: duplicate key \`${key}\``)
  })
})

describe('--sources files', () => {
  test.each([
    [
      'a duplicate key',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: 1, k: 2}\n',
      'cluster.yaml: document 0: duplicate key `data.k`',
    ],
    [
      'an alias bomb',
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n${bomb.map((l) => `  ${l}\n`).join('')}`,
      'Excessive alias count',
    ],
    ['nesting 100,000 deep', `a: ${'['.repeat(100_000)}\n`, 'nested deeper than 500 levels'],
  ])('%s: an error naming the file', (_name, text, message) => {
    expect(() => parseObjects(text, 'cluster.yaml')).toThrow(message)
  })
})

describe('checkNestingDepth', () => {
  test('many shallow flow collections are fine; deep ones are refused before parsing', () => {
    expect(() => checkNestingDepth(`a: [${'[], '.repeat(2_000)}{}]\nb: "[[[[" # [[[[\n`)).not.toThrow()
    expect(() => checkNestingDepth(`a: ${'['.repeat(400)}${']'.repeat(400)}\n`)).not.toThrow()
    expect(() => checkNestingDepth(`a: ${'['.repeat(501)}\n`, 'x.yaml')).toThrow(
      'x.yaml: nested deeper than 500 levels',
    )
    expect(() => checkNestingDepth(`a:\n${' '.repeat(1_002)}b: 1\n`)).toThrow('nested deeper than 500 levels')
  })
})
