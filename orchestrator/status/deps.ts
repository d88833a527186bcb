/**
 * `kpt-variants deps`, pure: what a downstream repository holds as a graph of
 * packages (each with its version, how it got there, what it needs and what
 * needs it), and the four questions asked of it: the tree (`npm ls`), why a
 * package is there (`npm explain`), whether it can be deleted, and what is
 * out of date (`npm outdated`, `glasskube list --outdated`).
 */
import type { Dependency, GVK } from '../../functions/api/dependencies.js'
import {
  candidateAdmitted,
  compareVersions,
  parseConstraint,
  parseVersion,
  satisfies,
} from '../../functions/dependency-check/index.js'
import type { PrereleasePolicy } from '../../functions/api/dependencies.js'
import type { Version } from '../../functions/dependency-check/index.js'
import { alignColumns } from '../util/columns.js'

/** How a package came to be in the repository. */
export type Held = 'variant' | 'dependency' | 'on purpose' | 'outside git'

/** A package the repository holds. */
export interface HeldPackage {
  /** `<repo>/<package>` (for one installed outside git, `<repo>/<name>`). */
  path: string
  /** Its PackageManifest's name, else its directory's. */
  name: string
  version?: string
  held: Held
  /** The PackageVariant whose package it is. */
  owner?: string
  dependencies: readonly Dependency[]
  /** The APIs it serves: its manifest's and its CRDs'. */
  provides: readonly GVK[]
}

/** One edge of the graph: `from` needs `to` (a package, an API, or one of alternatives), with the range asked. */
export interface Edge {
  from: string
  /** What is asked: a package name, `apiVersion/kind`, or alternatives joined by ` | `. */
  asked: string
  range: string
  /** The held package that meets it (by path), when one does. */
  to?: string
  /** `missing`: nothing held meets it; `invalid`: the package is held at a version outside the range. */
  problem?: 'missing' | 'invalid'
  optional: boolean
}

/** A repository's graph. */
export interface RepositoryGraph {
  repo: string
  packages: HeldPackage[]
  edges: Edge[]
}

/** Builds the graph: each dependency of each package met by a held package where one meets it. */
export function repositoryGraph(repo: string, packages: readonly HeldPackage[]): RepositoryGraph {
  const sorted = [...packages].sort((a, b) => compare(a.name, b.name) || compare(a.path, b.path))
  const byName = new Map(sorted.map((p) => [p.name, p]))
  const gvk = (g: GVK) => `${g.apiVersion}/${g.kind}`
  const edges: Edge[] = []
  const meet = (dep: Exclude<Dependency, { type: 'AnyOf' }>): { to?: HeldPackage; invalid?: boolean } => {
    if (dep.type === 'GVK') return { to: sorted.find((p) => p.provides.some((g) => gvk(g) === gvk(dep.gvk))) }
    const to = byName.get(dep.name)
    if (!to) return {}
    return { to, invalid: !versionSatisfies(to.version, dep.version) }
  }
  for (const p of sorted) {
    for (const dep of p.dependencies) {
      const alternatives = dep.type === 'AnyOf' ? dep.anyOf : [dep]
      const met = alternatives.map(meet)
      const chosen = met.findIndex((m) => m.to && !m.invalid)
      const at = chosen >= 0 ? chosen : met.findIndex((m) => m.to)
      const alt = alternatives[Math.max(at, 0)]!
      const edge: Edge = {
        from: p.path,
        asked:
          dep.type === 'AnyOf'
            ? dep.anyOf.map((a) => (a.type === 'GVK' ? gvk(a.gvk) : a.name)).join(' | ')
            : dep.type === 'GVK'
              ? gvk(dep.gvk)
              : dep.name,
        range: alt.type === 'Package' ? alt.version || '*' : '',
        optional: dep.optional,
      }
      if (at >= 0) edge.to = met[at]!.to!.path
      if (at < 0) edge.problem = 'missing'
      else if (met[at]!.invalid) edge.problem = 'invalid'
      edges.push(edge)
    }
  }
  return { repo, packages: sorted, edges }
}

/** What needs the package at `path`: the edges into it. */
export function dependantsOf(graph: RepositoryGraph, path: string): Edge[] {
  return graph.edges.filter((e) => e.to === path)
}

/** The package `name` (its manifest's name, or its path below the repository). */
export function findHeld(graph: RepositoryGraph, name: string): HeldPackage | undefined {
  return graph.packages.find((p) => p.name === name) ?? graph.packages.find((p) => p.path === `${graph.repo}/${name}`)
}

