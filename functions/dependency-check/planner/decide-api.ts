/**
 * A GVK (API) dependency against the graph: served by the cluster, provided
 * by a present node, or the package version to install or change to so that
 * it is provided (rule 2 for APIs), or why nothing provides it.
 */
import type { GVKDependency } from '../../api/dependencies.js'
import { gvkKey } from '../graph.js'
import type { IndexedVersion } from '../graph.js'
import { describeConstraints } from '../messages.js'
import type { Conflict } from '../plan.js'
import { compareVersions, isUpgrade } from '../versions.js'
import { candidates } from './candidates.js'
import { reportName, satisfiedBy, stateOf } from './decision.js'
import type { Decision, Effect, ReportBase } from './decision.js'
import { nodeId, nodeLabel } from './plan-graph.js'
import type { PlanGraph, PlanNode } from './plan-graph.js'

export function decideGVK(graph: PlanGraph, node: PlanNode, dep: GVKDependency): Decision {
  const { catalog, policy } = graph
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
  if (provider) {
    const catalogProviders = catalog.providers.get(key) ?? []
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
  if (dep.optional && policy.optional === 'Skip')
    return { report: { ...base, state: 'Skipped', message: `optional dependency ${key} is not served; skipped` } }
  if (node.action === 'keep') {
    // An untouched installation's API: the targets are to blame only if an installed version served it before.
    const before = graph.servedBefore().get(key) ?? []
    if (before.length === 0)
      return {
        report: { ...base, state: 'Missing', resolvable: false, preExisting: true, message: `${key} is not served` },
      }
    const message = `${key} would no longer be served (provided before by ${before.join(', ')})`
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
  const names = catalog.providers.get(key) ?? []
  // An installation of a providing package, at a version that does not provide it: change its version (rule 2 for APIs).
  let failed: Decision | undefined
  for (const name of names) {
    const present = graph.nodes.get(graph.scope(name, node.namespace))
    if (!present) continue
    const decision = providerChange(graph, present, key, base)
    if (!decision.conflict || decision.conflict.resolvable) return decision
    failed ??= decision
  }
  const absent = names.filter((name) => !graph.byPackage.has(name))
  for (const name of absent) {
    const entry = catalog.packages.get(name)!
    const namespace = graph.installNamespace(name, node.namespace)
    const constraints = graph.rangesOn({ package: name, id: nodeId(name, namespace) }).map((r) => r.constraint)
    const providing = candidates(entry, constraints, policy).filter((v) =>
      v.spec.provides.some((g) => gvkKey(g) === key),
    )
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
  if (failed) return failed
  if (dep.optional)
    return {
      report: {
        ...base,
        state: 'Skipped',
        message: `optional dependency ${key} is not served and no package provides it; skipped`,
      },
    }
  const message = `no installed package, cluster API or catalog package provides ${key}`
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

/**
 * A GVK dependency on `key` whose providing package is present at a version
 * that does not provide it: the version of that package that provides it and
 * satisfies every range on it, per the upgrade / downgrade policies (as rule 2
 * does for a package dependency). A target's version is fixed.
 */
function providerChange(graph: PlanGraph, present: PlanNode, key: string, base: ReportBase): Decision {
  const { policy } = graph
  const entry = graph.catalog.packages.get(present.package)!
  const current = present.version
  const label = nodeLabel(present.package, present.namespace, current?.raw)
  const actual = present.installed?.version.raw ?? current?.raw
  const to = present.id
  const fail = (
    reason: Conflict['reason'],
    resolvable: boolean,
    text: string,
    extra: { direction?: Conflict['direction']; resolution?: Conflict['resolution'] } = {},
  ): Decision => {
    const message = `${label} does not provide ${key}: ${text}`
    return {
      to,
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
  if (present.action === 'target' || !current)
    return fail('Missing', false, `${present.package} is a target, so its version is fixed`)
  const constraints = graph.rangesOn(present).map((r) => r.constraint)
  const providing = candidates(entry, constraints, policy).filter((v) => v.spec.provides.some((g) => gvkKey(g) === key))
  if (providing.length === 0) {
    const all = entry.versions.filter((v) => v.spec.provides.some((g) => gvkKey(g) === key)).map((v) => v.version.raw)
    const text =
      constraints.length > 0
        ? `no version of ${present.package} both provides it and satisfies ${describeConstraints(constraints)}`
        : `no version of ${present.package} that provides it is admitted by \`policy.prereleases\` / \`policy.incompleteVersions\``
    return fail('NoVersionSatisfiesAll', false, `${text} (versions that provide it: ${all.join(', ')})`)
  }
  const report = (
    state: 'Install' | 'Upgrade' | 'Downgrade' | 'Fulfilled',
    v: IndexedVersion,
    message: string,
    effect: Effect,
  ): Decision => ({
    to,
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
  })
  if (present.action === 'install') {
    const chosen = providing[providing.length - 1]!
    return report('Install', chosen, `install ${present.package}@${chosen.version.raw}, which provides ${key}`, {
      kind: 'change',
      node: present,
      version: chosen,
      action: 'install',
    })
  }
  const original = present.installed!.version
  const kept = providing.find((v) => compareVersions(v.version, original) === 0)
  if (kept)
    return report('Fulfilled', kept, `${present.package}@${original.raw} kept; it provides ${key}`, {
      kind: 'change',
      node: present,
      version: undefined,
      action: 'keep',
    })
  const up = providing.filter((v) => compareVersions(v.version, original) !== 0 && isUpgrade(original, v.version))
  const down = providing.filter((v) => compareVersions(v.version, original) !== 0 && !isUpgrade(original, v.version))
  if (up.length > 0) {
    const chosen = policy.upgradeTarget === 'Lowest' ? up[0]! : up[up.length - 1]!
    if (policy.upgrades === 'Allow') {
      return report(
        'Upgrade',
        chosen,
        `upgrade ${present.package} from ${original.raw} to ${chosen.version.raw}, which provides ${key}`,
        {
          kind: 'change',
          node: present,
          version: chosen,
          action: 'upgrade',
        },
      )
    }
    return fail(
      'UpgradeNotAllowed',
      true,
      `upgrading to ${chosen.version.raw} resolves it (\`policy.upgrades\` is Deny)`,
      {
        direction: 'Below',
        resolution: { action: 'Upgrade', version: chosen.version.raw },
      },
    )
  }
  const chosen = down[down.length - 1]!
  if (policy.downgrades === 'Allow') {
    return report(
      'Downgrade',
      chosen,
      `downgrade ${present.package} from ${original.raw} to ${chosen.version.raw}, which provides ${key}`,
      {
        kind: 'change',
        node: present,
        version: chosen,
        action: 'downgrade',
      },
    )
  }
  return fail(
    'InstalledTooNew',
    false,
    `only a downgrade to ${chosen.version.raw} would provide it (\`policy.downgrades\` is Deny)`,
    { direction: 'Above' },
  )
}
