/**
 * Conflicts of the planned graph as a whole rather than of one dependency:
 * cycles (rule 9) and installation types (rule 7). What the plan does not
 * change is a pre-existing warning, not a conflict.
 */
import type { Cycle } from '../graph.js'
import type { Conflict, PlanIssue } from '../plan.js'
import { compareVersions } from '../versions.js'
import { byString, isChanged, nodeLabel } from './plan-graph.js'
import type { PlanGraph, PlanNode } from './plan-graph.js'
import type { ConflictList, Evaluated } from './evaluated.js'

/**
 * Crossplane's `detected cycle on: <id>`: a conflict on the dependency that
 * closes it, when the plan changes a node on it. `closing(from, on)` is the
 * dependency of `from` that leads to `on`.
 */
export function reportCycles(
  graph: PlanGraph,
  cycles: readonly Cycle[],
  closing: (from: string, on: string) => Evaluated | undefined,
  conflicts: ConflictList,
  issues: PlanIssue[],
): void {
  for (const cycle of cycles) {
    const involved = cycle.path.some((id) => isChanged(graph.nodes.get(id)!))
    const message = `detected cycle on: ${cycle.on} (${cycle.path.join(' -> ')})`
    const entry = closing(cycle.from, cycle.on)
    if (!involved) {
      issues.push({ severity: 'warning', package: cycle.on, message: `${message} (pre-existing)` })
      continue
    }
    if (entry) {
      entry.report.state = 'Cycle'
      entry.report.resolvable = false
      entry.report.message = message
    }
    const on = graph.nodes.get(cycle.on)!
    const from = graph.nodes.get(cycle.from)!
    conflicts.add({
      package: on.package,
      namespace: on.namespace,
      ...(on.version ? { actual: on.version.raw } : {}),
      required: entry?.report.required ?? '',
      requiredBy: nodeLabel(from.package, from.namespace, from.version?.raw),
      constraints: [],
      resolvable: false,
      reason: 'Cycle',
      message,
      ...(entry?.dep.declaredAt ? { declaredAt: entry.dep.declaredAt } : {}),
    })
  }
}

/**
 * A second installation of a OnePerCluster package anywhere, or of a
 * OnePerNamespace package in one namespace (duplicate InstalledPackages count
 * as installations).
 */
export function reportInstallationTypes(graph: PlanGraph, conflicts: ConflictList, issues: PlanIssue[]): void {
  for (const [pkg, list] of restrictedPackages(graph)) {
    const present = list.filter((n) => graph.nodes.has(n.id))
    const type = strictestType(present)
    if (!type) continue
    const groups = type === 'OnePerCluster' ? [present] : present.map((n) => [n])
    for (const group of groups) {
      const duplicates = duplicateInstallations(graph, pkg, group)
      if (group.length + duplicates.length < 2) continue
      const extra = group.filter(isNewInstallation)
      if (extra.length === 0) {
        issues.push(preExistingViolation(pkg, type, group, duplicates))
        continue
      }
      for (const n of extra) conflicts.add(installationTypeConflict(pkg, type, n, group, duplicates))
    }
  }
}

type RestrictedType = 'OnePerCluster' | 'OnePerNamespace'

/** An ignored duplicate installation, on the node of its package and namespace. */
interface DuplicateInstallation {
  node: PlanNode
  label: string
}

/** The packages with an installation type other than NoRestrictions on any node, by name. */
function restrictedPackages(graph: PlanGraph): [string, PlanNode[]][] {
  const restricted: [string, PlanNode[]][] = []
  graph.byPackage.forEach((list, pkg) => {
    if (list.some((n) => n.installationType !== 'NoRestrictions')) restricted.push([pkg, list])
  })
  return restricted.sort((a, b) => byString(a[0], b[0]))
}

/** The strictest installation type among the nodes; undefined when none is restricted. */
function strictestType(nodes: readonly PlanNode[]): RestrictedType | undefined {
  return nodes.some((n) => n.installationType === 'OnePerCluster')
    ? 'OnePerCluster'
    : nodes.some((n) => n.installationType === 'OnePerNamespace')
      ? 'OnePerNamespace'
      : undefined
}

function duplicateInstallations(graph: PlanGraph, pkg: string, group: readonly PlanNode[]): DuplicateInstallation[] {
  return group.flatMap((n) =>
    (graph.duplicates.get(n.id) ?? []).map((d) => ({
      node: n,
      label: `${d.name} (${nodeLabel(pkg, n.namespace, d.version)})`,
    })),
  )
}

/** Whether the plan makes the node a new installation: a target at the version already installed creates nothing new. */
function isNewInstallation(n: PlanNode): boolean {
  return (
    isChanged(n) &&
    !(n.action === 'target' && n.installed && n.version && compareVersions(n.version, n.installed.version) === 0)
  )
}

function scopeOf(n: PlanNode): string {
  return n.namespace || 'the cluster scope'
}

/** A violation the plan does not add to: a warning, not a conflict. */
function preExistingViolation(
  pkg: string,
  type: RestrictedType,
  group: readonly PlanNode[],
  duplicates: readonly DuplicateInstallation[],
): PlanIssue {
  const places = [...group, ...duplicates.map((d) => d.node)].map(scopeOf).sort(byString)
  const text = type === 'OnePerNamespace' ? `${places.length} times in ${places[0]}` : `in ${places.join(', ')}`
  return {
    severity: 'warning',
    package: pkg,
    message: `${pkg} is ${type} but installed ${text} (pre-existing)`,
  }
}

/** The conflict of node `n`, which the plan installs beside the group's other installations. */
function installationTypeConflict(
  pkg: string,
  type: RestrictedType,
  n: PlanNode,
  group: readonly PlanNode[],
  duplicates: readonly DuplicateInstallation[],
): Conflict {
  const others = [
    ...group.filter((o) => o !== n).map((o) => nodeLabel(o.package, o.namespace, o.version?.raw)),
    ...duplicates.map((d) => `installation ${d.label}`),
  ]
  const sameScope = duplicates.filter((d) => d.node === n).map((d) => `installation ${d.label}`)
  const verb = n.action === 'target' ? (n.installed ? 'update' : 'install') : n.action
  const message =
    sameScope.length > 0
      ? `${pkg} is ${type} and ${scopeOf(n)} has another installation, ${sameScope.join(', ')}; the plan would ${verb} ${n.installed ? `installation ${n.installed.name} to ` : ''}${nodeLabel(n.package, n.namespace, n.version?.raw)}, leaving two installations (two versions at once) where only one is allowed`
      : `${pkg} is ${type} and already installed as ${others.join(', ')}; a second installation in ${scopeOf(n)} is not allowed`
  return {
    package: pkg,
    namespace: n.namespace,
    ...(n.version ? { actual: n.version.raw } : {}),
    required: type,
    requiredBy: nodeLabel(n.package, n.namespace, n.version?.raw),
    constraints: [],
    resolvable: false,
    reason: 'InstallationTypeViolation',
    message,
  }
}
