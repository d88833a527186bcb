/**
 * package-variant (context, pipeline prepend, injection) over a 100-resource
 * list: in-process against a bare YAML round trip, and as a process (what kpt
 * runs) against an empty Node start-up.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseDocument } from 'yaml'
import { parseObjects, runFunction } from '../functions/krm/index.js'
import { packageVariantFunction } from '../functions/package-variant/index.js'
import type { Benchmark } from './harness.js'
import { endpointsSource, packageVariantResourceList } from './fixtures.js'

const input = packageVariantResourceList(99)
const sources = parseObjects(endpointsSource, 'cluster.yaml')
const sourcesFile = join(mkdtempSync(join(tmpdir(), 'kpt-variants-bench-')), 'cluster.yaml')
writeFileSync(sourcesFile, endpointsSource)
const bin = join(resolve(new URL('../..', import.meta.url).pathname), 'bin', 'package-variant')

function spawnOrThrow(command: string, args: string[]): void {
  const run = spawnSync(command, args, { input, encoding: 'utf8' })
  if (run.status !== 0) throw new Error(`${command} failed: ${run.stderr}`)
}

/** Fails the benchmark early if the fixture stops exercising all three mutations. */
function checkFixture(): void {
  const out = runFunction(packageVariantFunction, input, { sources })
  for (const want of ['region: us-east1', 'PackageVariant.blueprint-us-east1.set-labels.0', 'reason: ConfigInjected']) {
    if (out.exitCode !== 0 || !out.output.includes(want))
      throw new Error(`package-variant fixture: output lacks ${want}`)
  }
}

export const benchmarks: Benchmark[] = [
  {
    name: 'package-variant, 100 resources, in-process',
    goal: { maxRatio: 3 },
    setup: checkFixture,
    run: () => runFunction(packageVariantFunction, input, { sources }),
    baseline: { name: 'yaml parseDocument + toString', run: () => parseDocument(input).toString() },
  },
  {
    name: 'bin/package-variant, 100 resources, as a process',
    goal: { maxMs: 250 },
    iterations: 15,
    run: () => spawnOrThrow(bin, ['--sources', sourcesFile]),
    baseline: { name: 'node -e "" (Node start-up alone)', run: () => spawnOrThrow(process.execPath, ['-e', '']) },
  },
]
