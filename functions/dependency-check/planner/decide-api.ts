/**
 * A GVK (API) dependency against the graph: served by the cluster, provided
 * by a present node, or the package version to install or change to so that
 * it is provided (rule 2 for APIs), or why nothing provides it.
 */
import type { DependencyPolicy, GVKDependency } from '../../api/dependencies.js'
import type { Constraint } from '../constraints.js'
import { gvkKey } from '../graph.js'
import type { IndexedPackage, IndexedVersion } from '../graph.js'
import { describeConstraints } from '../messages.js'
import type { Conflict } from '../plan.js'
import { compareVersions, isUpgrade } from '../versions.js'
import type { Version } from '../versions.js'
import { candidates } from './candidates.js'
import { reportName, satisfiedBy, stateOf } from './decision.js'
import type { Decision, Effect, ReportBase } from './decision.js'
import { nodeId, nodeLabel } from './plan-graph.js'
import type { Action, PlanGraph, PlanNode } from './plan-graph.js'

export function decideGVK(graph: PlanGraph, node: PlanNode, dep: GVKDependency): Decision {
  const key = gvkKey(dep.gvk)
  const base = reportName(key, 'GVK', dep.optional)
  if (graph.clusterAPIs.has(key))
    return {
      report: {
        ...base,
        state: 'Fulfilled',
        satisfiedBy: { clusterAPI: true },
        message: `${key} is served by the cluster`,
      },
    }
  const providers = graph.providersOf(key)
  const provider = providers.find((n) => n === node) ?? providers[0]
  if (provider) return providedByNode(graph, node, provider, key, base)
  if (dep.optional && graph.policy.optional === 'Skip')
    return { report: { ...base, state: 'Skipped', message: `optional dependency ${key} is not served; skipped` } }
  if (node.action === 'keep') return unservedForKeptNode(graph, node, key, base)
  const names = graph.catalog.providers.get(key) ?? []
  // A present provider's version change wins over an install; its unresolvable conflict is reported only if no install helps.
  const changed = changePresentProvider(graph, node, names, key, base)
  if (changed && resolves(changed)) return changed
  const installed = installAbsentProvider(graph, node, names, key, base)
  if (installed) return installed
  if (changed) return changed
  if (dep.optional)
    return {
      report: {
        ...base,
        state: 'Skipped',
        message: `optional dependency ${key} is not served and no package provides it; skipped`,
      },
    }
  return missingAPI(node, key, base, `no installed package, cluster API or catalog package provides ${key}`)
}

/** The API is provided by a node of the plan: the report says how (kept, installed, or a version change). */
function providedByNode(graph: PlanGraph, node: PlanNode, provider: PlanNode, key: string, base: ReportBase): Decision {
  const catalogProviders = graph.catalog.providers.get(key) ?? []
  const ambiguous = provider.action === 'install' && catalogProviders.length > 1
  const state = ambiguous ? 'Ambiguous' : stateOf(provider)
  const label = nodeLabel(provider.package, provider.namespace, provider.version?.raw)
  const message = ambiguous
    ? `${key} is provided by ${catalogProviders.join(', ')}; picked ${label} (catalog order)`
    : provider.action === 'install'
      ? `install ${label}, which provides ${key}`
      : provider.action === 'upgrade' || provider.action === 'downgrade'
        ? `${provider.action} ${provider.package} from ${provider.installed?.version.raw} to ${provider.version?.raw}, which provides ${key}`
        : `${key} is provided by ${label}`
  const decision: Decision = { report: { ...base, state, satisfiedBy: satisfiedBy(provider), message } }
  if (provider !== node) decision.to = provider.id
  return decision
}

/**
 * An untouched installation's API that nothing serves: the targets are to
 * blame only if an installed version served it before.
 */
function unservedForKeptNode(graph: PlanGraph, node: PlanNode, key: string, base: ReportBase): Decision {
  const before = graph.servedBefore().get(key) ?? []
  if (before.length === 0)
    return {
      report: { ...base, state: 'Missing', resolvable: false, preExisting: true, message: `${key} is not served` },
    }
  return missingAPI(node, key, base, `${key} would no longer be served (provided before by ${before.join(', ')})`)
}

