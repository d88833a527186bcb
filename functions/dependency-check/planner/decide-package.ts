/**
 * A package dependency (`name` + range) against the graph: met by the node
 * its scope resolves to, or the version to install, upgrade or downgrade to,
 * or why none works (docs/upstream-behaviour.md, "Resolution", rules 2, 7, 8).
 */
import type { InstallationType, PackageDependency } from '../../api/dependencies.js'
import { candidateAdmitted, direction, parseConstraint, satisfies } from '../constraints.js'
import type { Constraint } from '../constraints.js'
import type { IndexedPackage, IndexedVersion } from '../graph.js'
import { conflictMessage, describeConstraints, missingMessage, noVersionMessage } from '../messages.js'
import type { Conflict } from '../plan.js'
import { compareVersions, isUpgrade } from '../versions.js'
import type { Version } from '../versions.js'
import { candidates, funnel, pick } from './candidates.js'
import { reportName, satisfiedBy, stateOf } from './decision.js'
import type { Decision, ReportBase } from './decision.js'
import { byString, nodeId, nodeLabel } from './plan-graph.js'
import type { PlanGraph, PlanNode } from './plan-graph.js'

export function decidePackage(graph: PlanGraph, node: PlanNode, dep: PackageDependency): Decision {
  const parsed = parseConstraint(dep.version)
  if (!parsed.ok) return improperConstraint(node, dep, parsed.error)
  const c = parsed.constraint
  const id = graph.scope(dep.name, node.namespace)
  const target = graph.nodes.get(id)
  const installed = target?.installed?.version.raw
  if (target?.version && !installed && !dep.optional && satisfies(target.version, c))
    return metByPlan(dep, c, id, target)
  const base = reportName(dep.name, 'Package', dep.optional)
  // A node of the plan at a version, or a target whatever its version, answers it; else it is missing.
  if (target && (target.version || target.action === 'target')) {
    const withInstalled: ReportBase = installed
      ? { ...base, required: c.display, installed }
      : { ...base, required: c.display }
    return againstPresent(graph, node, target, c, id, withInstalled)
  }
  return absent({ graph, node, dep, c, id, base })
}

/** A range that does not parse. */
function improperConstraint(node: PlanNode, dep: PackageDependency, error: string): Decision {
  return unresolvable(
    reportName(dep.name, 'Package', dep.optional),
    'Conflict',
    {
      id: nodeId(dep.name, node.namespace),
      package: dep.name,
      namespace: node.namespace,
      required: dep.version,
      reason: 'ImproperConstraint',
    },
    error,
  )
}

/**
 * The common case, once per edge of a plan: a node of the plan, with nothing
 * installed before it, meets the range. One literal, not a base and two
 * spreads (which add up at 50,000 edges).
 */
function metByPlan(dep: PackageDependency, c: Constraint, id: string, target: PlanNode): Decision {
  const state = stateOf(target)
  return {
    to: id,
    report: {
      name: dep.name,
      type: 'Package',
      required: c.display,
      state,
      satisfiedBy: satisfiedBy(target),
      message: stateMessage(target, state),
    },
  }
}

/** The node the plan has: the range met (a target of unknown version is not checked), or violated (see violation). */
function againstPresent(
  graph: PlanGraph,
  node: PlanNode,
  target: PlanNode,
  c: Constraint,
  id: string,
  base: ReportBase,
): Decision {
  if (!target.version) {
    return {
      to: id,
      report: {
        ...base,
        state: 'Fulfilled',
        satisfiedBy: satisfiedBy(target),
        message: `${base.name} is a target of unknown version; its range is not checked`,
      },
    }
  }
  if (satisfies(target.version, c)) {
    const state = stateOf(target)
    return {
      to: id,
      report: { ...base, state, satisfiedBy: satisfiedBy(target), message: stateMessage(target, state) },
    }
  }
  return { to: id, ...violation(graph, node, target, c, base) }
}

/** A dependency no node of the plan answers yet: `node`'s `dep`, its range `c`, the node id it would be, its report's first fields. */
interface Absent {
  graph: PlanGraph
  node: PlanNode
  dep: PackageDependency
  c: Constraint
  id: string
  base: ReportBase
}

