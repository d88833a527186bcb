/** Hostile inputs: malformed YAML, aliases and nesting. */
import { fastPath } from '../../../functions/krm/fast-paths.js'
import { list, configMap } from './build.js'
import type { HostileCase } from './build.js'

const aliasBomb = (indent: string) =>
  [
    'a: &a [x, x, x, x, x, x, x, x, x, x]',
    ...'bcdefgh'.split('').map((c, i) => `${c}: &${c} [${Array(10).fill(`*${'abcdefgh'[i]}`).join(', ')}]`),
  ]
    .map((line) => `${indent}${line}\n`)
    .join('')

// Items kept as text (the YAML fast path) are parsed one by one, so a syntax error names its item; the library
// alone parses the whole list and names the line and column, and the item only where the list still parsed
// (KPT_VARIANTS_NO_FAST_PATHS=yaml, the oracle run).
const malformed = fastPath('yaml')
  ? /malformed YAML in ResourceList items\[5\]/
  : /malformed YAML in ResourceList( items\[5\])?:\d+:\d+: /

export const yamlSyntaxCases: HostileCase[] = [
  // Malformed YAML inside an item: never printed back verbatim.
  {
    name: 'an unclosed flow mapping in an item',
    input: list(configMap('  data: {a: 1\n')),
    expect: 'error',
    message: malformed,
  },
  {
    name: 'a truncated quoted scalar in an item',
    input: list(configMap('  data:\n    a: "abc\n')),
    expect: 'error',
    message: malformed,
  },
  {
    name: 'an implicit key over 1,024 characters',
    input: list(configMap(`  data:\n    ${'k'.repeat(1100)}: x\n`)),
    expect: 'error',
    message: malformed,
  },
  {
    name: 'a duplicate key in an item',
    input: list(configMap('  data:\n    a: x\n    a: y\n')),
    expect: 'error',
    message: /items\[5\] \(ConfigMap\/shop\/bad\): duplicate key `data.a`/,
  },
  {
    name: 'a duplicate metadata key',
    input: list('- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n    name: b\n'),
    expect: 'error',
    message: /duplicate key `metadata.name`/,
  },
  // Aliases.
  {
    name: 'an alias before its anchor in an item',
    input: list(configMap('  data:\n    a: *x\n    b: &x y\n')),
    expect: 'error',
    message: /items\[5\].*Unresolved alias/,
  },
  {
    name: 'an alias bomb in an item',
    input: list(configMap(`  data:\n${aliasBomb('    ')}`)),
    expect: 'error',
    message: /items\[5\].*Excessive alias count/,
    process: true,
  },
  {
    name: 'an alias bomb in the functionConfig',
    input: list(
      '',
      `functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: fc\n  data:\n${aliasBomb('    ')}`,
    ),
    expect: 'error',
    message: /functionConfig.*Excessive alias count/,
  },
  {
    name: 'an alias before its anchor in the functionConfig',
    input: list('', 'functionConfig:\n  kind: *k\n  apiVersion: &k v1\n'),
    expect: 'error',
    message: /functionConfig.*Unresolved alias/,
  },
  {
    name: 'a duplicate key in the functionConfig',
    input: list('', 'functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  kind: Secret\n'),
    expect: 'error',
    message: /functionConfig: duplicate key `kind`/,
  },
  { name: 'benign anchors and aliases', input: list(configMap('  data:\n    a: &x y\n    b: *x\n')), expect: 'any' },
  // Nesting.
  {
    name: 'a flow collection 100,000 deep',
    input: list(configMap(`  data:\n    x: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`)),
    expect: 'error',
    message: /nested deeper than 500 levels/,
    process: true,
  },
  {
    name: 'a flow collection 100,000 deep, never closed',
    input: list(configMap(`  data:\n    x: ${'{a: '.repeat(100_000)}\n`)),
    expect: 'error',
    message: /nested deeper than 500 levels/,
  },
  {
    name: 'block sequences 10,000 deep',
    input: list(configMap(`  data:\n    x:\n    ${'- '.repeat(10_000)}x\n`)),
    expect: 'error',
    message: /nested deeper than 500 levels/,
  },
  {
    name: 'a functionConfig 100,000 deep',
    input: list('', `functionConfig: ${'['.repeat(100_000)}\n`),
    expect: 'error',
    message: /nested deeper than 500 levels/,
  },
]
