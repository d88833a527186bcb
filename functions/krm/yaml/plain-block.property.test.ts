/**
 * Property: the plain block reader either declines a text or builds exactly
 * what the `yaml` library parses from it: the same document fields, the same
 * node classes and own fields (values, styles, sources, ranges) and the same
 * printed text. Texts are drawn from a grammar around the reader's subset and
 * then perturbed with what it must decline (comments, blank lines, odd
 * indentation, tabs, markers, continuation lines, invalid YAML).
 */
import fc from 'fast-check'
import { isMap, isPair, isScalar, isSeq } from 'yaml'
import type { Document } from 'yaml'
import { parseYamlDocument, parseYamlDocumentWithLibrary, readPlainDocument } from './documents.js'
import { setFastPathsOff } from '../fast-paths.js'
import { propertyRuns } from '../../../test/support/property-runs.js'

// This suite tests the fast path itself: on, whatever KPT_VARIANTS_NO_FAST_PATHS says (the oracle run).
beforeAll(() => setFastPathsOff([]))

type Value =
  | { kind: 'scalar'; text: string }
  | { kind: 'map'; entries: { key: string; value: Value }[] }
  | { kind: 'seq'; items: Value[] }

const key = fc.oneof(
  { weight: 30, arbitrary: fc.stringMatching(/^[a-z][a-zA-Z0-9]{0,6}$/) },
  fc.constantFrom(
    'app.kubernetes.io/name',
    'config.kubernetes.io/local-config',
    '_x',
    "'quoted'",
    '"dq"',
    'true',
    'null',
    'Yes',
    '8080',
    'a b',
    '-x',
    'a:b',
    '""',
    "''",
    'k'.repeat(1000),
    'k'.repeat(1100),
  ),
)
const scalarText = fc.oneof(
  { weight: 20, arbitrary: fc.stringMatching(/^[a-z][a-z0-9.-]{0,8}$/) },
  // Commits, versions and numbers of every kind: a digit first is a string only where no number reads it.
  { weight: 10, arbitrary: fc.stringMatching(/^[0-9][0-9a-fA-FxoeE.:_+ -]{0,8}$/) },
  {
    weight: 10,
    arbitrary: fc.constantFrom(
      'true',
      'false',
      '0',
      '42',
      '../repos/edge-1',
      '"a b"',
      "'single'",
      '{}',
      '[]',
      'https://api.example.com',
      'benchmark blueprint',
    ),
  },
  fc.constantFrom(
    'true',
    'false',
    'True',
    'FALSE',
    'null',
    'Null',
    '~',
    '0',
    '7',
    '007',
    '-3',
    '+4',
    '12345678901234567890',
    '1.5',
    '.5',
    '1e3',
    '0x1F',
    '0o17',
    '.inf',
    '.nan',
  ),
  fc.constantFrom(
    '../repos/edge-1',
    '.hidden',
    '.5',
    '.5e3',
    '.inf',
    '.NaN',
    '.x',
    'benchmark blueprint',
    'a  b',
    'https://api.example.com',
    'example.com/app:1.0.0',
    'a: b',
    'a:',
    'x #y',
    '/path/to',
    '_u',
    'a\\b',
    "don't",
    'a"b',
    'a,b',
    'a[0]',
    'é',
    '-',
    '- x',
    '--x',
    '? x',
    '*a',
    '&a',
    '!x',
    '!!str x',
    '@x',
    '%x',
    '|',
    '>',
    '`x`',
    'injected resource "us-east1-endpoints" from cluster',
    "it's a 'b'",
    'x "y',
    'a, b',
    'a {b} [c]',
    'f(x) = {y}',
    'a ,b',
    'a "b": c',
    'a #b',
    "a 'b #c'",
    '32fdf4388323da2ea8fd58e3f70c6be0c4bfe692',
    '1.2.3',
    '1_000',
    '12:30',
    '0b101',
    '1e3',
    '1E+3',
    '1.',
    '08',
    '0x',
    '0o8',
    '1:',
    '2 b: c',
  ),
  fc.constantFrom(
    '"plain"',
    '"a b"',
    "'single'",
    "'it''s'",
    '"esc\\n"',
    '"unterminated',
    "'x",
    '""',
    "''",
    '"é"',
    '{}',
    '[]',
    '{a: 1}',
    '[a]',
    '{ }',
  ),
)

