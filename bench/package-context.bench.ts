/** package-context over a 100-resource list, in-process, against a bare YAML round trip. */
import { parseDocument } from 'yaml'
import { runFunction } from '../functions/krm/index.js'
import { packageContextFunction } from '../functions/package-context/index.js'
import type { Benchmark } from './harness.js'
import { packageResourceList } from './fixtures.js'

const input = packageResourceList(
  100,
  `functionConfig:
  apiVersion: v1
  kind: ConfigMap
  metadata:
    name: function-input
  data:
    region: us-east1
    tier: gold`,
)

export const benchmarks: Benchmark[] = [
  {
    name: 'package-context, 100 resources, in-process',
    run: () => runFunction(packageContextFunction, input),
    baseline: { name: 'yaml parseDocument + toString', run: () => parseDocument(input).toString() },
  },
]