/** No node of the plan answers it: skipped (optional), missing, or a version of the catalog to install. */
function absent(edge: Absent): Decision {
  const { graph, node, dep, c, id, base } = edge
  const required = c.display
  if (dep.optional && graph.policy.optional === 'Skip')
    return skipped(base, required, `optional dependency ${dep.name} is not installed; skipped`)
  if (node.action === 'keep') {
    // An untouched installation's missing dependency is not the targets' doing (Glasskube isErrNew).
    return {
      report: {
        ...base,
        required,
        state: 'Missing',
        resolvable: false,
        preExisting: true,
        message: `${dep.name} not installed`,
      },
    }
  }
  const entry = graph.catalog.packages.get(dep.name)
  if (entry) return install(edge, entry)
  if (dep.optional)
    return skipped(base, required, `optional dependency ${dep.name} is not available in any repository; skipped`)
  const namespace = graph.installNamespace(dep.name, node.namespace)
  const conflict = { id, package: dep.name, namespace, required, reason: 'Missing' as const }
  return unresolvable(base, 'Missing', conflict, missingMessage(dep.name))
}

/** The version of the catalog to install, as the policy picks it among those every range on it admits; or why none. */
function install({ graph, node, dep, c, id, base }: Absent, entry: IndexedPackage): Decision {
  const { policy } = graph
  const required = c.display
  const constraints = constraintsFor(graph, dep.name, id, node, c)
  const chosen = pick(entry, candidates(entry, constraints, policy), constraints, policy)
  const namespace = graph.installNamespace(dep.name, node.namespace)
  if (!chosen) {
    if (dep.optional)
      return skipped(base, required, `optional dependency ${dep.name} has no installable version; skipped`)
    const conflict = { id, package: dep.name, namespace, required }
    const clash = twoVersionsAtOnce(graph, entry, entry.installationType ?? 'NoRestrictions', id, namespace, node, c)
    if (clash) return unresolvable(base, 'Conflict', { ...conflict, reason: 'InstallationTypeViolation' }, clash)
    const message = noVersionMessage(dep.name, constraints, funnel(entry, constraints, policy))
    return unresolvable(base, 'NoMatchingVersion', { ...conflict, reason: 'NoMatchingVersion' }, message)
  }
  return {
    to: nodeId(dep.name, namespace),
    effect: { kind: 'install', package: dep.name, namespace, version: chosen },
    report: {
      ...base,
      required,
      state: 'Install',
      satisfiedBy: { package: dep.name, version: chosen.version.raw },
      message: `install ${dep.name}@${chosen.version.raw}`,
    },
  }
}

/** An optional dependency left out. */
function skipped(base: ReportBase, required: string, message: string): Decision {
  return { report: { ...base, required, state: 'Skipped', message } }
}

/** A dependency no choice of versions meets: its report, and the plan's conflict with the reason. */
function unresolvable(
  base: ReportBase,
  state: 'Conflict' | 'Missing' | 'NoMatchingVersion',
  conflict: { id: string; package: string; namespace: string; required: string; reason: Conflict['reason'] },
  message: string,
): Decision {
  const { id, package: pkg, namespace, required, reason } = conflict
  return {
    report: { ...base, required, state, resolvable: false, message },
    conflict: { id, package: pkg, namespace, required, resolvable: false, reason, message },
  }
}

function stateMessage(target: PlanNode, state: string): string {
  const label = nodeLabel(target.package, target.namespace, target.version?.raw)
  if (state === 'Install') return `install ${label}`
  if (state === 'Upgrade')
    return `upgrade ${target.package} from ${target.installed?.version.raw} to ${target.version?.raw}`
  if (state === 'Downgrade')
    return `downgrade ${target.package} from ${target.installed?.version.raw} to ${target.version?.raw}`
  return target.action === 'target' ? `fulfilled by target ${label}` : `fulfilled by ${label}`
}

/** Every range on the would-be node, plus this edge's own (it may not be registered yet). */
function constraintsFor(graph: PlanGraph, pkg: string, id: string, from: PlanNode, own: Constraint): Constraint[] {
  const list = graph.rangesOn({ package: pkg, id }).map((r) => r.constraint)
  if (!(graph.ranges.get(pkg) ?? []).some((r) => r.from === from && r.constraint === own)) list.push(own)
  return list
}

/**
 * Rule 7: the ranges one installation of a `OnePerCluster` / `OnePerNamespace`
 * package must meet (every range on it; for `OnePerNamespace`, those from its
 * own namespace) each admit some version, but no version admits them all: the
 * plan needs two versions at once where only one installation is allowed.
 * Returns the explanation, or undefined when that is not the cause.
 */
