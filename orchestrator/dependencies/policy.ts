/**
 * The dependency policy of each downstream repository (pure): the fleet's
 * DependencyPolicy objects, the most specific selecting a repository winning
 * each field. A policy that names the repository (`spec.repositories`) comes
 * before one that selects it by its labels (`spec.repositorySelector` with
 * at least one requirement), which comes before one that selects every
 * repository (neither, or an empty selector); policies of one precedence are
 * taken in `namespace/name` order, and a later one that sets a field the
 * first set otherwise is a warning. Pins and configured dependencies are
 * taken the same way, per package. What no policy sets is today's default
 * (docs/package-dependencies.md, "Dependency policy").
 */
import { defaultDependencyPolicy } from '../../functions/api/dependencies.js'
import type { DependencyPolicy } from '../../functions/api/dependencies.js'
import {
  isDependencyPolicy,
  kubernetesVersionLabel,
  readDependencyPolicy,
} from '../../functions/api/dependency-policy.js'
import type {
  ClusterVersionSource,
  ConfiguredDependency,
  DependencyPin,
  DependencyPolicyObject,
} from '../../functions/api/dependency-policy.js'
import type { Repository } from '../../functions/api/repository.js'
import { matchesLabelSelector } from '../../functions/krm/index.js'
import type { KubeObject } from '../../functions/krm/index.js'

/** The fields a policy may set for the whole repository, as the planner and render read them. */
type PolicyField = 'upgrades' | 'downgrades' | 'prereleases' | 'install' | 'autoUpgrade' | 'clusterVersion'

/** One repository's policy, every field decided. */
export interface RepositoryPolicy {
  /** The resolver's policy: upgrades, downgrades, prereleases, autoUpgrade (the rest as dependency-check's defaults). */
  resolver: DependencyPolicy
  /** false: the plan is only reported, as `--dependencies check` reports it. */
  install: boolean
  /** Pins by package, each with the policy that set it (`DependencyPolicy ns/name`). */
  pins: Map<string, { pin: DependencyPin; from: string }>
  /** Configured dependencies by package, each with its policy. */
  configure: Map<string, { dependency: ConfiguredDependency; from: string }>
  clusterVersion: ClusterVersionSource
  /** Which policy set each field (those no policy set are defaults). */
  setBy: Partial<Record<PolicyField, string>>
}

/** The fleet's policies, read once. */
export interface FleetPolicies {
  policies: readonly DependencyPolicyObject[]
  /** Policies that cannot be read: each fails the dependency plans of every repository (no selection can be trusted). */
  errors: readonly string[]
}

/** The default policy: today's behaviour, for a fleet without DependencyPolicy objects. */
export const defaultRepositoryPolicy: Readonly<RepositoryPolicy> = Object.freeze({
  resolver: { ...defaultDependencyPolicy },
  install: true,
  pins: new Map(),
  configure: new Map(),
  clusterVersion: { label: kubernetesVersionLabel },
  setBy: {},
})

/** Reads every DependencyPolicy of the fleet. */
export function readFleetPolicies(objects: readonly KubeObject[]): FleetPolicies {
  const policies: DependencyPolicyObject[] = []
  const errors: string[] = []
  for (const object of objects) {
    if (!isDependencyPolicy(object)) continue
    const read = readDependencyPolicy(object)
    if (read.ok) policies.push(read.value)
    else errors.push(...read.errors.map((e) => `${object.describe()}: ${e.message}`))
  }
  policies.sort((a, b) => compare(`${a.namespace}/${a.name}`, `${b.namespace}/${b.name}`))
  return { policies, errors }
}

/** How specifically a policy selects `repo`: 3 by name, 2 by labels, 1 as every repository's, 0 not at all. */
export function precedence(
  policy: DependencyPolicyObject,
  repo: Pick<Repository, 'name' | 'namespace' | 'object'>,
): number {
  if (policy.namespace !== repo.namespace && policy.namespace !== '' && repo.namespace !== '') return 0
  if (policy.repositories) return policy.repositories.includes(repo.name) ? 3 : 0
  const selector = policy.repositorySelector
  const requirements = Object.keys(selector?.matchLabels ?? {}).length + (selector?.matchExpressions?.length ?? 0)
  if (!selector || requirements === 0) return 1
  return matchesLabelSelector(selector, repo.object.labels()) ? 2 : 0
}

/** The settings a DependencyPolicy may set for a whole repository, each decided on its own. */
const policySettings = ['upgrades', 'downgrades', 'prereleases', 'install', 'autoUpgrade', 'clusterVersion'] as const

