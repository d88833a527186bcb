/**
 * Each PackageVariant function on a 50-resource package, as `kpt fn render`
 * gives it: in-process against the bare `yaml` parse and print of the same
 * list (goal: within 3 times that floor), and as a process (what kpt runs)
 * against an empty Node start-up. fan-out and dependency-check have their own
 * benchmarks at fleet scale.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseDocument } from 'yaml'
import { configInjectionFunction } from '../functions/config-injection/index.js'
import { parseObjects, runFunction } from '../functions/krm/index.js'
import type { KrmFunction } from '../functions/krm/index.js'
import { packageContextFunction } from '../functions/package-context/index.js'
import { packageVariantFunction } from '../functions/package-variant/index.js'
import { pipelinePrependFunction } from '../functions/pipeline-prepend/index.js'
import type { Benchmark } from './harness.js'
import { endpointsSource, packageContextConfig, packageResourceList, packageVariantResourceList } from './fixtures.js'

export const resources = 50
// The Kptfile, the package context and the injection point count among the resources.
const withPackageVariant = packageVariantResourceList(resources - 3)
const sources = parseObjects(endpointsSource, 'cluster.yaml')
export const sourcesFile = join(mkdtempSync(join(tmpdir(), 'kpt-variants-bench-')), 'cluster.yaml')
writeFileSync(sourcesFile, endpointsSource)
const root = resolve(new URL('../..', import.meta.url).pathname)

/** Each function's 50-resource input and a line its output must hold; the image benchmark runs the same. */
export const functionCases: { fn: KrmFunction; input: string; expect: string; sources: boolean }[] = [
  {
    fn: packageContextFunction,
    input: packageResourceList(resources - 2, packageContextConfig),
    expect: 'tier: gold',
    sources: false,
  },
  {
    fn: pipelinePrependFunction,
    input: withPackageVariant,
    expect: 'PackageVariant.blueprint-us-east1.set-labels.0',
    sources: false,
  },
  { fn: configInjectionFunction, input: withPackageVariant, expect: 'reason: ConfigInjected', sources: true },
  { fn: packageVariantFunction, input: withPackageVariant, expect: 'reason: ConfigInjected', sources: true },
]

export function spawnOrThrow(command: string, args: string[], input: string): void {
  const run = spawnSync(command, args, { input, encoding: 'utf8' })
  if (run.status !== 0) throw new Error(`${command} failed: ${run.stderr}`)
}

export const benchmarks: Benchmark[] = functionCases.flatMap(
  ({ fn, input, expect, sources: needsSources }): Benchmark[] => {
    const options = needsSources ? { sources } : {}
    const bin = join(root, 'bin', fn.name)
    return [
      {
        name: `${fn.name}, ${resources} resources, in-process`,
        goal: { maxRatio: 3 },
        // Fails early if the fixture stops exercising the function.
        setup() {
          const out = runFunction(fn, input, options)
          if (out.exitCode !== 0 || !out.output.includes(expect))
            throw new Error(`${fn.name} fixture: output lacks ${expect}`)
        },
        run: () => runFunction(fn, input, options),
        baseline: { name: 'yaml parseDocument + toString (the floor)', run: () => parseDocument(input).toString() },
      },
      {
        name: `bin/${fn.name}, ${resources} resources, as a process`,
        goal: { maxMs: 250 },
        iterations: 15,
        run: () => spawnOrThrow(bin, needsSources ? ['--sources', sourcesFile] : [], input),
        baseline: {
          name: 'node -e "" (Node start-up alone)',
          run: () => spawnOrThrow(process.execPath, ['-e', ''], input),
        },
      },
    ]
  },
)
