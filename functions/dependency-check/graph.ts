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
  /** Versions by `versionKey`, made once a package lists more than a few (a scan finds one among a few faster than a map is made). */
  byKey?: Map<string, IndexedVersion>
}

const scanned = 8

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
 * Digests (`sha256:…`) are versions too, sorted before every semver version;
 * only a constraint that names one installs it (candidates.ts, the model).
 */
export function indexCatalogs(catalogs: readonly PlanCatalog[]): CatalogIndex {
  const packages = new Map<string, IndexedPackage>()
  const problems: CatalogProblem[] = []
  const sorted = [...catalogs].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  for (const catalog of sorted) {
    for (const pkg of catalog.packages) {
      let entry = packages.get(pkg.name)
      if (!entry) {
        entry = { name: pkg.name, order: packages.size, versions: [] }
        packages.set(pkg.name, entry)
      }
      if (entry.latestVersion === undefined && pkg.latestVersion) entry.latestVersion = pkg.latestVersion
      if (entry.installationType === undefined && pkg.installationType) entry.installationType = pkg.installationType
      for (const spec of pkg.versions) {
        const version = parseVersion(spec.version, { coerce: true })
        if (!version) {
          problems.push({ package: pkg.name, version: spec.version, catalog: catalog.name })
          continue
        }
        const key = versionKey(version)
        if (entry.versions.length > 0 && withKey(entry, key)) continue
        const indexed = { version, spec }
        // Made by its first version, not grown from an empty list (see append.ts): most packages list a few.
        if (entry.versions.length === 0) entry.versions = [indexed]
        else entry.versions.push(indexed)
        if (entry.byKey) entry.byKey.set(key, indexed)
        else if (entry.versions.length > scanned)
          entry.byKey = new Map(entry.versions.map((v) => [versionKey(v.version), v]))
      }
    }
  }
  const providers = new Map<string, string[]>()
  for (const entry of packages.values()) {
    if (entry.versions.length > 1) entry.versions.sort(byVersion)
    let seen: Set<string> | undefined
    for (const v of entry.versions) {
      if (v.spec.provides.length === 0) continue
      seen ??= new Set()
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
  return entry && withKey(entry, versionKey(version))
}

function byVersion(a: IndexedVersion, b: IndexedVersion): number {
  return compareVersions(a.version, b.version)
}

function withKey(entry: IndexedPackage, key: string): IndexedVersion | undefined {
  if (entry.byKey) return entry.byKey.get(key)
  return entry.versions.find((v) => versionKey(v.version) === key)
}

/** A back edge found by `walkGraph`: `path` runs from `on` back to `on`. */
export interface Cycle<T = string> {
  on: T
  from: T
  path: T[]
}

/**
 * DFS over nodes `0 … count-1` from `roots` (visited in the given order;
 * edges in their listed order, each leading to `target(edge)`) with a
 * recursion stack. Returns every back edge as a cycle, and the post-order
 * (dependencies first) of the nodes reached. Nodes are numbers so that the
 * walk's state is an array: the planner's report and the solver's cycle check
 * walk tens of thousands of them.
 */
export function walkGraph<E>(
  count: number,
  roots: Iterable<number>,
  edges: (node: number) => readonly E[],
  target: (edge: E) => number,
): { cycles: Cycle<number>[]; order: number[] } {
  const state = new Uint8Array(count) // 0 = new, 1 = on the stack, 2 = done
  const order: number[] = []
  const cycles: Cycle<number>[] = []
  const stack: number[] = []
  // Iterative: deep dependency chains must not overflow the call stack.
  const frames: { node: number; next: number; out: readonly E[] }[] = []
  for (const root of roots) {
    if (state[root] !== 0) continue
    frames.push({ node: root, next: 0, out: edges(root) })
    state[root] = 1
    stack.push(root)
    while (frames.length > 0) {
      const frame = frames[frames.length - 1]!
      if (frame.next < frame.out.length) {
        const to = target(frame.out[frame.next++]!)
        if (state[to] === 0) {
          state[to] = 1
          stack.push(to)
          frames.push({ node: to, next: 0, out: edges(to) })
        } else if (state[to] === 1) {
          cycles.push({ on: to, from: frame.node, path: [...stack.slice(stack.lastIndexOf(to)), to] })
        }
        continue
      }
      frames.pop()
      stack.pop()
      state[frame.node] = 2
      order.push(frame.node)
    }
  }
  return { cycles, order }
}