/** Each setting (and pin, and configured dependency) by key: its value, the policy that set it, and that policy's precedence. */
type Decided = Map<string, { value: unknown; from: string; rank: number }>

/** The policy of `repo`, and the warnings of policies of one precedence that disagree. */
export function repositoryPolicy(
  fleet: FleetPolicies,
  repo: Pick<Repository, 'name' | 'namespace' | 'object'>,
): { policy: RepositoryPolicy; warnings: string[] } {
  const selecting = fleet.policies
    .map((policy) => ({ policy, rank: precedence(policy, repo) }))
    .filter((p) => p.rank > 0)
    .sort((a, b) => b.rank - a.rank)
  if (selecting.length === 0) return { policy: defaultRepositoryPolicy, warnings: [] }
  const { decided, warnings } = decide(selecting, repo.name)
  return { policy: policyOf(decided), warnings }
}

/** Each key as the most specific policy sets it (the first in name order among equals, warning where they differ). */
function decide(
  selecting: readonly { policy: DependencyPolicyObject; rank: number }[],
  repoName: string,
): { decided: Decided; warnings: string[] } {
  const warnings: string[] = []
  const decided: Decided = new Map()
  const take = (key: string, value: unknown, from: string, rank: number) => {
    if (value === undefined) return
    const first = decided.get(key)
    if (!first) decided.set(key, { value, from, rank })
    else if (first.rank === rank && JSON.stringify(first.value) !== JSON.stringify(value))
      warnings.push(
        `${from} and ${first.from} both select repository ${repoName} as specifically and set ${key} differently: ${first.from} wins (name order)`,
      )
  }
  for (const { policy, rank } of selecting) {
    const from = `DependencyPolicy ${policy.namespace ? `${policy.namespace}/` : ''}${policy.name}`
    for (const key of policySettings) take(key, policy[key], from, rank)
    for (const pin of policy.pins) take(`pins[${pin.package}]`, pin, from, rank)
    for (const dependency of policy.dependencies) take(`dependencies[${dependency.package}]`, dependency, from, rank)
  }
  return { decided, warnings }
}

/** The repository's policy from what was decided, the defaults for what no policy sets. */
function policyOf(decided: Decided): RepositoryPolicy {
  const value = <T>(key: string): T | undefined => decided.get(key)?.value as T | undefined
  const setBy: RepositoryPolicy['setBy'] = {}
  for (const key of policySettings) {
    const d = decided.get(key)
    if (d) setBy[key] = d.from
  }
  const pins: RepositoryPolicy['pins'] = new Map()
  const configure: RepositoryPolicy['configure'] = new Map()
  for (const [key, d] of decided) {
    if (key.startsWith('pins[')) {
      const pin = d.value as DependencyPin
      pins.set(pin.package, { pin, from: d.from })
    } else if (key.startsWith('dependencies[')) {
      const dependency = d.value as ConfiguredDependency
      configure.set(dependency.package, { dependency, from: d.from })
    }
  }
  return {
    resolver: {
      ...defaultDependencyPolicy,
      upgrades: value<'Allow' | 'Deny'>('upgrades') ?? defaultDependencyPolicy.upgrades,
      downgrades: value<'Allow' | 'Deny'>('downgrades') ?? defaultDependencyPolicy.downgrades,
      prereleases: value<DependencyPolicy['prereleases']>('prereleases') ?? defaultDependencyPolicy.prereleases,
      autoUpgrade: value<boolean>('autoUpgrade') ? 'Dependencies' : 'Never',
    },
    install: value<boolean>('install') ?? true,
    pins,
    configure,
    clusterVersion: value<ClusterVersionSource>('clusterVersion') ?? { label: kubernetesVersionLabel },
    setBy,
  }
}

/** The policies of every repository named, computed once each (the fleet's objects are the same for the whole run). */
export class PolicyIndex {
  readonly #cache = new Map<string, { policy: RepositoryPolicy; warnings: string[] }>()

  constructor(readonly fleet: FleetPolicies) {}

  /** The policy of a Repository; the default when the fleet has no policies. */
  of(repo: Pick<Repository, 'name' | 'namespace' | 'object'>): { policy: RepositoryPolicy; warnings: string[] } {
    if (this.fleet.policies.length === 0) return { policy: defaultRepositoryPolicy, warnings: [] }
    const key = `${repo.namespace}|${repo.name}`
    let found = this.#cache.get(key)
    if (!found) this.#cache.set(key, (found = repositoryPolicy(this.fleet, repo)))
    return found
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
