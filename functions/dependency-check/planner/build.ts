/**
 * The planner's starting graph from its input: one node per installation
 * (duplicates and unparseable versions reported), targets replacing the
 * installations of their packages, every range registered. Targets given by
 * constraint get their version once the ranges on them are known
 * (`chooseConstraintTargets`).
 */
import { parseConstraint } from '../constraints.js'
import { findVersion, gvkKey, indexCatalogs } from '../graph.js'
import type { IndexedPackage } from '../graph.js'
import { noVersionMessage } from '../messages.js'
import type { Conflict, PlanInput, PlanTarget } from '../plan.js'
import { parseVersion } from '../versions.js'
import type { Version } from '../versions.js'
import { candidates, funnel, pick, refusedDowngrade } from './candidates.js'
import { byString, nodeId, nodeLabel, PlanGraph } from './plan-graph.js'
import type { PlanNode } from './plan-graph.js'

/** The graph of the input's installations and targets, and the target node ids in id order. */
export function buildGraph(input: PlanInput): { graph: PlanGraph; targetIds: string[] } {
  const catalog = indexCatalogs(input.catalogs)
  const graph = new PlanGraph(catalog, input.policy, new Set(input.clusterAPIs.map(gvkKey)))
  for (const p of catalog.problems) {
    graph.issues.push({
      severity: 'warning',
      package: p.package,
      message: `catalog ${p.catalog}: version ${JSON.stringify(p.version)} of ${p.package} is not a semantic version; skipped`,
    })
  }
  addInstalled(graph, input.installed)
  const targetIds = addTargets(graph, input.targets)
  for (const node of graph.sortedNodes()) graph.register(node)
  return { graph, targetIds }
}

function addInstalled(graph: PlanGraph, all: PlanInput['installed']): void {
  const installed = [...all].filter((i) => !i.deleting)
  installed.sort(
    (a, b) => byString(nodeId(a.package, a.namespace), nodeId(b.package, b.namespace)) || byString(a.name, b.name),
  )
  for (const inst of installed) {
    const id = nodeId(inst.package, inst.namespace)
    const existing = graph.nodes.get(id)
    if (existing) {
      graph.issues.push({
        severity: 'warning',
        package: inst.package,
        message: `installation ${inst.name} duplicates ${existing.installed!.name} (${inst.package} in ${inst.namespace || 'the cluster scope'}); ignored`,
      })
      const list = graph.duplicates.get(id)
      if (list) list.push({ name: inst.name, version: inst.version })
      else graph.duplicates.set(id, [{ name: inst.name, version: inst.version }])
      continue
    }
    const version = parseVersion(inst.version, { coerce: true }) ?? { raw: inst.version, coerced: false }
    if (!version.semver && !version.digest) {
      graph.issues.push({
        severity: 'warning',
        package: inst.package,
        message: `installation ${inst.name}: version ${JSON.stringify(inst.version)} is not a semantic version; it satisfies only unconstrained dependencies`,
      })
    }
    const entry = graph.catalog.packages.get(inst.package)
    const spec = findVersion(entry, version)?.spec
    let deps = inst.dependencies
    if (!deps) {
      deps = spec?.dependencies ?? []
      if (!spec)
        graph.issues.push({
          severity: 'info',
          package: inst.package,
          message: `${nodeLabel(inst.package, inst.namespace, inst.version)}: dependencies unknown (no \`spec.dependencies\` and not in the catalog); assumed none`,
        })
    }
    graph.addNode({
      id,
      package: inst.package,
      namespace: inst.namespace,
      installed: {
        name: inst.name,
        version,
        asDependency: inst.installedAsDependency,
        deps,
        provides: inst.provides ?? spec?.provides ?? [],
      },
      action: 'keep',
      version,
      deps,
      provides: inst.provides ?? spec?.provides ?? [],
      installationType: spec?.installationType ?? entry?.installationType ?? 'NoRestrictions',
      changes: 0,
    })
  }
}

/** Targets replace the installed versions of their packages (those ranges no longer count). */
function addTargets(graph: PlanGraph, all: readonly PlanTarget[]): string[] {
  const ids: string[] = []
  const targets = [...all].sort((a, b) => byString(nodeId(a.package, a.namespace), nodeId(b.package, b.namespace)))
  for (const t of targets) {
    const id = nodeId(t.package, t.namespace)
    if (ids.includes(id)) {
      graph.issues.push({ severity: 'error', package: t.package, message: `target ${id} is listed twice` })
      continue
    }
    const entry = graph.catalog.packages.get(t.package)
    const node = targetNode(graph, t, id, entry)
    ids.push(id)
    const version = t.version ? parseVersion(t.version, { coerce: true }) : undefined
    if (t.version && !version) {
      graph.issues.push({
        severity: 'error',
        package: t.package,
        message: `target ${id}: version ${JSON.stringify(t.version)} is not a semantic version`,
      })
      continue
    }
    node.version = version
    if (version && refusedDowngrade(graph.policy, node.installed?.version, version))
      graph.targetConflicts.push(downgradeRefused(node, version))
    setTargetContents(graph, t, node, entry, version)
  }
  return ids
}

