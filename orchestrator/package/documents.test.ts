import { isEmptyDocument } from './documents.js'

describe('isEmptyDocument', () => {
  test.each([
    ['nothing', ''],
    ['blank lines', '\n  \n\t\n'],
    ['comments', '# a\n  # b\n'],
    ['comments with CRLF line ends', '# a\r\n# b\r\n'],
    ['a document end marker', '# a\n...\n'],
  ])('%s: empty', (_name, text) => expect(isEmptyDocument(text)).toBe(true))

  test.each([
    ['a key', '# a\nkind: A\n'],
    ['content after many comments', `${'# c\n'.repeat(50)}x\n`],
    ['an indented `...` (a plain scalar, not a marker)', ' ...\n'],
    ['a marker followed by text', '...x\n'],
  ])('%s: not empty', (_name, text) => expect(isEmptyDocument(text)).toBe(false))
})
