/**
 * The SDK's round trip (ResourceList.parse, then toString) of 100, 1,000 and
 * 10,000 resources against the floor any YAML tool pays: a bare `yaml`
 * parseDocument and toString of the same text. Goal: within 3 times the floor
 * (the lazy item reader parses an item only when a function reads it, so a
 * pass-through is usually far below it).
 */
import { parseDocument } from 'yaml'
import { ResourceList } from '../functions/krm/index.js'
import type { Benchmark } from './harness.js'
import { packageResourceList } from './fixtures.js'

export const benchmarks: Benchmark[] = [100, 1000, 10_000].map((n) => {
  const input = packageResourceList(n)
  return {
    name: `SDK round trip of ${n.toLocaleString('en-US')} resources (ResourceList.parse + toString)`,
    goal: { maxRatio: 3 },
    ...(n >= 10_000 ? { iterations: 3 } : {}),
    run: () => {
      if (ResourceList.parse(input).toString().length === 0) throw new Error('empty output')
    },
    baseline: { name: 'yaml parseDocument + toString (the floor)', run: () => parseDocument(input).toString() },
  }
})
