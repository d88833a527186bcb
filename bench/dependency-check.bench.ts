/**
 * dependency-check: resolve a catalog of 5,000 packages whose resolved graph
 * has 20,000 dependency edges (goal < 1 s, DESIGN.md targets), against a
 * same-run baseline that only calls `semver.satisfies` once per edge.
 */
import semver from 'semver'
import { defaultDependencyPolicy } from '../functions/api/dependencies.js'
import type { CatalogPackage, Dependency } from '../functions/api/dependencies.js'
import { planDependencies } from '../functions/dependency-check/index.js'
import type { PlanInput } from '../functions/dependency-check/index.js'
import type { Benchmark } from './harness.js'

const packageCount = 5_000
const installedCount = 700
const edgesPerPackage = 4
const ranges = ['^1', '>= 1.1.0, < 3', '~1.2', '*', '>=1.0.0 <2.0.0 || ^2.1', '!=1.2.1, >=1']
const versions = ['1.0.0', '1.1.0', '1.2.0', '1.2.1+1', '1.2.1+2', '2.1.0', '3.0.0-rc.1']

/** Deterministic pseudo-random numbers (a bench input must not change between runs). */
function lcg(seed: number): () => number {
  let state = seed
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31
    return state / 2 ** 31
  }
}

/**
 * p0 → p1 → … is a chain (so one target reaches every package) plus three
 * more edges per package to random higher-numbered packages: a DAG of 5,000
 * nodes and ~20,000 edges, all reachable from the target. The last 700
 * packages are installed at 1.0.0 (with their dependencies), so ranges such as
 * `~1.2` force upgrades that cascade; the rest is installed by the plan.
 */
function buildInput(): { input: PlanInput; edges: [string, string][] } {
  const random = lcg(42)
  const packages: CatalogPackage[] = []
  const edges: [string, string][] = []
  for (let i = 0; i < packageCount; i++) {
    const deps: Dependency[] = []
    const targets = new Set<number>()
    if (i + 1 < packageCount) targets.add(i + 1)
    while (targets.size < Math.min(edgesPerPackage, packageCount - 1 - i)) targets.add(i + 1 + Math.floor(random() * (packageCount - 1 - i)))
    for (const j of [...targets].sort((a, b) => a - b)) {
      const range = ranges[Math.floor(random() * ranges.length)]!
      deps.push({ type: 'Package', name: `p${j}`, version: range, optional: false })
      edges.push([range, versions[Math.floor(random() * 6)]!])
    }
    packages.push({ name: `p${i}`, versions: versions.map((version) => ({ version, provides: [], dependencies: deps })) })
  }
  const installed = packages
    .filter((_, i) => i >= packageCount - installedCount)
    .map((p) => ({ name: p.name, package: p.name, version: '1.0.0', namespace: '', installedAsDependency: true, deleting: false }))
  const input: PlanInput = {
    targets: [{ package: 'p0', namespace: '', version: '1.2.0' }],
    catalogs: [{ name: 'bench', packages }],
    installed,
    clusterAPIs: [],
    policy: { ...defaultDependencyPolicy },
  }
  return { input, edges }
}

const built = buildInput()
const npmRanges = built.edges.map(([range, version]) => [range.replace(/,/g, ' ').replace(/!=1\.2\.1/, ''), version] as const)

export const benchmarks: Benchmark[] = [
  {
    name: `dependency-check, ${packageCount} packages, ${built.edges.length} edges, planDependencies`,
    goal: { maxMs: 1000 },
    iterations: 5,
    run: () => {
      const plan = planDependencies(built.input)
      if (plan.install.length + plan.upgrade.length < packageCount / 2) throw new Error(`bench graph not resolved: ${plan.result}, ${plan.install.length} installs`)
      return plan
    },
    baseline: {
      name: `semver.satisfies once per edge (${built.edges.length})`,
      run: () => {
        let n = 0
        for (const [range, version] of npmRanges) if (semver.satisfies(version, range)) n++
        return n
      },
    },
  },
]
