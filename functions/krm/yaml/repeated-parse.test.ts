import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { visit } from 'yaml'
import type { Document } from 'yaml'
import { cloneDocument, parseRepeatedYamlDocument } from './repeated-parse.js'
import { parseYamlDocument, stringifyYamlDocument } from './documents.js'
import { setFastPathsOff } from '../fast-paths.js'

// This suite tests the fast path itself: on, whatever KPT_VARIANTS_NO_FAST_PATHS says (the oracle run).
beforeAll(() => setFastPathsOff([]))

const repo = join(new URL('.', import.meta.url).pathname, '..', '..', '..')
/** Every YAML document of the repository that parses: examples, fleets, fixtures, with every comment and style they hold. */
const texts = execFileSync('git', ['ls-files', '*.yaml', '*.yml'], { cwd: repo, encoding: 'utf8' })
  .split('\n')
  .filter(Boolean)
  .map((file) => readFileSync(join(repo, file), 'utf8'))
  .filter((text) => {
    try {
      parseYamlDocument(text)
      return true
    } catch {
      return false
    }
  })

/** A document's nodes and fields, for comparing two documents that must be equal but share nothing. */
function nodesOf(doc: Document): object[] {
  const nodes: object[] = []
  visit(doc, (_, node) => void nodes.push(node as object))
  return nodes
}

describe('parseRepeatedYamlDocument', () => {
  test('a clone prints as the parse, node for node, and shares no node or range with it', () => {
    expect(texts.length).toBeGreaterThan(100)
    for (const text of texts) {
      const parsed = parseYamlDocument(text)
      const clone = cloneDocument(parsed)
      expect(stringifyYamlDocument(clone)).toBe(stringifyYamlDocument(parsed))
      expect(clone.toJS()).toEqual(parsed.toJS())
      const [a, b] = [nodesOf(parsed), nodesOf(clone)]
      expect(b.length).toBe(a.length)
      a.forEach((node, i) => {
        expect(b[i]).not.toBe(node)
        expect(Object.getPrototypeOf(b[i])).toBe(Object.getPrototypeOf(node))
        const range = (node as { range?: number[] }).range
        if (range) {
          expect((b[i] as { range: number[] }).range).toEqual(range)
          expect((b[i] as { range: number[] }).range).not.toBe(range)
        }
      })
    }
  })

  test('the same text parsed again and again: each caller edits its own document', () => {
    const text = '- apiVersion: v1\n  kind: ConfigMap\n  metadata: # the name\n    name: a\n  data: {x: "1"}\n'
    const docs = [0, 1, 2, 3].map(() => parseRepeatedYamlDocument(text, 'test'))
    docs.forEach((doc, i) => doc.setIn([0, 'data', 'x'], String(i)))
    expect(docs.map((doc) => doc.getIn([0, 'data', 'x']))).toEqual(['0', '1', '2', '3'])
    expect(stringifyYamlDocument(parseRepeatedYamlDocument(text, 'test'))).toBe(
      stringifyYamlDocument(parseYamlDocument(text)),
    )
  })

  test('a text that does not parse throws every time', () => {
    for (let i = 0; i < 3; i++) expect(() => parseRepeatedYamlDocument('a: [\n', 'bad.yaml')).toThrow('bad.yaml')
  })

  test('the check runs on each parse until the text passes it; its clones are not checked again', () => {
    const text = '- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: checked-once\n'
    const checked: string[] = []
    const check = (doc: Document.Parsed) => void checked.push(stringifyYamlDocument(doc))
    for (let i = 0; i < 4; i++) expect(stringifyYamlDocument(parseRepeatedYamlDocument(text, 'test', check))).toBe(text)
    // The first parse (not kept) and the second (kept, then cloned): twice, whatever the number of calls.
    expect(checked).toEqual([text, text])
  })

  test('a text that fails its check fails every time: it is never kept for cloning', () => {
    const text = '- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: refused\n'
    const check = (doc: Document.Parsed) => {
      if (doc.getIn([0, 'metadata', 'name']) === 'refused') throw new Error('refused by the check')
    }
    for (let i = 0; i < 4; i++)
      expect(() => parseRepeatedYamlDocument(text, 'test', check)).toThrow('refused by the check')
  })

  test("a clone has the document fields of yaml's own clone, and shares only the schema", () => {
    const parsed = parseYamlDocument('%YAML 1.2\n--- # head\na: 1\n# foot\n')
    const [ours, theirs] = [cloneDocument(parsed), parsed.clone()]
    for (const field of ['commentBefore', 'comment', 'errors', 'warnings', 'options', 'range'] as const)
      expect(ours[field]).toEqual(theirs[field])
    expect(ours.directives).toEqual(theirs.directives)
    expect(ours.directives).not.toBe(parsed.directives)
    expect(ours.options).not.toBe(parsed.options)
    expect(ours.schema).toBe(parsed.schema)
    expect(stringifyYamlDocument(ours)).toBe(stringifyYamlDocument(theirs))
  })
})