/** The target's node, its installation's if there is one, marked as a target with the target's installation type. */
function targetNode(graph: PlanGraph, t: PlanTarget, id: string, entry: IndexedPackage | undefined): PlanNode {
  let node = graph.nodes.get(id)
  if (!node) {
    node = {
      id,
      package: t.package,
      namespace: t.namespace,
      action: 'target',
      deps: [],
      provides: [],
      installationType: 'NoRestrictions',
      changes: 0,
    }
    graph.addNode(node)
  }
  node.action = 'target'
  node.installationType = t.manifest?.installationType ?? entry?.installationType ?? 'NoRestrictions'
  return node
}

/**
 * The target's dependencies and APIs: from its manifest, else from the
 * catalog at its version (a conflict if the catalog lacks it). A target by
 * constraint gets them once its version is chosen (chooseConstraintTargets).
 */
function setTargetContents(
  graph: PlanGraph,
  t: PlanTarget,
  node: PlanNode,
  entry: IndexedPackage | undefined,
  version: Version | undefined,
): void {
  if (t.manifest) {
    node.deps = t.manifest.dependencies
    node.provides = t.manifest.provides
    return
  }
  if (!entry) {
    node.deps = []
    const message = `"${t.package}" is not available in any repository`
    graph.targetConflicts.push(targetConflict(t, t.version ?? t.constraint ?? '', 'Missing', message))
    return
  }
  if (!version) return
  const found = findVersion(entry, version)
  if (!found) {
    const message = `${t.package} has no version ${t.version} in the catalog`
    graph.targetConflicts.push(targetConflict(t, t.version!, 'NoMatchingVersion', message))
    node.deps = []
    return
  }
  node.deps = found.spec.dependencies
  node.provides = found.spec.provides
  node.installationType = found.spec.installationType ?? node.installationType
}

/** An unresolvable conflict of a target with what the catalog has. */
function targetConflict(
  t: PlanTarget,
  required: string,
  reason: Conflict['reason'],
  message: string,
): Conflict & { id: string } {
  return {
    id: nodeId(t.package, t.namespace),
    package: t.package,
    namespace: t.namespace,
    required,
    requiredBy: 'spec.targets',
    constraints: [],
    resolvable: false,
    reason,
    message,
  }
}

/** Targets given by constraint (or nothing): pick a version once the installed dependants' ranges are known. */
export function chooseConstraintTargets(graph: PlanGraph, targets: readonly PlanTarget[]): void {
  const { policy } = graph
  for (const t of targets) {
    if (t.version || t.manifest) continue
    const node: PlanNode | undefined = graph.nodes.get(nodeId(t.package, t.namespace))
    const entry = graph.catalog.packages.get(t.package)
    if (!node || !entry || node.version) continue
    const parsed = parseConstraint(t.constraint ?? '')
    if (!parsed.ok) {
      graph.issues.push({ severity: 'error', package: t.package, message: `target ${node.id}: ${parsed.error}` })
      continue
    }
    const constraints = [
      parsed.constraint,
      ...graph
        .rangesOn(node)
        .filter((r) => r.from !== node)
        .map((r) => r.constraint),
    ]
    const admitted = candidates(entry, constraints, policy)
    const chosen = pick(entry, notBelowInstalled(graph, node, admitted), constraints, policy)
    const refused = chosen ? undefined : pick(entry, admitted, constraints, policy)
    if (refused) {
      graph.targetConflicts.push(downgradeRefused(node, refused.version))
      continue
    }
    if (!chosen) {
      const message = noVersionMessage(t.package, constraints, funnel(entry, constraints, policy))
      graph.targetConflicts.push(targetConflict(t, parsed.constraint.display, 'NoMatchingVersion', message))
      continue
    }
    graph.unregister(node)
    node.version = chosen.version
    node.deps = chosen.spec.dependencies
    node.provides = chosen.spec.provides
    graph.register(node)
  }
}

/** The candidates a target may move to: with `downgrades: Deny`, none below its installed version. */
export function notBelowInstalled<T extends { version: Version }>(
  graph: PlanGraph,
  node: PlanNode,
  admitted: readonly T[],
): T[] {
  return admitted.filter((c) => !refusedDowngrade(graph.policy, node.installed?.version, c.version))
}

/** A target that would downgrade its installation while the policy denies downgrades: Carvel's refusal, with its hint in our terms. */
function downgradeRefused(node: PlanNode, version: Version): Conflict & { id: string } {
  const installed = node.installed!.version.raw
  return {
    id: node.id,
    package: node.package,
    namespace: node.namespace,
    actual: installed,
    required: version.raw,
    requiredBy: 'spec.targets',
    constraints: [],
    direction: 'Above',
    resolvable: true,
    resolution: { action: 'Downgrade', package: node.package, version: version.raw },
    reason: 'DowngradeNotAllowed',
    message: `Stopped installing matched version '${version.raw}' of ${nodeLabel(node.package, node.namespace)} since installed version '${installed}' is higher (hint: set \`policy.downgrades: Allow\` to proceed with downgrade)`,
  }
}