/** The unresolvable Missing report of an API, with its conflict. */
function missingAPI(node: PlanNode, key: string, base: ReportBase, message: string): Decision {
  return {
    report: { ...base, state: 'Missing', resolvable: false, message },
    conflict: {
      id: key,
      package: key,
      namespace: node.namespace,
      required: key,
      resolvable: false,
      reason: 'Missing',
      message,
    },
  }
}

/** A decision with no conflict, or with one marked resolvable. */
function resolves(decision: Decision): boolean {
  return !decision.conflict || decision.conflict.resolvable
}

/**
 * An installation of a providing package, at a version that does not provide
 * it: change its version (rule 2 for APIs). The first change that resolves,
 * else the first that fails; undefined if no providing package is present.
 */
function changePresentProvider(
  graph: PlanGraph,
  node: PlanNode,
  names: readonly string[],
  key: string,
  base: ReportBase,
): Decision | undefined {
  let failed: Decision | undefined
  for (const name of names) {
    const present = graph.nodes.get(graph.scope(name, node.namespace))
    if (!present) continue
    const decision = providerChange(graph, present, key, base)
    if (resolves(decision)) return decision
    failed ??= decision
  }
  return failed
}

/** The install of the first absent providing package with an admitted providing version, in catalog order. */
function installAbsentProvider(
  graph: PlanGraph,
  node: PlanNode,
  names: readonly string[],
  key: string,
  base: ReportBase,
): Decision | undefined {
  const absent = names.filter((name) => !graph.byPackage.has(name))
  for (const name of absent) {
    const entry = graph.catalog.packages.get(name)!
    const namespace = graph.installNamespace(name, node.namespace)
    const constraints = graph.rangesOn({ package: name, id: nodeId(name, namespace) }).map((r) => r.constraint)
    const providing = candidates(entry, constraints, graph.policy).filter((v) => providesAPI(v, key))
    const chosen = providing[providing.length - 1]
    if (!chosen) continue
    const ambiguous = absent.length > 1
    const message = ambiguous
      ? `${key} is provided by ${absent.join(', ')}; picked ${name}@${chosen.version.raw} (catalog order)`
      : `install ${name}@${chosen.version.raw}, which provides ${key}`
    return {
      to: nodeId(name, namespace),
      effect: { kind: 'install', package: name, namespace, version: chosen },
      report: {
        ...base,
        state: ambiguous ? 'Ambiguous' : 'Install',
        satisfiedBy: { package: name, version: chosen.version.raw },
        message,
      },
    }
  }
  return undefined
}

function providesAPI(v: IndexedVersion, key: string): boolean {
  return v.spec.provides.some((g) => gvkKey(g) === key)
}

/** A providing package present in the plan, and the API dependency on `key` it is to provide. */
interface PresentProvider {
  present: PlanNode
  key: string
  base: ReportBase
}

/**
 * A GVK dependency on `key` whose providing package is present at a version
 * that does not provide it: the version of that package that provides it and
 * satisfies every range on it, per the upgrade / downgrade policies (as rule 2
 * does for a package dependency). A target's version is fixed.
 */
function providerChange(graph: PlanGraph, present: PlanNode, key: string, base: ReportBase): Decision {
  const p: PresentProvider = { present, key, base }
  if (present.action === 'target' || !present.version)
    return cannotProvide(p, 'Missing', false, `${present.package} is a target, so its version is fixed`)
  const entry = graph.catalog.packages.get(present.package)!
  const constraints = graph.rangesOn(present).map((r) => r.constraint)
  const providing = candidates(entry, constraints, graph.policy).filter((v) => providesAPI(v, key))
  if (providing.length === 0) return noProvidingVersion(p, entry, constraints)
  if (present.action === 'install') {
    const chosen = providing[providing.length - 1]!
    const message = `install ${present.package}@${chosen.version.raw}, which provides ${key}`
    return providedAt(p, 'Install', chosen, message, changeEffect(present, chosen, 'install'))
  }
  const original = present.installed!.version
  const kept = providing.find((v) => compareVersions(v.version, original) === 0)
  if (kept) {
    const message = `${present.package}@${original.raw} kept; it provides ${key}`
    return providedAt(p, 'Fulfilled', kept, message, changeEffect(present, undefined, 'keep'))
  }
  return upgradeOrDowngrade(graph.policy, p, providing, original)
}

