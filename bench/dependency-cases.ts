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
    targets: [
      {
        package: 'p0',
        namespace: '',
        version: packages[0]!.versions[packages[0]!.versions.length > 2 ? 2 : 0]!.version,
      },
    ],
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
    versions: [
      {
        version: '1.0.0',
        provides: [],
        dependencies: i + 1 < n ? [{ type: 'Package', name: `p${i + 1}`, version: '^1', optional: false }] : [],
      },
    ],
  }))
  return input(packages)
}

/** A chain whose last package depends on the first: every package is installed and the cycle reported. */
export function cycle(n: number): PlanInput {
  const packages = Array.from({ length: n }, (_, i): CatalogPackage => ({
    name: `p${i}`,
    versions: [
      {
        version: '1.0.0',
        provides: [],
        dependencies: [{ type: 'Package', name: `p${(i + 1) % n}`, version: '^1', optional: false }],
      },
    ],
  }))
  return input(packages)
}

/**
 * 5,000 packages, 7 versions each: a chain (so the target reaches every
 * package) plus three more edges per package to random higher-numbered
 * packages, ~20,000 edges; the last 700 are installed at 1.0.0, so ranges
 * such as `~1.2` force upgrades that cascade.
 */
export function graph(
  packageCount = 5_000,
  installedCount = 700,
  edgesPerPackage = 4,
): { input: PlanInput; edges: [string, string][] } {
  const random = lcg(42)
  const packages: CatalogPackage[] = []
  const edges: [string, string][] = []
  for (let i = 0; i < packageCount; i++) {
    const deps: Dependency[] = []
    const targets = new Set<number>()
    if (i + 1 < packageCount) targets.add(i + 1)
    while (targets.size < Math.min(edgesPerPackage, packageCount - 1 - i))
      targets.add(i + 1 + Math.floor(random() * (packageCount - 1 - i)))
    for (const j of [...targets].sort((a, b) => a - b)) {
      const range = ranges[Math.floor(random() * ranges.length)]!
      deps.push({ type: 'Package', name: `p${j}`, version: range, optional: false })
      edges.push([range, versions[Math.floor(random() * 6)]!])
    }
    packages.push({
      name: `p${i}`,
      versions: versions.map((version) => ({ version, provides: [], dependencies: deps })),
    })
  }
  const installed = packages
    .filter((_, i) => i >= packageCount - installedCount)
    .map((p) => ({
      name: p.name,
      package: p.name,
      version: '1.0.0',
      namespace: '',
      installedAsDependency: true,
      deleting: false,
    }))
  return { input: input(packages, installed), edges }
}

/**
 * The root package needs p0; each p(i) lists 1.0.0 (needs p(i+1) ^1) and
 * 2.0.0 (needs p(i+1) ^2), and the last package has no 2.0.0: every level
 * tries 2.0.0 first and must fall back to 1.0.0, so the plan installs every
 * package at 1.0.0.
 */
export function fallbackChain(n: number): PlanInput {
  const dep = (i: number, range: string): Dependency[] =>
    i + 1 < n ? [{ type: 'Package', name: `p${i + 1}`, version: range, optional: false }] : []
  const packages = Array.from({ length: n }, (_, i): CatalogPackage => ({
    name: `p${i}`,
    versions: [
      { version: '1.0.0', provides: [], dependencies: dep(i, '^1') },
      ...(i + 1 < n ? [{ version: '2.0.0', provides: [], dependencies: dep(i, '^2') }] : []),
    ],
  }))
  return {
    targets: [
      {
        package: 'root',
        namespace: '',
        version: 'v1.0.0',
        manifest: { provides: [], dependencies: [{ type: 'Package', name: 'p0', version: '', optional: false }] },
      },
    ],
    catalogs: [{ name: 'bench', packages }],
    installed: [],
    clusterAPIs: [],
    policy: { ...defaultDependencyPolicy },
  }
}

/**
 * The input as the ResourceList kpt would send `bin/dependency-check`: a
 * PackageManifest per target with a manifest, a DependencyCheck naming the
 * others, the catalogs and InstalledPackages as items, in kpt's block layout.
 */
export function resourceList(input: PlanInput): string {
  const out = ['apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n']
  // Ranges that YAML would not read as plain strings (`>= 1.1.0, < 3`) are double-quoted.
  const text = (value: string) => (/^[\w^~.][\w.^~+-]*$/.test(value) ? value : JSON.stringify(value))
  const deps = (list: readonly Dependency[], pad: string) =>
    list
      .map((d) =>
        d.type === 'Package'
          ? `${pad}- name: ${d.name}\n${d.version ? `${pad}  version: ${text(d.version)}\n` : ''}`
          : '',
      )
      .join('')
  for (const t of input.targets) {
    if (!t.manifest) continue
    out.push(
      `- apiVersion: kpt-variants.dev/v1alpha1\n  kind: PackageManifest\n  metadata:\n    name: ${t.package}\n    annotations:\n      config.kubernetes.io/local-config: "true"\n      internal.config.kubernetes.io/path: 'package.yaml'\n  spec:\n${t.version ? `    version: ${t.version}\n` : ''}    dependencies:\n${deps(t.manifest.dependencies, '    ')}`,
    )
  }
  input.catalogs.forEach((catalog, i) => {
    out.push(
      `- apiVersion: kpt-variants.dev/v1alpha1\n  kind: PackageCatalog\n  metadata:\n    name: ${catalog.name}\n    annotations:\n      internal.config.kubernetes.io/path: 'catalog-${i}.yaml'\n  spec:\n    packages:\n`,
    )
    for (const p of catalog.packages) {
      out.push(`    - name: ${p.name}\n      versions:\n`)
      for (const v of p.versions)
        out.push(
          `      - version: ${v.version}\n${v.dependencies.length > 0 ? `        dependencies:\n${deps(v.dependencies, '        ')}` : ''}`,
        )
    }
  })
  for (const i of input.installed) {
    out.push(
      `- apiVersion: kpt-variants.dev/v1alpha1\n  kind: InstalledPackage\n  metadata:\n    name: ${i.name}\n    annotations:\n      internal.config.kubernetes.io/path: 'installed/${i.name}.yaml'\n  spec:\n    package: ${i.package}\n    version: ${text(i.version)}\n${i.namespace ? `    namespace: ${i.namespace}\n` : ''}    installedAsDependency: ${i.installedAsDependency}\n`,
    )
  }
  const others = input.targets.filter((t) => !t.manifest)
  if (others.length > 0) {
    out.push(
      'functionConfig:\n  apiVersion: kpt-variants.dev/v1alpha1\n  kind: DependencyCheck\n  metadata:\n    name: bench\n  spec:\n    targets:\n',
    )
    for (const t of others) out.push(`    - package: ${t.package}\n${t.version ? `      version: ${t.version}\n` : ''}`)
  }
  return out.join('')
}