const tree = fc.letrec<{ value: Value; map: Value; seq: Value }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalarText.map((text) => ({ kind: 'scalar' as const, text })),
    tie('map'),
    tie('seq'),
  ),
  map: fc
    .array(fc.record({ key, value: tie('value') }), { minLength: 1, maxLength: 4 })
    .map((entries) => ({ kind: 'map' as const, entries })),
  seq: fc.array(tie('value'), { minLength: 1, maxLength: 3 }).map((items) => ({ kind: 'seq' as const, items })),
}))

/** Prints a collection at `indent`; `kyaml` puts a map's sequences at the key's own indentation, as kpt does. */
function print(node: Value, indent: number, kyaml: boolean, step: number): string[] {
  const pad = ' '.repeat(indent)
  if (node.kind === 'scalar') return [`${pad}${node.text}`]
  if (node.kind === 'map') {
    return node.entries.flatMap(({ key, value }) => {
      if (value.kind === 'scalar') return [`${pad}${key}: ${value.text}`]
      const below = value.kind === 'seq' && kyaml ? indent : indent + step
      return [`${pad}${key}:`, ...print(value, below, kyaml, step)]
    })
  }
  return node.items.flatMap((item) => {
    if (item.kind === 'scalar') return [`${pad}- ${item.text}`]
    if (item.kind === 'seq') return [`${pad}-`, ...print(item, indent + step, kyaml, step)]
    const [first, ...rest] = print(item, indent + 2, kyaml, step)
    return [`${pad}- ${first!.trimStart()}`, ...rest]
  })
}

/** What the reader must decline, or still read right: inserted into the printed lines. */
const perturbation = fc.oneof(
  { weight: 6, arbitrary: fc.constant(undefined) },
  fc.record({
    at: fc.nat(),
    line: fc.constantFrom(
      '',
      '# comment',
      '  # comment',
      '---',
      '...',
      '%YAML 1.2',
      '\t',
      'x: y',
      '  x: y',
      '    continued',
      '- item',
      'key',
      '&a x: y',
      'x: *a',
      'x: !!str y',
      'x: |',
      '  block',
    ),
  }),
  fc.record({
    at: fc.nat(),
    suffix: fc.constantFrom(
      ' ',
      ' # trailing',
      '\r',
      ':',
      ' x',
      ' #',
      '  # two spaces',
      ' #x',
      ' # a # b',
      ' # kpt-merge: ns/name',
    ),
  }),
  // kpt's comment on every key that opens a block (what a package fetched by kpt holds), or on some of them.
  {
    weight: 3,
    arbitrary: fc.record({
      comment: fc.constantFrom(' # kpt-merge: default/app', ' #kpt-merge: /x', ' # a: b #c'),
      every: fc.boolean(),
    }),
  },
)

function textOf(
  root: Value,
  kyaml: boolean,
  step: number,
  change: { at: number; line?: string; suffix?: string } | { comment: string; every: boolean } | undefined,
  final: boolean,
): string {
  let lines = print(root, 0, kyaml, step)
  if (change && 'comment' in change) {
    lines = lines.map((line, i) =>
      line.endsWith(':') && (change.every || i % 2 === 0) ? `${line}${change.comment}` : line,
    )
  } else if (change) {
    const at = change.at % lines.length
    if (change.line !== undefined) lines.splice(at, 0, change.line)
    else lines[at] += change.suffix!
  }
  return lines.join('\n') + (final ? '\n' : '')
}

/** Every own enumerable field of every node, in order (ranges, sources, styles included), and the node's class. */
function shape(node: unknown): unknown {
  if (node === null || typeof node !== 'object') return node
  const fields: Record<string, unknown> = { class: node.constructor.name }
  for (const [name, field] of Object.entries(node)) {
    if (name === 'items' || ((name === 'key' || name === 'value') && isPair(node))) continue
    fields[name] = field
  }
  if (isMap(node) || isSeq(node)) fields['items'] = node.items.map(shape)
  if (isPair(node)) fields['pair'] = [shape(node.key), shape(node.value)]
  if (isScalar(node)) fields['valueType'] = typeof node.value
  return fields
}

