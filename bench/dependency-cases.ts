/**
 * Inputs for the dependency-check benchmarks, shared by the in-process bench
 * and the child process that measures peak RSS (bench/dependency-process.ts).
 * Deterministic: a bench input must not change between runs.
 */
import { defaultDependencyPolicy } from '../functions/api/dependencies.js'
import type { CatalogPackage, Dependency } from '../functions/api/dependencies.js'
import type { PlanInput } from '../functions/dependency-check/index.js'

const ranges = ['^1', '>= 1.1.0, < 3', '~1.2', '*', '>=1.0.0 <2.0.0 || ^2.1', '!=1.2.1, >=1']
const versions = ['1.0.0', '1.1.0', '1.2.0', '1.2.1+1', '1.2.1+2', '2.1.0', '3.0.0-rc.1']

function lcg(seed: number): () => number {
  let state = seed
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31
    return state / 2 ** 31
  }
}

function input(packages: CatalogPackage[], installed: PlanInput['installed'] = []): PlanInput {
  return {
    targets: [{ package: 'p0', namespace: '', version: packages[0]!.versions[packages[0]!.versions.length > 2 ? 2 : 0]!.version }],
    catalogs: [{ name: 'bench', packages }],
    installed,
    clusterAPIs: [],
    policy: { ...defaultDependencyPolicy },
  }
}

/** p0 → p1 → … → p(n-1), one version each: trivially installable, as deep as it gets. */
export function chain(n: number): PlanInput {
  const packages = Array.from({ length: n }, (_, i): CatalogPackage => ({
    name: `p${i}`,
    versions: [{ version: '1.0.0', provides: [], dependencies: i + 1 < n ? [{ type: 'Package', name: `p${i + 1}`, version: '^1', optional: false }] : [] }],
  }))
  return input(packages)
}

/** A chain whose last package depends on the first: every package is installed and the cycle reported. */
export function cycle(n: number): PlanInput {
  const packages = Array.from({ length: n }, (_, i): CatalogPackage => ({
    name: `p${i}`,
    versions: [{ version: '1.0.0', provides: [], dependencies: [{ type: 'Package', name: `p${(i + 1) % n}`, version: '^1', optional: false }] }],
  }))
  return input(packages)
}

/**
 * 5,000 packages, 7 versions each: a chain (so the target reaches every
 * package) plus three more edges per package to random higher-numbered
 * packages, ~20,000 edges; the last 700 are installed at 1.0.0, so ranges
 * such as `~1.2` force upgrades that cascade.
 */
export function graph(packageCount = 5_000, installedCount = 700, edgesPerPackage = 4): { input: PlanInput; edges: [string, string][] } {
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
  return { input: input(packages, installed), edges }
}
