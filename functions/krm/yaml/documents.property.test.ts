/** Property: any kpt-style YAML text survives parse + print unchanged. */
import fc from 'fast-check'
import { parseYamlDocument, parseYamlDocuments, stringifyYamlDocument, stringifyYamlDocuments } from './documents.js'
import { propertyRuns } from '../../../test/support/property-runs.js'

type Scalar = { kind: 'scalar'; text: string }
type MapNode = { kind: 'map'; entries: { key: string; head?: string; comment?: string; value: Tree }[] }
type SeqNode = { kind: 'seq'; items: { comment?: string; value: Scalar | MapNode }[] }
type Tree = Scalar | MapNode | SeqNode

const word = fc.stringMatching(/^[a-z][a-z0-9-]{0,7}$/)
const comment = fc.stringMatching(/^[a-zA-Z0-9 :/.-]{0,20}$/).map((c) => `# ${c}`.trimEnd())
const scalarText = fc.oneof(
  word,
  fc.integer({ min: -1000, max: 100000 }).map(String),
  fc.constantFrom(
    'true',
    'false',
    'null',
    '"yes"',
    "'0755'",
    '"nginx:1.25"',
    "'it''s'",
    '0755',
    '1e3',
    '0xFF',
    '~',
    '""',
  ),
  fc.stringMatching(/^[a-z ]{1,12}$/).map((s) => JSON.stringify(s)),
)
const scalar: fc.Arbitrary<Scalar> = scalarText.map((text) => ({ kind: 'scalar', text }))

const tree = fc.letrec<{ map: MapNode; seq: SeqNode; value: Tree }>((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, tie('map'), tie('seq')),
  map: fc
    .uniqueArray(
      fc.record({
        key: word,
        head: fc.option(comment, { nil: undefined }),
        comment: fc.option(comment, { nil: undefined }),
        value: tie('value'),
      }),
      {
        minLength: 1,
        maxLength: 4,
        selector: (e) => e.key,
      },
    )
    .map((entries) => ({ kind: 'map' as const, entries })),
  seq: fc
    .array(
      fc.record({
        comment: fc.option(comment, { nil: undefined }),
        value: fc.oneof<fc.Arbitrary<Scalar | MapNode>[]>(scalar, tie('map')),
      }),
      { minLength: 1, maxLength: 3 },
    )
    .map((items) => ({ kind: 'seq' as const, items })),
}))

/** Prints a tree the way kpt (go-yaml) writes block YAML. */
function print(node: MapNode, indent: number, firstInline = false): string[] {
  const pad = ' '.repeat(indent)
  const lines: string[] = []
  node.entries.forEach((entry, i) => {
    const lead = firstInline && i === 0 ? '' : pad
    if (entry.head && !(firstInline && i === 0)) lines.push(`${pad}${entry.head}`)
    const c = entry.comment ? ` ${entry.comment}` : ''
    const v = entry.value
    if (v.kind === 'scalar') lines.push(`${lead}${entry.key}: ${v.text}${c}`)
    else if (v.kind === 'map') lines.push(`${lead}${entry.key}:${c}`, ...print(v, indent + 2))
    else lines.push(`${lead}${entry.key}:${c}`, ...printSeq(v, indent))
  })
  return lines
}

function printSeq(node: SeqNode, indent: number): string[] {
  const pad = ' '.repeat(indent)
  const lines: string[] = []
  for (const item of node.items) {
    const v = item.value
    if (v.kind === 'scalar') {
      lines.push(`${pad}- ${v.text}${item.comment ? ` ${item.comment}` : ''}`)
    } else if (item.comment) {
      lines.push(`${pad}- ${item.comment}`, ...print(v, indent + 2))
    } else {
      const [first, ...rest] = print(v, indent + 2, true)
      lines.push(`${pad}- ${first}`, ...rest)
    }
  }
  return lines
}

const documentText = tree.value.map((t) => {
  const root: MapNode = t.kind === 'map' ? t : { kind: 'map', entries: [{ key: 'root', value: t }] }
  return `${print(root, 0).join('\n')}\n`
})

describe('YAML round trip (property)', () => {
  test('a generated document prints back byte for byte', () => {
    fc.assert(
      fc.property(documentText, (text) => {
        expect(stringifyYamlDocument(parseYamlDocument(text))).toBe(text)
      }),
      { numRuns: propertyRuns(200) },
    )
  })

  test('a multi-document file prints back byte for byte', () => {
    fc.assert(
      fc.property(fc.array(documentText, { minLength: 2, maxLength: 4 }), (docs) => {
        const text = docs.join('---\n')
        const printed = stringifyYamlDocuments(parseYamlDocuments(text))
        expect(printed).toBe(text)
      }),
      { numRuns: propertyRuns(80) },
    )
  })
})