/** No version of the present provider both provides the API and is admitted: the versions that would. */
function noProvidingVersion(p: PresentProvider, entry: IndexedPackage, constraints: Constraint[]): Decision {
  const { present, key } = p
  const all = entry.versions.filter((v) => providesAPI(v, key)).map((v) => v.version.raw)
  const text =
    constraints.length > 0
      ? `no version of ${present.package} both provides it and satisfies ${describeConstraints(constraints)}`
      : `no version of ${present.package} that provides it is admitted by \`policy.prereleases\` / \`policy.incompleteVersions\``
  return cannotProvide(p, 'NoVersionSatisfiesAll', false, `${text} (versions that provide it: ${all.join(', ')})`)
}

/**
 * None of `providing` is the installed version: upgrade to one (the highest,
 * or the lowest per `policy.upgradeTarget`) if any is newer, else downgrade to
 * the highest older one, each only as its policy allows.
 */
function upgradeOrDowngrade(
  policy: DependencyPolicy,
  p: PresentProvider,
  providing: IndexedVersion[],
  original: Version,
): Decision {
  const { present, key } = p
  const up = providing.filter((v) => compareVersions(v.version, original) !== 0 && isUpgrade(original, v.version))
  const down = providing.filter((v) => compareVersions(v.version, original) !== 0 && !isUpgrade(original, v.version))
  if (up.length > 0) {
    const chosen = policy.upgradeTarget === 'Lowest' ? up[0]! : up[up.length - 1]!
    if (policy.upgrades === 'Allow') {
      const message = `upgrade ${present.package} from ${original.raw} to ${chosen.version.raw}, which provides ${key}`
      return providedAt(p, 'Upgrade', chosen, message, changeEffect(present, chosen, 'upgrade'))
    }
    const text = `upgrading to ${chosen.version.raw} resolves it (\`policy.upgrades\` is Deny)`
    return cannotProvide(p, 'UpgradeNotAllowed', true, text, {
      direction: 'Below',
      resolution: { action: 'Upgrade', version: chosen.version.raw },
    })
  }
  const chosen = down[down.length - 1]!
  if (policy.downgrades === 'Allow') {
    const message = `downgrade ${present.package} from ${original.raw} to ${chosen.version.raw}, which provides ${key}`
    return providedAt(p, 'Downgrade', chosen, message, changeEffect(present, chosen, 'downgrade'))
  }
  const text = `only a downgrade to ${chosen.version.raw} would provide it (\`policy.downgrades\` is Deny)`
  return cannotProvide(p, 'InstalledTooNew', false, text, { direction: 'Above' })
}

function changeEffect(node: PlanNode, version: IndexedVersion | undefined, action: Action): Effect {
  return { kind: 'change', node, version, action }
}

/** The present provider meets the API at version `v`, through `effect`. */
function providedAt(
  p: PresentProvider,
  state: 'Install' | 'Upgrade' | 'Downgrade' | 'Fulfilled',
  v: IndexedVersion,
  message: string,
  effect: Effect,
): Decision {
  const { present, base } = p
  return {
    to: present.id,
    effect,
    report: {
      ...base,
      state,
      ...(present.installed ? { installed: present.installed.version.raw } : {}),
      satisfiedBy: {
        package: present.package,
        version: v.version.raw,
        ...(present.namespace ? { namespace: present.namespace } : {}),
      },
      message,
    },
  }
}

/** The present provider cannot provide the API at any version it may have: the conflict and why. */
function cannotProvide(
  p: PresentProvider,
  reason: Conflict['reason'],
  resolvable: boolean,
  text: string,
  extra: { direction?: Conflict['direction']; resolution?: Conflict['resolution'] } = {},
): Decision {
  const { present, key, base } = p
  const label = nodeLabel(present.package, present.namespace, present.version?.raw)
  const actual = present.installed?.version.raw ?? present.version?.raw
  const message = `${label} does not provide ${key}: ${text}`
  return {
    to: present.id,
    report: {
      ...base,
      state: 'Conflict',
      resolvable,
      ...(present.installed ? { installed: present.installed.version.raw } : {}),
      message,
    },
    conflict: {
      id: present.id,
      package: present.package,
      namespace: present.namespace,
      ...(actual ? { actual } : {}),
      required: key,
      resolvable,
      reason,
      message,
      ...extra,
    },
  }
}
