/**
 * The catalog index (versions parsed once, sorted once, GVK providers) and the
 * graph algorithms the planner uses: DFS with a recursion stack for cycles
 * (Crossplane's `detected cycle on: <id>`) and dependencies-first order.
 */
import type { CatalogVersion, GVK, InstallationType } from '../api/dependencies.js'
import type { PlanCatalog } from './plan.js'
import { compareVersions, parseVersion, versionKey } from './versions.js'
import type { Version } from './versions.js'

/** A catalog version with its parsed version. */
export interface IndexedVersion {
  version: Version
  spec: CatalogVersion
}

/** One package, merged over every catalog. */
export interface IndexedPackage {
  name: string
  /** Position in the merged catalog order (catalogs by name, then listed order). */
  order: number
  latestVersion?: string
  installationType?: InstallationType
  /** Ascending by `compareVersions`. */
  versions: IndexedVersion[]
  byKey: Map<string, IndexedVersion>
}

/** A catalog version string that does not parse. */
export interface CatalogProblem {
  package: string
  version: string
  catalog: string
}

/** The merged, parsed catalog. */
export interface CatalogIndex {
  packages: Map<string, IndexedPackage>
  /** GVK key → provider package names, in catalog order. */
  providers: Map<string, string[]>
  problems: CatalogProblem[]
}

/** `apiVersion/kind` (core: `v1/ConfigMap`). */
export function gvkKey(gvk: GVK): string {
  return `${gvk.apiVersion}/${gvk.kind}`
}

/**
 * Merges catalogs by package name: catalogs in `name` order (so input order
 * does not matter), the first one to list a version wins it. Versions that do
 * not parse are skipped and reported (Glasskube's pre-graph behaviour) instead
 * of failing the whole package (its graph manager) or everything.
 * Incomplete versions (`v1`) are coerced and flagged; the policy decides later.
 */
export function indexCatalogs(catalogs: readonly PlanCatalog[]): CatalogIndex {
  const packages = new Map<string, IndexedPackage>()
  const problems: CatalogProblem[] = []
  const sorted = [...catalogs].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  for (const catalog of sorted) {
    for (const pkg of catalog.packages) {
      let entry = packages.get(pkg.name)
      if (!entry) {
        entry = { name: pkg.name, order: packages.size, versions: [], byKey: new Map() }
        packages.set(pkg.name, entry)
      }
      if (entry.latestVersion === undefined && pkg.latestVersion) entry.latestVersion = pkg.latestVersion
      if (entry.installationType === undefined && pkg.installationType) entry.installationType = pkg.installationType
      for (const spec of pkg.versions) {
        const version = parseVersion(spec.version, { coerce: true })
        if (!version || version.digest) {
          problems.push({ package: pkg.name, version: spec.version, catalog: catalog.name })
          continue
        }
        const key = versionKey(version)
        if (entry.byKey.has(key)) continue
        const indexed = { version, spec }
        entry.byKey.set(key, indexed)
        entry.versions.push(indexed)
      }
    }
  }
  const providers = new Map<string, string[]>()
  for (const entry of packages.values()) {
    entry.versions.sort((a, b) => compareVersions(a.version, b.version))
    const seen = new Set<string>()
    for (const v of entry.versions) {
      for (const gvk of v.spec.provides) {
        const key = gvkKey(gvk)
        if (seen.has(key)) continue
        seen.add(key)
        const list = providers.get(key)
        if (list) list.push(entry.name)
        else providers.set(key, [entry.name])
      }
    }
  }
  return { packages, providers, problems }
}

/** The catalog version equal to `version` (build metadata included), if listed. */
export function findVersion(entry: IndexedPackage | undefined, version: Version): IndexedVersion | undefined {
  return entry?.byKey.get(versionKey(version))
}

/** A back edge found by `findCycles`: `path` runs from `on` back to `on`. */
export interface Cycle {
  on: string
  from: string
  path: string[]
}

/**
 * DFS over `ids` (visited in the given order; edges in their listed order)
 * with a recursion stack. Returns every back edge as a cycle, and the
 * post-order (dependencies first) of all nodes.
 */
export function walkGraph(ids: readonly string[], edges: (id: string) => readonly string[]): { cycles: Cycle[]; order: string[] } {
  const state = new Map<string, 1 | 2>() // 1 = on the stack, 2 = done
  const order: string[] = []
  const cycles: Cycle[] = []
  const stack: string[] = []
  for (const root of ids) {
    if (state.has(root)) continue
    // Iterative DFS: deep dependency chains must not overflow the call stack.
    const frames: { id: string; next: number; out: readonly string[] }[] = [{ id: root, next: 0, out: edges(root) }]
    state.set(root, 1)
    stack.push(root)
    while (frames.length > 0) {
      const frame = frames[frames.length - 1]!
      if (frame.next < frame.out.length) {
        const to = frame.out[frame.next++]!
        const s = state.get(to)
        if (s === undefined) {
          state.set(to, 1)
          stack.push(to)
          frames.push({ id: to, next: 0, out: edges(to) })
        } else if (s === 1) {
          cycles.push({ on: to, from: frame.id, path: [...stack.slice(stack.indexOf(to)), to] })
        }
        continue
      }
      frames.pop()
      stack.pop()
      state.set(frame.id, 2)
      order.push(frame.id)
    }
  }
  return { cycles, order }
}
