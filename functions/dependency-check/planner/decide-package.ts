/**
 * A package dependency (`name` + range) against the graph: met by the node
 * its scope resolves to, or the version to install, upgrade or downgrade to,
 * or why none works (docs/upstream-behaviour.md, "Resolution", rules 2, 7, 8).
 */
import type { InstallationType, PackageDependency } from '../../api/dependencies.js'
import { candidateAdmitted, direction, parseConstraint, satisfies } from '../constraints.js'
import type { Constraint } from '../constraints.js'
import type { IndexedPackage } from '../graph.js'
import { conflictMessage, describeConstraints, missingMessage, noVersionMessage } from '../messages.js'
import type { Conflict } from '../plan.js'
import { compareVersions, isUpgrade } from '../versions.js'
import { candidates, funnel, pick } from './candidates.js'
import { reportName, satisfiedBy, stateOf } from './decision.js'
import type { Decision, ReportBase } from './decision.js'
import { byString, nodeId, nodeLabel } from './plan-graph.js'
import type { PlanGraph, PlanNode } from './plan-graph.js'

export function decidePackage(graph: PlanGraph, node: PlanNode, dep: PackageDependency): Decision {
  const { policy } = graph
  const parsed = parseConstraint(dep.version)
  if (!parsed.ok) {
    return {
      report: {
        ...reportName(dep.name, 'Package', dep.optional),
        required: dep.version,
        state: 'Conflict',
        resolvable: false,
        message: parsed.error,
      },
      conflict: {
        id: nodeId(dep.name, node.namespace),
        package: dep.name,
        namespace: node.namespace,
        required: dep.version,
        resolvable: false,
        reason: 'ImproperConstraint',
        message: parsed.error,
      },
    }
  }
  const c = parsed.constraint
  const required = c.display
  const id = graph.scope(dep.name, node.namespace)
  const target = graph.nodes.get(id)
  const installed = target?.installed?.version.raw
  if (target?.version && !installed && !dep.optional && satisfies(target.version, c)) {
    // The common case, once per edge of a plan: one literal, not a base and two spreads (which add up at 50,000 edges).
    const state = stateOf(target)
    return {
      to: id,
      report: {
        name: dep.name,
        type: 'Package',
        required,
        state,
        satisfiedBy: satisfiedBy(target),
        message: stateMessage(target, state),
      },
    }
  }
  const base = reportName(dep.name, 'Package', dep.optional)
  const present = target && (target.version || target.action === 'target')
  if (target && present) {
    const withInstalled: ReportBase = installed ? { ...base, required, installed } : { ...base, required }
    if (!target.version) {
      return {
        to: id,
        report: {
          ...withInstalled,
          state: 'Fulfilled',
          satisfiedBy: satisfiedBy(target),
          message: `${dep.name} is a target of unknown version; its range is not checked`,
        },
      }
    }
    if (satisfies(target.version, c)) {
      const state = stateOf(target)
      return {
        to: id,
        report: { ...withInstalled, state, satisfiedBy: satisfiedBy(target), message: stateMessage(target, state) },
      }
    }
    return { to: id, ...violation(graph, node, target, c, withInstalled) }
  }
  const entry = graph.catalog.packages.get(dep.name)
  if (dep.optional && policy.optional === 'Skip') {
    return {
      report: {
        ...base,
        required,
        state: 'Skipped',
        message: `optional dependency ${dep.name} is not installed; skipped`,
      },
    }
  }
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
  if (!entry) {
    if (dep.optional)
      return {
        report: {
          ...base,
          required,
          state: 'Skipped',
          message: `optional dependency ${dep.name} is not available in any repository; skipped`,
        },
      }
    const message = missingMessage(dep.name)
    return {
      report: { ...base, required, state: 'Missing', resolvable: false, message },
      conflict: {
        id,
        package: dep.name,
        namespace: graph.installNamespace(dep.name, node.namespace),
        required,
        resolvable: false,
        reason: 'Missing',
        message,
      },
    }
  }
  const constraints = constraintsFor(graph, dep.name, id, node, c)
  const chosen = pick(entry, candidates(entry, constraints, policy), constraints, policy)
  if (!chosen) {
    if (dep.optional)
      return {
        report: {
          ...base,
          required,
          state: 'Skipped',
          message: `optional dependency ${dep.name} has no installable version; skipped`,
        },
      }
    const namespace = graph.installNamespace(dep.name, node.namespace)
    const clash = twoVersionsAtOnce(graph, entry, entry.installationType ?? 'NoRestrictions', id, namespace, node, c)
    if (clash) {
      return {
        report: { ...base, required, state: 'Conflict', resolvable: false, message: clash },
        conflict: {
          id,
          package: dep.name,
          namespace,
          required,
          resolvable: false,
          reason: 'InstallationTypeViolation',
          message: clash,
        },
      }
    }
    const message = noVersionMessage(dep.name, constraints, funnel(entry, constraints, policy))
    return {
      report: { ...base, required, state: 'NoMatchingVersion', resolvable: false, message },
      conflict: {
        id,
        package: dep.name,
        namespace: graph.installNamespace(dep.name, node.namespace),
        required,
        resolvable: false,
        reason: 'NoMatchingVersion',
        message,
      },
    }
  }
  const namespace = graph.installNamespace(dep.name, node.namespace)
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
  const { policy } = graph
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
  const fail = (
    reason: Conflict['reason'],
    resolvable: boolean,
    extra: string,
    resolution?: Conflict['resolution'],
  ): Omit<Decision, 'to'> => {
    const message = conflictMessage(target.package, c.display, version.raw, extra)
    return {
      report: { ...base, state: 'Conflict', resolvable, message },
      conflict: { ...conflictBase, resolvable, reason, message, ...(resolution ? { resolution } : {}) },
    }
  }
  if (node.action === 'keep' && target.action === 'keep') {
    return {
      report: {
        ...base,
        state: 'Conflict',
        resolvable: false,
        preExisting: true,
        message: conflictMessage(target.package, c.display, version.raw, 'pre-existing; not caused by the targets'),
      },
    }
  }
  if (target.action === 'target') {
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
  const entry = graph.catalog.packages.get(target.package)
  const constraints = graph.rangesOn(target).map((r) => r.constraint)
  if (!constraints.includes(c)) constraints.push(c)
  const admitted = entry ? candidates(entry, constraints, policy) : []
  if (admitted.length === 0) {
    if (c.kind === 'digest') return fail('DigestMismatch', false, `digest ${c.digest} required`)
    const clash =
      entry && twoVersionsAtOnce(graph, entry, target.installationType, target.id, target.namespace, node, c)
    if (clash) return fail('InstallationTypeViolation', false, clash)
    return fail('NoVersionSatisfiesAll', false, `no version satisfies ${describeConstraints(constraints)}`)
  }
  if (target.action === 'install') {
    const chosen = pick(entry!, admitted, constraints, policy)!
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
    const to = policy.upgradeTarget === 'Lowest' ? up[0]! : pick(entry!, up, constraints, policy)!
    if (policy.upgrades === 'Allow') {
      return {
        effect: { kind: 'change', node: target, version: to, action: 'upgrade' },
        report: {
          ...base,
          state: 'Upgrade',
          satisfiedBy: { package: target.package, version: to.version.raw },
          message: `upgrade ${target.package} from ${original.raw} to ${to.version.raw}`,
        },
      }
    }
    return fail('UpgradeNotAllowed', true, `upgrading to ${to.version.raw} resolves it (\`policy.upgrades\` is Deny)`, {
      action: 'Upgrade',
      version: to.version.raw,
    })
  }
  const to = down[down.length - 1]!
  if (policy.downgrades === 'Allow') {
    return {
      effect: { kind: 'change', node: target, version: to, action: 'downgrade' },
      report: {
        ...base,
        state: 'Downgrade',
        satisfiedBy: { package: target.package, version: to.version.raw },
        message: `downgrade ${target.package} from ${original.raw} to ${to.version.raw}`,
      },
    }
  }
  return fail(
    dir === 'Above' ? 'InstalledTooNew' : 'DowngradeNotAllowed',
    false,
    `only a downgrade to ${to.version.raw} would resolve it (\`policy.downgrades\` is Deny)`,
  )
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