function documentShape(doc: Document.Parsed): unknown {
  return {
    fields: Object.keys(doc),
    comment: doc.comment,
    commentBefore: doc.commentBefore,
    errors: doc.errors.length,
    warnings: doc.warnings.length,
    range: doc.range,
    options: Object.keys(doc.options),
    directives: JSON.stringify(doc.directives),
    contents: shape(doc.contents),
    text: doc.toString(),
  }
}

let read = 0
let commented = 0
test('the plain reader builds what the library parses, or declines', () => {
  const runs = propertyRuns(1500)
  fc.assert(
    fc.property(
      tree.map,
      fc.boolean(),
      fc.constantFrom(2, 2, 4, 1),
      perturbation,
      fc.boolean(),
      fc.boolean(),
      (root, kyaml, step, change, final, asItem) => {
        if (root.kind === 'scalar') return
        let text = textOf(root, kyaml, step, change, final || asItem)
        if (asItem) text = `- ${text.replace(/\n(?=.)/g, '\n  ')}`
        const plain = readPlainDocument(text)
        if (!plain) return
        read++
        if (text.includes('#')) commented++
        let library: Document.Parsed
        try {
          library = parseYamlDocumentWithLibrary(text, 'input')
        } catch (err) {
          throw new Error(`read a text the library rejects (${(err as Error).message}):\n${text}`)
        }
        expect(documentShape(plain)).toEqual(documentShape(library))
      },
    ),
    { numRuns: runs },
  )
  // Not a vacuous property: a good share of the drawn texts are plain.
  expect(read).toBeGreaterThan(runs * 0.1)
  // ...and a good share of those carry kpt's comments (125-160 in a run, measured).
  expect(commented).toBeGreaterThan(runs * 0.0125)
})

test('fleet objects and rendered Kptfiles as kpt writes them take the plain path, and parseYamlDocument returns its reading', () => {
  const repository =
    '- apiVersion: config.porch.kpt.dev/v1alpha1\n  kind: Repository\n  metadata:\n    name: edge-00001\n    namespace: default\n  spec:\n    deployment: true\n    git:\n      repo: ../repos/edge-00001\n'
  const cluster =
    'apiVersion: infra.nephio.org/v1alpha1\nkind: WorkloadCluster\nmetadata:\n  name: edge-1\n  labels:\n    region: "us-east1"\n  annotations: {}\nspec:\n  clusterName: edge-1\n  cnis:\n  - macvlan\n  - ipvlan\n  replicas: 3\n'
  // A variant's Kptfile after a render: a condition's message quotes the object injected.
  const kptfile =
    'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n  annotations:\n    config.kubernetes.io/local-config: "true"\nstatus:\n  conditions:\n  - type: config.injection.ConfigMap.endpoints\n    status: "True"\n    reason: ConfigInjected\n    message: injected resource "us-west1-endpoints" from cluster\nupstreamLock:\n  git:\n    commit: 32fdf4388323da2ea8fd58e3f70c6be0c4bfe692\n'
  // A resource as kpt pkg get writes it: its metadata carries the kpt-merge comment.
  const fetched =
    "apiVersion: v1\nkind: ConfigMap\nmetadata: # kpt-merge: default/app\n  name: app\n  annotations:\n    internal.kpt.dev/upstream-identifier: '|ConfigMap|default|app'\ndata:\n  a: b\n"
  for (const text of [repository, cluster, kptfile, fetched]) {
    expect(readPlainDocument(text)).toBeDefined()
    expect(documentShape(parseYamlDocument(text))).toEqual(documentShape(parseYamlDocumentWithLibrary(text, 'input')))
  }
  // A comment, a blank line or a null: the library's.
  for (const text of ['a: b # c\n', 'a: b\n\nc: d\n', 'a:\nb: c\n', 'a: b\n  c\n', '# c\na: b\n', 'a: #\n  b: c\n'])
    expect(readPlainDocument(text)).toBeUndefined()
})
