/** Hostile inputs about the input as a whole: empty, not a ResourceList, keys twice, odd characters. */
import { header, list, configMap } from './build.js'
import type { HostileCase } from './build.js'

export const wholeInputCases: HostileCase[] = [
  // The input as a whole.
  { name: 'empty stdin', input: () => '', expect: 'error', message: /input is empty/ },
  {
    name: 'whitespace and comments only',
    input: () => '\n  \n# nothing\n',
    expect: 'error',
    message: /input is empty|not a ResourceList/,
  },
  { name: 'a YAML scalar', input: () => 'hello\n', expect: 'error', message: /not a ResourceList/ },
  { name: 'a YAML list', input: () => '- a\n- b\n', expect: 'error', message: /not a ResourceList/ },
  {
    name: 'several documents',
    input: (program) => `${list()(program)}---\n${list()(program)}`,
    expect: 'error',
    message: /malformed YAML|ResourceList/,
  },
  {
    name: '`items` as a map',
    input: () => `${header}items: {a: b}\n`,
    expect: 'error',
    message: /`items` must be a list/,
  },
  // One reader for every program: a key twice at the top is an error, as in kpt's go-yaml, never the first or last one silently.
  {
    name: 'two `items` keys',
    input: (program) =>
      `${list()(program)}items:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: second\n`,
    expect: 'error',
    message: /malformed YAML in ResourceList: duplicate key `items`/,
  },
  {
    name: 'two `items` keys, the second one empty',
    input: (program) => `${list()(program)}items: []\n`,
    expect: 'error',
    message: /malformed YAML in ResourceList: duplicate key `items`/,
  },
  {
    name: 'two `functionConfig` keys',
    input: (program) =>
      `${list()(program)}${'functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: second\n'.repeat(program === 'dependency-check' ? 2 : 1)}`,
    expect: 'error',
    message: /malformed YAML in ResourceList: duplicate key `functionConfig`/,
  },
  {
    name: 'two `kind` keys',
    input: (program) => `kind: List\n${list()(program)}`,
    expect: 'error',
    message: /malformed YAML in ResourceList: duplicate key `kind`/,
  },
  {
    name: 'an item that is a string',
    input: () => `${header}items:\n- hello\n`,
    expect: 'error',
    message: /is not an object/,
  },
  {
    name: 'truncated stdin',
    input: (program) => list(configMap('  data:\n    a: "abc def'))(program).slice(0, -1),
    expect: 'any',
  },
  { name: 'truncated in the middle of a key', input: (program) => `${list()(program).slice(0, 400)}`, expect: 'any' },
  {
    name: 'binary stdin',
    input: () => Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256)),
    expect: 'error',
    message: /not valid UTF-8/,
    process: true,
  },
  {
    name: 'a NUL byte',
    input: (program) => list(configMap('  data:\n    a: "x\0y"\n'))(program),
    expect: 'error',
    message: /NUL character/,
  },
  { name: 'a byte-order mark', input: (program) => `\ufeff${list()(program)}`, expect: 'any' },
  { name: 'CRLF line ends', input: (program) => list()(program).replace(/\n/g, '\r\n'), expect: 'any' },
  {
    name: 'mixed CRLF and LF',
    input: (program) => list()(program).replace(/name: pkg\n/, 'name: pkg\r\n'),
    expect: 'any',
  },
  {
    name: 'a tab in indentation',
    input: list(configMap('  data:\n\ta: x\n')),
    expect: 'error',
    message: /malformed YAML/,
  },
  {
    name: 'control characters and line separators',
    input: list(configMap('  data:\n    a: "\\u0007\\u2028\\u0085"\n    b: x\u2028y\n')),
    expect: 'any',
  },
]