function twoVersionsAtOnce(
  graph: PlanGraph,
  entry: IndexedPackage,
  type: InstallationType,
  id: string,
  namespace: string,
  from: PlanNode,
  own: Constraint,
): string | undefined {
  if (type === 'NoRestrictions') return undefined
  const { policy } = graph
  const edges = graph.rangesOn({ package: entry.name, id })
  if (!edges.some((r) => r.from === from && r.constraint === own))
    edges.push({ from, constraint: own, raw: own.display })
  const group = type === 'OnePerCluster' ? edges : edges.filter((r) => r.from.namespace === namespace)
  if (group.length < 2) return undefined
  const constraints = group.map((r) => r.constraint)
  if (
    candidates(entry, constraints, policy).length > 0 ||
    !constraints.every((c) => candidates(entry, [c], policy).length > 0)
  )
    return undefined
  const list = group
    .map(
      (r) => `${nodeLabel(r.from.package, r.from.namespace, r.from.version?.raw)} needs ${r.constraint.display || '*'}`,
    )
    .sort(byString)
  const where =
    type === 'OnePerCluster' ? 'in the cluster' : namespace ? `in namespace ${namespace}` : 'in the cluster scope'
  return `${entry.name} is ${type} and ${list.join(', ')}: two different versions at once ${where}, where only one installation is allowed`
}

/** P→D with D present at a version outside P's range (rule 2, upward check 8). */
function violation(
  graph: PlanGraph,
  node: PlanNode,
  target: PlanNode,
  c: Constraint,
  base: ReportBase,
): Omit<Decision, 'to'> {
  const violated = violatedBy(target, c, base)
  const { fail } = violated
  if (node.action === 'keep' && target.action === 'keep') {
    return {
      report: {
        ...base,
        state: 'Conflict',
        resolvable: false,
        preExisting: true,
        message: conflictMessage(
          target.package,
          c.display,
          target.version!.raw,
          'pre-existing; not caused by the targets',
        ),
      },
    }
  }
  if (target.action === 'target') return againstTarget(graph, node, violated)
  const entry = graph.catalog.packages.get(target.package)
  const constraints = graph.rangesOn(target).map((r) => r.constraint)
  if (!constraints.includes(c)) constraints.push(c)
  const admitted = entry ? candidates(entry, constraints, graph.policy) : []
  if (admitted.length === 0) {
    if (c.kind === 'digest') return fail('DigestMismatch', false, `digest ${c.digest} required`)
    const clash =
      entry && twoVersionsAtOnce(graph, entry, target.installationType, target.id, target.namespace, node, c)
    if (clash) return fail('InstallationTypeViolation', false, clash)
    return fail('NoVersionSatisfiesAll', false, `no version satisfies ${describeConstraints(constraints)}`)
  }
  return moveTo(graph, violated, { entry: entry!, admitted, constraints })
}

/** A range `c` that the version of `target` violates, and how the conflict reads (`fail`). */
interface Violated {
  target: PlanNode
  c: Constraint
  version: Version
  /** Which side of the range the version is on. */
  dir: ReturnType<typeof direction>
  base: ReportBase
  fail: (
    reason: Conflict['reason'],
    resolvable: boolean,
    extra: string,
    resolution?: Conflict['resolution'],
  ) => Omit<Decision, 'to'>
}

function violatedBy(target: PlanNode, c: Constraint, base: ReportBase): Violated {
  const version = target.version!
  const dir = direction(version, c)
  const conflictBase = {
    id: target.id,
    package: target.package,
    namespace: target.namespace,
    actual: version.raw,
    required: c.display,
    direction: dir,
  }
  const fail: Violated['fail'] = (reason, resolvable, extra, resolution) => {
    const message = conflictMessage(target.package, c.display, version.raw, extra)
    return {
      report: { ...base, state: 'Conflict', resolvable, message },
      conflict: { ...conflictBase, resolvable, reason, message, ...(resolution ? { resolution } : {}) },
    }
  }
  return { target, c, version, dir, base, fail }
}

