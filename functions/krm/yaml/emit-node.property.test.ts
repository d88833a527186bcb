import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import { Document, isMap, isScalar, isSeq, Pair, parseAllDocuments, Scalar, YAMLMap, YAMLSeq } from 'yaml'
import { printSimpleDocument, printSimpleItem, printSimpleWholeDocument } from './emit-node.js'
import { parseYamlDocument, stringifyWithLibrary } from './documents.js'
import { toNode } from './nodes.js'
import { setFastPathsOff } from '../fast-paths.js'
import { propertyRuns } from '../../../test/support/property-runs.js'

// This suite tests the fast path itself: on, whatever KPT_VARIANTS_NO_FAST_PATHS says (the oracle run).
beforeAll(() => setFastPathsOff([]))

/** Strings around every rule of the library's choice between plain, quoted and folded. */
const text = fc.constantFrom(
  'v1',
  'app',
  'kpt.dev/v1',
  'config.kubernetes.io/local-config',
  'https://example.com/a?b=c',
  '1.0.0',
  'v1.2.3-rc.1',
  'a b c',
  'a, b',
  '../repos/x',
  '.hidden',
  '.nan',
  '(x)',
  'true',
  'True',
  'yes',
  'on',
  'null',
  'Null',
  '~',
  '',
  ' lead',
  'trail ',
  '12',
  '-1',
  '0x1F',
  '0o17',
  '1e3',
  '.5',
  '.inf',
  'a: b',
  'a:',
  'a:b',
  'x #y',
  'x#y',
  '#x',
  '- x',
  '-x',
  '?',
  '@x',
  '%x',
  '*x',
  '&x',
  '!x',
  '|',
  '>',
  "it's",
  'say "hi"',
  'back\\slash',
  'tab\there',
  'two\nlines',
  'é',
  'k'.repeat(1100),
)
/** What most documents hold: names, versions, paths, URLs and sentences. */
const common = fc.oneof(
  fc.stringMatching(/^[a-z][a-z0-9.-]{0,12}$/),
  fc.constantFrom(
    'v1',
    'kpt.dev/v1',
    'config.kubernetes.io/local-config',
    'https://example.com/a',
    '1.0.0',
    'injected resource from cluster',
  ),
)
const key = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom('apiVersion', 'kind', 'metadata', 'name', 'spec', 'data', 'items', 'a.b/c', 'k8s'),
  },
  text,
)
// Mostly common strings: a document is printed fast only when every one of its scalars allows it.
const scalar = fc.oneof(
  { weight: 30, arbitrary: common },
  { weight: 2, arbitrary: text },
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
)
const { value } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(key, tie('value'), { maxKeys: 4 }),
  ),
}))
const documentValue = fc.dictionary(key, value, { minKeys: 1, maxKeys: 5 })

type Counts = { fast: number; all: number }

/** How a printed document is read back as a whole: bare, or with a marker or comments around it. */
const wrappers: ((printed: string) => string)[] = [
  (printed) => printed,
  (printed) => `---\n${printed}`,
  (printed) => `# above\n${printed}`,
  (printed) => `${printed}# below\n`,
  (printed) => `%YAML 1.2\n---\n${printed}`,
]

/**
 * The library's print of the document, and ours where ours applies; counts how
 * often ours did (`whole`: of the documents parsed back, each in the wrappers
 * given: all of them unless the caller picks some).
 */
function compare(doc: Document, counts: Counts, whole: Counts = { fast: 0, all: 0 }, wraps = wrappers): void {
  for (const wide of [false, true]) {
    counts.all++
    const fast = printSimpleDocument(doc.contents, doc.schema, wide)
    if (fast === undefined) continue
    counts.fast++
    expect(fast).toBe(stringifyWithLibrary(doc, { wide }))
  }
  // As a ResourceList item: the map as the one entry of a block sequence...
  counts.all++
  const asItem = new Document()
  asItem.contents = new YAMLSeq()
  asItem.contents.items.push(doc.contents)
  const library = stringifyWithLibrary(asItem)
  const item = printSimpleItem(doc.contents, doc.schema)
  if (item !== undefined) {
    counts.fast++
    expect(item).toBe(library)
  }
  // ...and the object and the item parsed back as whole documents, bare or with a marker or comments around them.
  for (const printed of [stringifyWithLibrary(doc), library]) {
    for (const text of wraps.map((wrap) => wrap(printed))) {
      let parsed: Document
      try {
        parsed = parseYamlDocument(text, 'test')
      } catch {
        continue
      }
      for (const wide of [false, true]) {
        whole.all++
        const fast = printSimpleWholeDocument(parsed, wide)
        if (fast === undefined) continue
        whole.fast++
        expect(fast).toBe(stringifyWithLibrary(parsed, { wide }))
      }
    }
  }
}

