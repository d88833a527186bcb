/**
 * package-context over a 100-resource list: in-process against a bare YAML round
 * trip, and as a process (what kpt runs) against an empty Node start-up.
 */
import { spawnSync } from 'node:child_process'
import { join, resolve } from 'node:path'
import { parseDocument } from 'yaml'
import { runFunction } from '../functions/krm/index.js'
import { packageContextFunction } from '../functions/package-context/index.js'
import type { Benchmark } from './harness.js'
import { packageContextConfig, packageResourceList } from './fixtures.js'

const input = packageResourceList(100, packageContextConfig)
const bin = join(resolve(new URL('../..', import.meta.url).pathname), 'bin', 'package-context')

function spawnOrThrow(command: string, args: string[]): void {
  const run = spawnSync(command, args, { input, encoding: 'utf8' })
  if (run.status !== 0) throw new Error(`${command} failed: ${run.stderr}`)
}

export const benchmarks: Benchmark[] = [
  {
    name: 'package-context, 100 resources, in-process',
    goal: { maxRatio: 3 },
    run: () => runFunction(packageContextFunction, input),
    baseline: { name: 'yaml parseDocument + toString', run: () => parseDocument(input).toString() },
  },
  {
    name: 'bin/package-context, 100 resources, as a process',
    goal: { maxMs: 250 },
    iterations: 15,
    run: () => spawnOrThrow(bin, []),
    baseline: { name: 'node -e "" (Node start-up alone)', run: () => spawnOrThrow(process.execPath, ['-e', '']) },
  },
]