/** A target's version is the one asked for: the dependant's range is in conflict, resolved where a newer dependant admits it. */
function againstTarget(
  graph: PlanGraph,
  node: PlanNode,
  { target, c, version, dir, fail }: Violated,
): Omit<Decision, 'to'> {
  if (c.kind === 'digest') return fail('DigestMismatch', false, `digest ${c.digest} required`)
  const up = node.action === 'keep' ? dependantUpgrade(graph, node, target) : undefined
  const reason = dir === 'Above' ? 'InstalledTooNew' : 'InstalledTooOld'
  const dependant = nodeLabel(node.package, node.namespace, node.version?.raw)
  const why =
    dir === 'Above'
      ? `${dependant} does not support ${target.package} ${version.raw} yet`
      : `${dependant} needs a newer ${target.package} than the target's ${version.raw}`
  if (up)
    return fail(reason, true, `${why}; update ${node.package} to ${up} together with ${target.package}`, {
      action: 'Upgrade',
      package: node.package,
      version: up,
    })
  return fail(reason, false, why)
}

/**
 * The version `target` moves to, of those every range on it admits: the
 * policy's pick for a new installation; else the installed one kept, or an
 * upgrade, or a downgrade, as the policy allows.
 */
function moveTo(
  graph: PlanGraph,
  { target, dir, base, fail }: Violated,
  { entry, admitted, constraints }: { entry: IndexedPackage; admitted: IndexedVersion[]; constraints: Constraint[] },
): Omit<Decision, 'to'> {
  const { policy } = graph
  if (target.action === 'install') {
    const chosen = pick(entry, admitted, constraints, policy)!
    return {
      effect: { kind: 'change', node: target, version: chosen, action: 'install' },
      report: {
        ...base,
        state: 'Install',
        satisfiedBy: { package: target.package, version: chosen.version.raw },
        message: `install ${target.package}@${chosen.version.raw}`,
      },
    }
  }
  const original = target.installed!.version
  if (admitted.some((v) => compareVersions(v.version, original) === 0)) {
    return {
      effect: { kind: 'change', node: target, version: undefined, action: 'keep' },
      report: { ...base, state: 'Fulfilled', message: `${target.package}@${original.raw} kept` },
    }
  }
  const up = admitted.filter((v) => isUpgrade(original, v.version))
  const down = admitted.filter((v) => !isUpgrade(original, v.version))
  if (up.length > 0) {
    const to = policy.upgradeTarget === 'Lowest' ? up[0]! : pick(entry, up, constraints, policy)!
    if (policy.upgrades === 'Allow') return changed(base, target, original, to, 'upgrade')
    return fail('UpgradeNotAllowed', true, `upgrading to ${to.version.raw} resolves it (\`policy.upgrades\` is Deny)`, {
      action: 'Upgrade',
      version: to.version.raw,
    })
  }
  const to = down[down.length - 1]!
  if (policy.downgrades === 'Allow') return changed(base, target, original, to, 'downgrade')
  return fail(
    dir === 'Above' ? 'InstalledTooNew' : 'DowngradeNotAllowed',
    false,
    `only a downgrade to ${to.version.raw} would resolve it (\`policy.downgrades\` is Deny)`,
  )
}

/** The installed version of `target` changed to `to`. */
function changed(
  base: ReportBase,
  target: PlanNode,
  original: Version,
  to: IndexedVersion,
  action: 'upgrade' | 'downgrade',
): Omit<Decision, 'to'> {
  return {
    effect: { kind: 'change', node: target, version: to, action },
    report: {
      ...base,
      state: action === 'upgrade' ? 'Upgrade' : 'Downgrade',
      satisfiedBy: { package: target.package, version: to.version.raw },
      message: `${action} ${target.package} from ${original.raw} to ${to.version.raw}`,
    },
  }
}

/** The lowest catalog version of an installed dependant whose range admits the target's new version (Glasskube #400). */
function dependantUpgrade(graph: PlanGraph, dependant: PlanNode, target: PlanNode): string | undefined {
  const entry = graph.catalog.packages.get(dependant.package)
  if (!entry || !dependant.version || !target.version) return undefined
  for (const v of entry.versions) {
    if (compareVersions(v.version, dependant.version) <= 0) continue
    const ranges = v.spec.dependencies.filter(
      (d): d is PackageDependency => d.type === 'Package' && d.name === target.package,
    )
    const ok = ranges.every((d) => {
      const parsed = parseConstraint(d.version)
      return parsed.ok && satisfies(target.version!, parsed.constraint)
    })
    if (ok && candidateAdmitted(v.version, graph.policy.prereleases, [])) return v.version.raw
  }
  return undefined
}