/** Puts comments on some nodes, as `choices` says: trailing ones on keys and scalars (printed fast), others (left to the library). */
function decorate(node: unknown, choices: number[], at = { i: 0 }): void {
  const next = () => choices[at.i++ % choices.length]!
  if (isMap(node)) {
    for (const pair of node.items) {
      const choice = next()
      if (isScalar(pair.key) && choice === 0) pair.key.comment = ' kpt-merge: ns/name'
      if (isScalar(pair.key) && choice === 1) pair.key.commentBefore = ' above'
      if (isScalar(pair.value) && choice === 2) pair.value.comment = ' trailing'
      if (isScalar(pair.value) && choice === 3) pair.value.comment = ' '
      decorate(pair.value, choices, at)
    }
  } else if (isSeq(node)) {
    for (const item of node.items) {
      const choice = next()
      if (isScalar(item) && choice === 2) item.comment = 'item'
      if (isMap(item) && choice === 1) item.commentBefore = ' before item'
      decorate(item, choices, at)
    }
  }
}

test('property: a document printed fast is byte for byte what the library prints, built fresh or parsed', () => {
  const counts = { fast: 0, all: 0 }
  const whole = { fast: 0, all: 0 }
  // Each run reads the documents back in one of the wrappers (parsing is most of this test's time).
  const wrapper = fc.constantFrom(...wrappers)
  const runs = propertyRuns(800)
  fc.assert(
    fc.property(
      documentValue,
      fc.array(fc.nat(12), { minLength: 1, maxLength: 40 }),
      wrapper,
      (object, choices, wrap) => {
        // Fresh nodes (what a function builds), as toNode makes them, some with comments...
        const fresh = new Document()
        fresh.contents = toNode(object)
        decorate(fresh.contents, choices)
        compare(fresh, counts, whole, [wrap])
        // ...and the same document parsed back from the library's print (plain and quoted styles as read).
        const printed = stringifyWithLibrary(fresh)
        let parsed: Document
        try {
          parsed = parseYamlDocument(printed, 'test')
        } catch {
          return // the library printed what it cannot read back (some comment placements): nothing to compare
        }
        compare(parsed, counts, whole, [wrap])
      },
    ),
    { numRuns: runs },
  )
  // The fast printer must actually print a good share of these documents, or this test proves nothing.
  expect(counts.fast / counts.all).toBeGreaterThan(0.04)
  // Of the documents parsed back most have a marker or a comment, which the simple printer leaves to the
  // library: about 260 of 23,000 print fast (a share too close to any threshold to test it as one).
  expect(whole.fast).toBeGreaterThan(runs * 0.03)
})

test("every document of the repository's examples prints the same fast as with the library", () => {
  const counts = { fast: 0, all: 0 }
  const yamlFiles = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory()
        ? e.name === 'node_modules'
          ? []
          : yamlFiles(join(dir, e.name))
        : /\.ya?ml$|^Kptfile$/.test(e.name)
          ? [join(dir, e.name)]
          : [],
    )
  for (const file of [...yamlFiles('functions'), ...yamlFiles('examples')]) {
    for (const parsed of parseAllDocuments(readFileSync(file, 'utf8'))) {
      if (!('errors' in parsed) || parsed.errors.length > 0 || parsed.contents === null) continue
      // As KubeObject.toYaml prints an object: its nodes in a document of their own.
      const doc = new Document()
      doc.contents = parsed.contents
      compare(doc, counts)
    }
  }
  expect(counts.fast).toBeGreaterThan(50)
})

// Quoted as the library quotes them (string-style.ts), but for non-ASCII text, which stays the library's.
test('a plain-styled string the library would quote is quoted as the library does, or left to it', () => {
  for (const value of ['a:', 'a: b', 'true', 'null', '12', '0x1F', '1e3', 'x ', 'x #y', '- x', 'é']) {
    const doc = new Document()
    const scalar = new Scalar(value)
    scalar.type = Scalar.PLAIN
    doc.contents = new YAMLMap()
    ;(doc.contents as unknown as YAMLMap).add(new Pair(new Scalar('k'), scalar))
    const fast = printSimpleDocument(doc.contents, doc.schema, false)
    expect([undefined, stringifyWithLibrary(doc)]).toContain(fast)
    if (value === 'é') expect(fast).toBeUndefined()
    else expect(fast).toBe(stringifyWithLibrary(doc))
  }
})