/** The repository as a tree (`npm ls`): packages nothing needs at the top, what each needs below it, each package in full once. */
export function formatTree(graph: RepositoryGraph, where: string): string {
  const byPath = new Map(graph.packages.map((p) => [p.path, p]))
  const needed = new Set(graph.edges.filter((e) => e.to && e.from !== e.to).map((e) => e.to!))
  const roots = graph.packages.filter((p) => !needed.has(p.path))
  // Packages only in a cycle are roots too, or they would never show.
  for (const p of graph.packages) if (!roots.includes(p) && !reachable(graph, roots, p.path)) roots.push(p)
  const lines = [`${graph.repo} (${where})`]
  const shown = new Set<string>()
  const walk = (p: HeldPackage, prefix: string, last: boolean, via?: Edge) => {
    const children = graph.edges.filter((e) => e.from === p.path)
    const again = shown.has(p.path)
    const branch = `${prefix}${last ? '└─' : '├─'}${children.length > 0 && !again ? '┬' : '─'} `
    const range = via?.range ? ` (${via.range})` : ''
    const problem = via?.problem === 'invalid' ? ' INVALID: outside the range' : ''
    lines.push(`${branch}${label(p)}${range}${problem}${again ? ' (see above)' : `  [${heldText(p, graph)}]`}`)
    if (again) return
    shown.add(p.path)
    children.forEach((e, i) => {
      const childPrefix = `${prefix}${last ? '  ' : '│ '}`
      const isLast = i === children.length - 1
      const to = e.to ? byPath.get(e.to) : undefined
      if (to) walk(to, childPrefix, isLast, e)
      else
        lines.push(
          `${childPrefix}${isLast ? '└──' : '├──'} ${e.asked}${e.range ? ` ${e.range}` : ''} ${e.optional ? 'not held (optional)' : 'MISSING'}`,
        )
    })
  }
  roots.forEach((p, i) => walk(p, '', i === roots.length - 1))
  if (graph.packages.length === 0) lines.push('└── (no package declares itself with a PackageManifest)')
  return `${lines.join('\n')}\n`
}

/** Why the package is there (`npm explain`): how it got there, and every chain of dependants up to a package nothing needs. */
export function explain(graph: RepositoryGraph, pkg: HeldPackage): string {
  const byPath = new Map(graph.packages.map((p) => [p.path, p]))
  const lines = [`${label(pkg)} (${pkg.path}): ${heldText(pkg, graph)}`]
  const walk = (path: string, depth: number, seen: ReadonlySet<string>) => {
    for (const e of dependantsOf(graph, path)) {
      const from = byPath.get(e.from)!
      const cycle = seen.has(from.path)
      lines.push(
        `${'  '.repeat(depth)}needed by ${label(from)}${e.range ? ` (${e.range})` : ` (${e.asked})`}${e.optional ? ', optionally' : ''}` +
          (cycle ? ' (a cycle)' : dependantsOf(graph, from.path).length === 0 ? `: ${heldText(from, graph)}` : ''),
      )
      if (!cycle) walk(from.path, depth + 1, new Set([...seen, from.path]))
    }
  }
  walk(pkg.path, 1, new Set([pkg.path]))
  if (dependantsOf(graph, pkg.path).length === 0) lines.push('  nothing in the repository needs it')
  return `${lines.join('\n')}\n`
}

/**
 * Whether the package can be deleted: not while a package needs it that
 * nothing else held would then serve (another package serving the same API
 * does). `blocking`: those dependants, as sentences.
 */
export function canDelete(
  graph: RepositoryGraph,
  pkg: HeldPackage,
): { ok: boolean; blocking: string[]; notes: string[] } {
  const byPath = new Map(graph.packages.map((p) => [p.path, p]))
  const without = repositoryGraph(
    graph.repo,
    graph.packages.filter((p) => p.path !== pkg.path),
  )
  const blocking: string[] = []
  for (const e of dependantsOf(graph, pkg.path)) {
    if (e.optional) continue
    const still = without.edges.find((w) => w.from === e.from && w.asked === e.asked && w.to && !w.problem)
    if (still) continue
    const from = byPath.get(e.from)!
    blocking.push(`${label(from)} (${from.path}) needs ${e.asked}${e.range ? ` ${e.range}` : ''}`)
  }
  const notes: string[] = []
  if (pkg.held === 'variant')
    notes.push(
      `it is the package of PackageVariant ${pkg.owner}: delete that PackageVariant (or its set's target), or the next render puts it back`,
    )
  if (pkg.held === 'outside git')
    notes.push('it was installed outside git: delete it where it was installed, and its InstalledPackage object')
  return { ok: blocking.length === 0, blocking, notes }
}

