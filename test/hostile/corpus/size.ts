/** Hostile inputs: sheer size. */
import { list, configMap } from './build.js'
import type { HostileCase } from './build.js'

export const sizeCases: HostileCase[] = [
  // Size.
  {
    name: 'a 5 MB scalar',
    input: list(configMap(`  data:\n    big: ${'x'.repeat(5_000_000)}\n`)),
    expect: 'any',
    process: true,
  },
  {
    name: 'a 100,000-character name',
    input: list(`- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: ${'n'.repeat(100_000)}\n`),
    expect: 'any',
  },
  {
    name: 'a 100,000-character annotation key',
    input: list(
      `- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: bad\n    annotations:\n      ${'k'.repeat(100_000)}: x\n`,
    ),
    expect: 'any',
  },
  {
    name: '10,000 items',
    input: list(
      Array.from(
        { length: 10_000 },
        (_, i) => `- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c${i}\n`,
      ).join(''),
    ),
    expect: 'any',
  },
  {
    name: 'a map of 20,000 keys',
    input: list(configMap(`  data:\n${Array.from({ length: 20_000 }, (_, i) => `    k${i}: v\n`).join('')}`)),
    expect: 'any',
  },
]