/** A row of `--outdated`: a held package, the newest version its constraints allow, the newest published. */
export interface OutdatedRow {
  repo: string
  package: string
  path: string
  held: Held
  current?: string
  /** The newest version every constraint on it admits (its dependants' ranges, a pin, its own PackageVariant's constraint). */
  wanted?: string
  /** The newest published version. */
  latest?: string
  /** Who constrains it: `nginx >=1.13.0`, `pin v1.14.4 (DependencyPolicy ...)`. */
  constrainedBy: string[]
}

/**
 * The outdated rows of a repository: each held package whose current
 * version is below the newest its constraints allow, or the newest
 * published. `versions`: the published versions by package name;
 * `constraints`: further constraints by package (a pin, a variant's own
 * `upstream-version`, or its fixed revision's version as `=V`).
 */
export function outdated(
  graph: RepositoryGraph,
  versions: ReadonlyMap<string, readonly string[]>,
  constraints: ReadonlyMap<string, readonly { range: string; by: string }[]>,
  prereleases: PrereleasePolicy,
): OutdatedRow[] {
  const rows: OutdatedRow[] = []
  const byPath = new Map(graph.packages.map((p) => [p.path, p]))
  for (const p of graph.packages) {
    const published = (versions.get(p.name) ?? [])
      .map((raw) => parseVersion(raw, { coerce: false }))
      .filter((v): v is Version => v?.semver !== undefined && candidateAdmitted(v, prereleases, []))
      .sort(compareVersions)
    if (published.length === 0) continue
    const asked = [
      ...dependantsOf(graph, p.path)
        .filter((e) => e.range && e.range !== '*')
        .map((e) => ({ range: e.range, by: `${byPath.get(e.from)!.name} ${e.range}` })),
      ...(constraints.get(p.name) ?? []),
    ]
    const parsed = asked.map((a) => parseConstraint(a.range)).filter((c) => c.ok)
    const wanted = published.filter((v) => parsed.every((c) => c.ok && satisfies(v, c.constraint))).pop()
    const latest = published[published.length - 1]!
    const current = p.version ? parseVersion(p.version, { coerce: true }) : undefined
    const behind = (v: Version | undefined) => v && (!current?.semver || compareVersions(current, v) < 0)
    if (!behind(wanted) && !behind(latest)) continue
    const row: OutdatedRow = {
      repo: graph.repo,
      package: p.name,
      path: p.path,
      held: p.held,
      latest: latest.raw,
      constrainedBy: asked.map((a) => a.by),
    }
    if (p.version) row.current = p.version
    if (wanted) row.wanted = wanted.raw
    rows.push(row)
  }
  return rows
}

/** `--outdated` as a table. */
export function formatOutdated(rows: readonly OutdatedRow[]): string {
  if (rows.length === 0) return 'Every package is at the newest version published.\n'
  const header = ['REPOSITORY', 'PACKAGE', 'CURRENT', 'WANTED', 'LATEST', 'HELD', 'CONSTRAINED BY']
  const cells = rows.map((r) => [
    r.repo,
    r.package,
    r.current ?? '-',
    r.wanted ?? '(none)',
    r.latest ?? '-',
    r.held,
    r.constrainedBy.join(', ') || '-',
  ])
  return `${alignColumns(header, cells).join('\n')}\n`
}

function label(p: HeldPackage): string {
  return `${p.name}${p.version ? ` ${p.version}` : ''}`
}

function heldText(p: HeldPackage, graph: RepositoryGraph): string {
  switch (p.held) {
    case 'variant':
      return `the package of PackageVariant ${p.owner}`
    case 'on purpose':
      return 'installed on purpose'
    case 'outside git':
      return 'installed outside git (an InstalledPackage)'
    case 'dependency':
      return dependantsOf(graph, p.path).length > 0
        ? 'installed as a dependency'
        : 'installed as a dependency, and nothing needs it: the next render removes it'
  }
}

function reachable(graph: RepositoryGraph, from: readonly HeldPackage[], path: string): boolean {
  const seen = new Set<string>()
  const stack = from.map((p) => p.path)
  while (stack.length > 0) {
    const at = stack.pop()!
    if (at === path) return true
    if (seen.has(at)) continue
    seen.add(at)
    for (const e of graph.edges) if (e.from === at && e.to) stack.push(e.to)
  }
  return false
}

function versionSatisfies(version: string | undefined, range: string): boolean {
  if (!range || range === '*') return true
  const c = parseConstraint(range)
  const v = version ? parseVersion(version, { coerce: true }) : undefined
  return c.ok && v !== undefined && satisfies(v, c.constraint)
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
