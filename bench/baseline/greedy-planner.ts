/**
 * The greedy round-based planner as it was before the exact resolver (issue 15),
 * kept only as the bench baseline; never imported by the functions.
 */
/**
 * The pure planner: `planDependencies(input) → plan` over the whole graph of
 * targets, installed packages and planned installs (docs/upstream-behaviour.md, "Resolution"). No I/O; the same input (in any order) gives the same plan.
 *
 * Resolution runs in rounds. Round 0 evaluates the targets' dependencies;
 * every install, upgrade or re-chosen version marks the changed node (its
 * own dependencies) and its dependants (their ranges on it) for the next
 * round, so a diamond's ranges are all registered before a shared version is
 * picked. A node's version changes at most `maxChanges` times, so resolution
 * always ends; a final pass evaluates every edge and reports.
 */
import type { Dependency, DependencyPolicy, GVK, GVKDependency, InstallationType, PackageDependency } from '../../functions/api/dependencies.js'
import { candidateAdmitted, direction, parseConstraint, satisfies } from '../../functions/dependency-check/constraints.js'
import type { Constraint } from '../../functions/dependency-check/constraints.js'
import { findVersion, gvkKey, indexCatalogs, walkGraph } from '../../functions/dependency-check/graph.js'
import type { CatalogIndex, IndexedPackage, IndexedVersion } from '../../functions/dependency-check/graph.js'
import type { ChangeStep, Conflict, DependencyReport, InstallStep, Plan, PlanInput, PlanIssue, PruneStep, SatisfiedBy, TargetReport } from '../../functions/dependency-check/plan.js'
import { compareVersions, isPrerelease, parseVersion } from '../../functions/dependency-check/versions.js'
import type { Version } from '../../functions/dependency-check/versions.js'
import { conflictMessage, describeConstraints, missingMessage, noVersionMessage } from '../../functions/dependency-check/messages.js'

const maxChanges = 4

type Action = 'keep' | 'install' | 'upgrade' | 'downgrade' | 'target'

interface Node {
  id: string
  package: string
  namespace: string
  installed?: { name: string; version: Version; asDependency: boolean; deps: Dependency[]; provides: GVK[] }
  action: Action
  version?: Version
  deps: Dependency[]
  provides: GVK[]
  installationType: InstallationType
  changes: number
  /** anyOf dependency index → chosen alternative index. */
  choices: Map<number, number>
  /** Package names this node's ranges are registered under (for a quick unregister). */
  registered?: string[]
  /** Its dependencies were evaluated (and may have planned installs). */
  evaluated?: boolean
}

/** A registered range: `from` requires `name` with `constraint`. */
interface RangeEdge {
  from: Node
  constraint: Constraint
  raw: string
}

/** What applying a decision would change. */
type Effect = { kind: 'install'; package: string; namespace: string; version: IndexedVersion } | { kind: 'change'; node: Node; version: IndexedVersion | undefined; action: Action }

interface Decision {
  report: Omit<DependencyReport, 'requiredBy' | 'transitive' | 'declaredAt'>
  conflict?: Omit<Conflict, 'requiredBy' | 'declaredAt' | 'namespace' | 'constraints'> & { namespace: string; id: string }
  effect?: Effect
  /** The node id the dependency resolves to (graph edge), if any. */
  to?: string
  /** anyOf: the alternative used. */
  choice?: number
}

/** Plans installs, upgrades, downgrades and prunes for the targets; see the module doc. */
export function planDependencies(input: PlanInput): Plan {
  return new Planner(input).run()
}

/** `name@version`, namespaced `ns/name@version`; without a version just the name. */
function nodeLabel(pkg: string, namespace: string, version?: string): string {
  const name = namespace ? `${namespace}/${pkg}` : pkg
  return version ? `${name}@${version}` : name
}

function nodeId(pkg: string, namespace: string): string {
  return namespace ? `${namespace}/${pkg}` : pkg
}

function byString(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

class Planner {
  private readonly catalog: CatalogIndex
  private readonly policy: DependencyPolicy
  private readonly nodes = new Map<string, Node>()
  private readonly byPackage = new Map<string, Node[]>()
  private readonly ranges = new Map<string, RangeEdge[]>()
  private readonly clusterAPIs: Set<string>
  private readonly issues: PlanIssue[] = []
  private readonly targetConflicts: (Conflict & { id: string })[] = []
  private providerCache: Map<string, Node[]> | undefined
  /** Node id → the installations of the same package and namespace that were ignored (duplicates). */
  private readonly duplicates = new Map<string, { name: string; version: string }[]>()
  /** Package → ids of nodes whose GVK / anyOf dependency resolved to it (re-evaluated when it changes). */
  private readonly apiDependants = new Map<string, Set<string>>()
  private installedProvides: Map<string, string[]> | undefined
  /** Some evaluated node's dependencies were replaced, so planned installs may be orphaned. */
  private mayOrphan = false

  constructor(private readonly input: PlanInput) {
    this.catalog = indexCatalogs(input.catalogs)
    this.policy = input.policy
    this.clusterAPIs = new Set(input.clusterAPIs.map(gvkKey))
    for (const p of this.catalog.problems) {
      this.issues.push({ severity: 'warning', package: p.package, message: `catalog ${p.catalog}: version ${JSON.stringify(p.version)} of ${p.package} is not a semantic version; skipped` })
    }
  }

  run(): Plan {
    this.addInstalled()
    const targetIds = this.addTargets()
    for (const node of this.sortedNodes()) this.register(node)
    this.chooseConstraintTargets(targetIds)
    this.resolve(targetIds)
    this.dropUnrequiredInstalls()
    return this.report(targetIds)
  }

  // ---- input --------------------------------------------------------------

  private addInstalled(): void {
    const installed = [...this.input.installed].filter((i) => !i.deleting)
    installed.sort((a, b) => byString(nodeId(a.package, a.namespace), nodeId(b.package, b.namespace)) || byString(a.name, b.name))
    for (const inst of installed) {
      const id = nodeId(inst.package, inst.namespace)
      const existing = this.nodes.get(id)
      if (existing) {
        this.issues.push({
          severity: 'warning',
          package: inst.package,
          message: `installation ${inst.name} duplicates ${existing.installed!.name} (${inst.package} in ${inst.namespace || 'the cluster scope'}); ignored`,
        })
        const list = this.duplicates.get(id)
        if (list) list.push({ name: inst.name, version: inst.version })
        else this.duplicates.set(id, [{ name: inst.name, version: inst.version }])
        continue
      }
      const version = parseVersion(inst.version, { coerce: true }) ?? { raw: inst.version, coerced: false }
      if (!version.semver && !version.digest) {
        this.issues.push({
          severity: 'warning',
          package: inst.package,
          message: `installation ${inst.name}: version ${JSON.stringify(inst.version)} is not a semantic version; it satisfies only unconstrained dependencies`,
        })
      }
      const entry = this.catalog.packages.get(inst.package)
      const spec = findVersion(entry, version)?.spec
      let deps = inst.dependencies
      if (!deps) {
        deps = spec?.dependencies ?? []
        if (!spec)
          this.issues.push({
            severity: 'info',
            package: inst.package,
            message: `${nodeLabel(inst.package, inst.namespace, inst.version)}: dependencies unknown (no \`spec.dependencies\` and not in the catalog); assumed none`,
          })
      }
      this.addNode({
        id,
        package: inst.package,
        namespace: inst.namespace,
        installed: { name: inst.name, version, asDependency: inst.installedAsDependency, deps, provides: spec?.provides ?? [] },
        action: 'keep',
        version,
        deps,
        provides: spec?.provides ?? [],
        installationType: spec?.installationType ?? entry?.installationType ?? 'NoRestrictions',
        changes: 0,
        choices: new Map(),
      })
    }
  }

  /** Targets replace the installed versions of their packages (those ranges no longer count). */
  private addTargets(): string[] {
    const ids: string[] = []
    const targets = [...this.input.targets].sort((a, b) => byString(nodeId(a.package, a.namespace), nodeId(b.package, b.namespace)))
    for (const t of targets) {
      const id = nodeId(t.package, t.namespace)
      if (ids.includes(id)) {
        this.issues.push({ severity: 'error', package: t.package, message: `target ${id} is listed twice` })
        continue
      }
      const entry = this.catalog.packages.get(t.package)
      let node = this.nodes.get(id)
      if (!node) {
        node = { id, package: t.package, namespace: t.namespace, action: 'target', deps: [], provides: [], installationType: 'NoRestrictions', changes: 0, choices: new Map() }
        this.addNode(node)
      }
      node.action = 'target'
      node.installationType = t.manifest?.installationType ?? entry?.installationType ?? 'NoRestrictions'
      ids.push(id)
      let version: Version | undefined
      if (t.version) {
        version = parseVersion(t.version, { coerce: true })
        if (!version) {
          this.issues.push({ severity: 'error', package: t.package, message: `target ${id}: version ${JSON.stringify(t.version)} is not a semantic version` })
          continue
        }
      }
      node.version = version
      if (t.manifest) {
        node.deps = t.manifest.dependencies
        node.provides = t.manifest.provides
        continue
      }
      if (!entry) {
        node.deps = []
        this.targetConflicts.push({
          id,
          package: t.package,
          namespace: t.namespace,
          required: t.version ?? t.constraint ?? '',
          requiredBy: 'spec.targets',
          constraints: [],
          resolvable: false,
          reason: 'Missing',
          message: `"${t.package}" is not available in any repository`,
        })
        continue
      }
      if (version) {
        const found = findVersion(entry, version)
        if (!found) {
          this.targetConflicts.push({
            id,
            package: t.package,
            namespace: t.namespace,
            required: t.version!,
            requiredBy: 'spec.targets',
            constraints: [],
            resolvable: false,
            reason: 'NoMatchingVersion',
            message: `${t.package} has no version ${t.version} in the catalog`,
          })
          node.deps = []
          continue
        }
        node.deps = found.spec.dependencies
        node.provides = found.spec.provides
        node.installationType = found.spec.installationType ?? node.installationType
      }
    }
    return ids
  }

  /** Targets given by constraint (or nothing): pick a version once the installed dependants' ranges are known. */
  private chooseConstraintTargets(ids: readonly string[]): void {
    for (const t of this.input.targets) {
      if (t.version || t.manifest) continue
      const node = this.nodes.get(nodeId(t.package, t.namespace))
      const entry = this.catalog.packages.get(t.package)
      if (!node || !entry || node.version) continue
      const parsed = parseConstraint(t.constraint ?? '')
      if (!parsed.ok) {
        this.issues.push({ severity: 'error', package: t.package, message: `target ${node.id}: ${parsed.error}` })
        continue
      }
      const constraints = [
        parsed.constraint,
        ...this.rangesOn(node)
          .filter((r) => r.from !== node)
          .map((r) => r.constraint),
      ]
      const candidates = this.candidates(entry, constraints)
      const chosen = this.pick(entry, candidates, constraints)
      if (!chosen) {
        this.targetConflicts.push({
          id: node.id,
          package: t.package,
          namespace: t.namespace,
          required: parsed.constraint.display,
          requiredBy: 'spec.targets',
          constraints: [],
          resolvable: false,
          reason: 'NoMatchingVersion',
          message: noVersionMessage(t.package, constraints, this.funnel(entry, constraints)),
        })
        continue
      }
      this.unregister(node)
      node.version = chosen.version
      node.deps = chosen.spec.dependencies
      node.provides = chosen.spec.provides
      this.register(node)
    }
    void ids
  }

  private addNode(node: Node): void {
    this.providerCache = undefined
    this.nodes.set(node.id, node)
    const list = this.byPackage.get(node.package)
    if (list) {
      list.push(node)
      list.sort((a, b) => byString(a.namespace, b.namespace))
    } else this.byPackage.set(node.package, [node])
  }

  private sortedNodes(): Node[] {
    return [...this.nodes.values()].sort((a, b) => byString(a.id, b.id))
  }

  // ---- ranges ---------------------------------------------------------------

  /** Registers the node's package-dependency ranges (chosen anyOf alternatives included). */
  private register(node: Node): void {
    node.deps.forEach((dep, i) => {
      const pkgDep = dep.type === 'Package' ? dep : dep.type === 'AnyOf' ? this.chosenPackage(node, dep, i) : undefined
      if (!pkgDep) return
      const parsed = parseConstraint(pkgDep.version)
      if (!parsed.ok) return
      const list = this.ranges.get(pkgDep.name)
      const edge = { from: node, constraint: parsed.constraint, raw: pkgDep.version }
      if (list) list.push(edge)
      else this.ranges.set(pkgDep.name, [edge])
      ;(node.registered ??= []).push(pkgDep.name)
    })
  }

  private unregister(node: Node): void {
    for (const name of new Set(node.registered ?? [])) {
      const list = this.ranges.get(name)
      if (list)
        this.ranges.set(
          name,
          list.filter((r) => r.from !== node),
        )
    }
    node.registered = []
  }

  private chosenPackage(node: Node, dep: Extract<Dependency, { type: 'AnyOf' }>, index: number): PackageDependency | undefined {
    const choice = node.choices.get(index)
    const alt = choice === undefined ? undefined : dep.anyOf[choice]
    return alt?.type === 'Package' ? alt : undefined
  }

  /** Where a dependency of a package in `namespace` on `pkg` lives (see README, "Scopes"). */
  private scope(pkg: string, namespace: string): string {
    const own = nodeId(pkg, namespace)
    if (this.nodes.has(own)) return own
    const cluster = nodeId(pkg, '')
    if (this.nodes.has(cluster)) return cluster
    const entry = this.catalog.packages.get(pkg)
    const existing = this.byPackage.get(pkg)
    if (entry?.installationType === 'OnePerCluster') return existing?.[0]?.id ?? cluster
    return own
  }

  /** The ranges C(D) on the node `id` would be: every present dependant's whose scope resolves to it. */
  private rangesOn(node: { package: string; id: string }): RangeEdge[] {
    return (this.ranges.get(node.package) ?? []).filter((r) => this.scope(node.package, r.from.namespace) === node.id)
  }

  // ---- candidates -------------------------------------------------------------

  /** avail(D) ∩ every constraint: incomplete-version and prerelease policies first. */
  private candidates(entry: IndexedPackage, constraints: readonly Constraint[]): IndexedVersion[] {
    return entry.versions.filter(
      (v) =>
        (!v.version.coerced || this.policy.incompleteVersions === 'Coerce') && candidateAdmitted(v.version, this.policy.prereleases, constraints) && constraints.every((c) => satisfies(v.version, c)),
    )
  }

  /** Carvel's funnel figures for a no-version message. */
  private funnel(entry: IndexedPackage, constraints: readonly Constraint[]): number[] {
    const all = entry.versions.length
    const complete = entry.versions.filter((v) => !v.version.coerced || this.policy.incompleteVersions === 'Coerce')
    const admitted = complete.filter((v) => candidateAdmitted(v.version, this.policy.prereleases, constraints))
    const matching = admitted.filter((v) => constraints.every((c) => satisfies(v.version, c)))
    return [all, admitted.length, matching.length]
  }

  /**
   * The version to install: with no non-empty range, `latest(D)` per policy
   * (`latestVersion` if listed and admitted, else the highest stable);
   * otherwise the highest candidate (build metadata breaks ties).
   */
  private pick(entry: IndexedPackage, candidates: readonly IndexedVersion[], constraints: readonly Constraint[]): IndexedVersion | undefined {
    if (candidates.length === 0) return undefined
    const highest = candidates[candidates.length - 1]!
    if (constraints.some((c) => c.kind !== 'any') || this.policy.latest === 'Highest') return highest
    if (this.policy.latest === 'LatestVersionField' && entry.latestVersion) {
      const latest = parseVersion(entry.latestVersion, { coerce: true })
      const hit = latest && candidates.find((c) => compareVersions(c.version, latest) === 0 || c.version.raw === entry.latestVersion)
      if (hit) return hit
    }
    const stable = candidates.filter((c) => !isPrerelease(c.version))
    return stable[stable.length - 1] ?? highest
  }

  // ---- resolution -------------------------------------------------------------

  private resolve(targetIds: readonly string[]): void {
    let dirty = new Set(targetIds)
    for (let round = 0; dirty.size > 0 && round < 10_000; round++) {
      const next = new Set<string>()
      const fresh: Node[] = []
      for (const id of [...dirty].sort(byString)) {
        const node = this.nodes.get(id)
        if (!node) continue
        node.evaluated = true
        node.deps.forEach((dep, i) => {
          const decision = this.decide(node, dep, i)
          if (decision.choice !== undefined && node.choices.get(i) !== decision.choice) {
            if (node.choices.has(i)) this.mayOrphan = true
            this.unregister(node)
            node.choices.set(i, decision.choice)
            this.register(node)
          }
          if (decision.to && dep.type !== 'Package') {
            const pkg = this.nodes.get(decision.to)?.package ?? (decision.effect?.kind === 'install' ? decision.effect.package : undefined)
            if (pkg) {
              const set = this.apiDependants.get(pkg)
              if (set) set.add(node.id)
              else this.apiDependants.set(pkg, new Set([node.id]))
            }
          }
          if (decision.effect) this.apply(decision.effect, next, fresh)
        })
      }
      for (const node of fresh) this.register(node)
      dirty = next
    }
  }

  private apply(effect: Effect, next: Set<string>, fresh: Node[]): void {
    if (effect.kind === 'install') {
      const id = nodeId(effect.package, effect.namespace)
      if (this.nodes.has(id)) return
      const entry = this.catalog.packages.get(effect.package)
      const node: Node = {
        id,
        package: effect.package,
        namespace: effect.namespace,
        action: 'install',
        version: effect.version.version,
        deps: effect.version.spec.dependencies,
        provides: effect.version.spec.provides,
        installationType: effect.version.spec.installationType ?? entry?.installationType ?? 'NoRestrictions',
        changes: 0,
        choices: new Map(),
      }
      this.addNode(node)
      fresh.push(node)
      next.add(id)
      return
    }
    const { node } = effect
    if (node.changes >= maxChanges) return
    node.changes++
    if (node.evaluated) this.mayOrphan = true
    this.providerCache = undefined
    this.unregister(node)
    node.action = effect.action
    node.choices.clear()
    if (effect.version) {
      node.version = effect.version.version
      node.deps = effect.version.spec.dependencies
      node.provides = effect.version.spec.provides
    } else if (node.installed) {
      node.version = node.installed.version
      node.deps = node.installed.deps
      node.provides = node.installed.provides
    }
    this.register(node)
    next.add(node.id)
    for (const r of this.ranges.get(node.package) ?? []) next.add(r.from.id)
    for (const id of this.apiDependants.get(node.package) ?? []) next.add(id)
  }

  /** Decides one dependency of `node` (no side effects; `effect` says what to apply). */
  private decide(node: Node, dep: Dependency, index: number): Decision {
    if (dep.type === 'Package') return this.decidePackage(node, dep)
    if (dep.type === 'GVK') return this.decideGVK(node, dep)
    return this.decideAnyOf(node, dep, index)
  }

  private decidePackage(node: Node, dep: PackageDependency): Decision {
    const base = { name: dep.name, type: 'Package' as const, optional: dep.optional || undefined }
    const parsed = parseConstraint(dep.version)
    if (!parsed.ok) {
      return {
        report: { ...base, required: dep.version, state: 'Conflict', resolvable: false, message: parsed.error },
        conflict: { id: nodeId(dep.name, node.namespace), package: dep.name, namespace: node.namespace, required: dep.version, resolvable: false, reason: 'ImproperConstraint', message: parsed.error },
      }
    }
    const c = parsed.constraint
    const required = c.display
    const id = this.scope(dep.name, node.namespace)
    const target = this.nodes.get(id)
    const entry = this.catalog.packages.get(dep.name)
    const present = target && (target.version || target.action === 'target')
    if (target && present) {
      const installed = target.installed?.version.raw
      const withInstalled = { ...base, required, ...(installed ? { installed } : {}) }
      const satisfiedBy: SatisfiedBy = { package: target.package, version: target.version?.raw ?? '', ...(target.namespace ? { namespace: target.namespace } : {}) }
      if (!target.version) {
        return { to: id, report: { ...withInstalled, state: 'Fulfilled', satisfiedBy, message: `${dep.name} is a target of unknown version; its range is not checked` } }
      }
      if (satisfies(target.version, c)) {
        const state = target.action === 'install' ? 'Install' : target.action === 'upgrade' ? 'Upgrade' : target.action === 'downgrade' ? 'Downgrade' : 'Fulfilled'
        return { to: id, report: { ...withInstalled, state, satisfiedBy, message: this.stateMessage(target, state) } }
      }
      return { to: id, ...this.violation(node, target, c, withInstalled) }
    }
    if (dep.optional && this.policy.optional === 'Skip') {
      return { report: { ...base, required, state: 'Skipped', message: `optional dependency ${dep.name} is not installed; skipped` } }
    }
    if (node.action === 'keep') {
      // An untouched installation's missing dependency is not the targets' doing (Glasskube isErrNew).
      return { report: { ...base, required, state: 'Missing', resolvable: false, preExisting: true, message: `${dep.name} not installed` } }
    }
    if (!entry) {
      if (dep.optional) return { report: { ...base, required, state: 'Skipped', message: `optional dependency ${dep.name} is not available in any repository; skipped` } }
      const message = missingMessage(dep.name)
      return {
        report: { ...base, required, state: 'Missing', resolvable: false, message },
        conflict: { id, package: dep.name, namespace: this.installNamespace(dep.name, node.namespace), required, resolvable: false, reason: 'Missing', message },
      }
    }
    const constraints = this.constraintsFor(dep.name, id, node, c)
    const chosen = this.pick(entry, this.candidates(entry, constraints), constraints)
    if (!chosen) {
      if (dep.optional) return { report: { ...base, required, state: 'Skipped', message: `optional dependency ${dep.name} has no installable version; skipped` } }
      const namespace = this.installNamespace(dep.name, node.namespace)
      const clash = this.twoVersionsAtOnce(entry, entry.installationType ?? 'NoRestrictions', id, namespace, node, c)
      if (clash) {
        return {
          report: { ...base, required, state: 'Conflict', resolvable: false, message: clash },
          conflict: { id, package: dep.name, namespace, required, resolvable: false, reason: 'InstallationTypeViolation', message: clash },
        }
      }
      const message = noVersionMessage(dep.name, constraints, this.funnel(entry, constraints))
      return {
        report: { ...base, required, state: 'NoMatchingVersion', resolvable: false, message },
        conflict: { id, package: dep.name, namespace: this.installNamespace(dep.name, node.namespace), required, resolvable: false, reason: 'NoMatchingVersion', message },
      }
    }
    const namespace = this.installNamespace(dep.name, node.namespace)
    return {
      to: nodeId(dep.name, namespace),
      effect: { kind: 'install', package: dep.name, namespace, version: chosen },
      report: { ...base, required, state: 'Install', satisfiedBy: { package: dep.name, version: chosen.version.raw }, message: `install ${dep.name}@${chosen.version.raw}` },
    }
  }

  /** Every range on the would-be node, plus this edge's own (it may not be registered yet). */
  private constraintsFor(pkg: string, id: string, from: Node, own: Constraint): Constraint[] {
    const list = this.rangesOn({ package: pkg, id }).map((r) => r.constraint)
    if (!(this.ranges.get(pkg) ?? []).some((r) => r.from === from && r.constraint === own)) list.push(own)
    return list
  }

  /**
   * Rule 7: the ranges one installation of a `OnePerCluster` / `OnePerNamespace`
   * package must meet (every range on it; for `OnePerNamespace`, those from its
   * own namespace) each admit some version, but no version admits them all: the
   * plan needs two versions at once where only one installation is allowed.
   * Returns the explanation, or undefined when that is not the cause.
   */
  private twoVersionsAtOnce(entry: IndexedPackage, type: InstallationType, id: string, namespace: string, from: Node, own: Constraint): string | undefined {
    if (type === 'NoRestrictions') return undefined
    const edges = this.rangesOn({ package: entry.name, id })
    if (!edges.some((r) => r.from === from && r.constraint === own)) edges.push({ from, constraint: own, raw: own.display })
    const group = type === 'OnePerCluster' ? edges : edges.filter((r) => r.from.namespace === namespace)
    if (group.length < 2) return undefined
    const constraints = group.map((r) => r.constraint)
    if (this.candidates(entry, constraints).length > 0 || !constraints.every((c) => this.candidates(entry, [c]).length > 0)) return undefined
    const list = group.map((r) => `${nodeLabel(r.from.package, r.from.namespace, r.from.version?.raw)} needs ${r.constraint.display || '*'}`).sort(byString)
    const where = type === 'OnePerCluster' ? 'in the cluster' : namespace ? `in namespace ${namespace}` : 'in the cluster scope'
    return `${entry.name} is ${type} and ${list.join(', ')}: two different versions at once ${where}, where only one installation is allowed`
  }

  private installNamespace(pkg: string, namespace: string): string {
    return this.catalog.packages.get(pkg)?.installationType === 'OnePerCluster' ? '' : namespace
  }

  /** P→D with D present at a version outside P's range (rule 2, upward check 8). */
  private violation(node: Node, target: Node, c: Constraint, base: Omit<DependencyReport, 'requiredBy' | 'transitive' | 'state' | 'message'>): Omit<Decision, 'to'> {
    const version = target.version!
    const dir = direction(version, c)
    const conflictBase = { id: target.id, package: target.package, namespace: target.namespace, actual: version.raw, required: c.display, direction: dir }
    const fail = (reason: Conflict['reason'], resolvable: boolean, extra: string, resolution?: Conflict['resolution']): Omit<Decision, 'to'> => {
      const message = conflictMessage(target.package, c.display, version.raw, extra)
      return {
        report: { ...base, state: 'Conflict', resolvable, message },
        conflict: { ...conflictBase, resolvable, reason, message, ...(resolution ? { resolution } : {}) },
      }
    }
    if (node.action === 'keep' && target.action === 'keep') {
      return {
        report: { ...base, state: 'Conflict', resolvable: false, preExisting: true, message: conflictMessage(target.package, c.display, version.raw, 'pre-existing; not caused by the targets') },
      }
    }
    if (c.kind === 'digest') return fail('DigestMismatch', false, `digest ${c.digest} required`)
    if (target.action === 'target') {
      const up = node.action === 'keep' ? this.dependantUpgrade(node, target) : undefined
      const reason = dir === 'Above' ? 'InstalledTooNew' : 'InstalledTooOld'
      const dependant = nodeLabel(node.package, node.namespace, node.version?.raw)
      const why = dir === 'Above' ? `${dependant} does not support ${target.package} ${version.raw} yet` : `${dependant} needs a newer ${target.package} than the target's ${version.raw}`
      if (up) return fail(reason, true, `${why}; update ${node.package} to ${up} together with ${target.package}`, { action: 'Upgrade', package: node.package, version: up })
      return fail(reason, false, why)
    }
    const entry = this.catalog.packages.get(target.package)
    const constraints = this.rangesOn(target).map((r) => r.constraint)
    if (!constraints.includes(c)) constraints.push(c)
    const candidates = entry ? this.candidates(entry, constraints) : []
    if (candidates.length === 0) {
      const clash = entry && this.twoVersionsAtOnce(entry, target.installationType, target.id, target.namespace, node, c)
      if (clash) return fail('InstallationTypeViolation', false, clash)
      return fail('NoVersionSatisfiesAll', false, `no version satisfies ${describeConstraints(constraints)}`)
    }
    if (target.action === 'install') {
      const chosen = this.pick(entry!, candidates, constraints)!
      return {
        effect: { kind: 'change', node: target, version: chosen, action: 'install' },
        report: { ...base, state: 'Install', satisfiedBy: { package: target.package, version: chosen.version.raw }, message: `install ${target.package}@${chosen.version.raw}` },
      }
    }
    const original = target.installed!.version
    if (candidates.some((v) => compareVersions(v.version, original) === 0)) {
      return { effect: { kind: 'change', node: target, version: undefined, action: 'keep' }, report: { ...base, state: 'Fulfilled', message: `${target.package}@${original.raw} kept` } }
    }
    const up = candidates.filter((v) => compareVersions(v.version, original) > 0)
    const down = candidates.filter((v) => compareVersions(v.version, original) < 0)
    if (up.length > 0) {
      const to = this.policy.upgradeTarget === 'Lowest' ? up[0]! : this.pick(entry!, up, constraints)!
      if (this.policy.upgrades === 'Allow') {
        return {
          effect: { kind: 'change', node: target, version: to, action: 'upgrade' },
          report: { ...base, state: 'Upgrade', satisfiedBy: { package: target.package, version: to.version.raw }, message: `upgrade ${target.package} from ${original.raw} to ${to.version.raw}` },
        }
      }
      return fail('UpgradeNotAllowed', true, `upgrading to ${to.version.raw} resolves it (\`policy.upgrades\` is Deny)`, { action: 'Upgrade', version: to.version.raw })
    }
    const to = down[down.length - 1]!
    if (this.policy.downgrades === 'Allow') {
      return {
        effect: { kind: 'change', node: target, version: to, action: 'downgrade' },
        report: { ...base, state: 'Downgrade', satisfiedBy: { package: target.package, version: to.version.raw }, message: `downgrade ${target.package} from ${original.raw} to ${to.version.raw}` },
      }
    }
    return fail(dir === 'Above' ? 'InstalledTooNew' : 'DowngradeNotAllowed', false, `only a downgrade to ${to.version.raw} would resolve it (\`policy.downgrades\` is Deny)`)
  }

  /** The lowest catalog version of an installed dependant whose range admits the target's new version (Glasskube #400). */
  private dependantUpgrade(dependant: Node, target: Node): string | undefined {
    const entry = this.catalog.packages.get(dependant.package)
    if (!entry || !dependant.version || !target.version) return undefined
    for (const v of entry.versions) {
      if (compareVersions(v.version, dependant.version) <= 0) continue
      const ranges = v.spec.dependencies.filter((d): d is PackageDependency => d.type === 'Package' && d.name === target.package)
      const ok = ranges.every((d) => {
        const parsed = parseConstraint(d.version)
        return parsed.ok && satisfies(target.version!, parsed.constraint)
      })
      if (ok && candidateAdmitted(v.version, this.policy.prereleases, [])) return v.version.raw
    }
    return undefined
  }

  private decideGVK(node: Node, dep: GVKDependency): Decision {
    const key = gvkKey(dep.gvk)
    const base = { name: key, type: 'GVK' as const, optional: dep.optional || undefined }
    if (this.clusterAPIs.has(key)) return { report: { ...base, state: 'Fulfilled', satisfiedBy: { clusterAPI: true }, message: `${key} is served by the cluster` } }
    const providers = this.providersOf(key)
    const provider = providers.find((n) => n === node) ?? providers[0]
    if (provider) {
      const catalogProviders = this.catalog.providers.get(key) ?? []
      const ambiguous = provider.action === 'install' && catalogProviders.length > 1
      const state = ambiguous ? 'Ambiguous' : provider.action === 'install' ? 'Install' : provider.action === 'upgrade' ? 'Upgrade' : provider.action === 'downgrade' ? 'Downgrade' : 'Fulfilled'
      const label = nodeLabel(provider.package, provider.namespace, provider.version?.raw)
      const message = ambiguous
        ? `${key} is provided by ${catalogProviders.join(', ')}; picked ${label} (catalog order)`
        : provider.action === 'install'
          ? `install ${label}, which provides ${key}`
          : provider.action === 'upgrade' || provider.action === 'downgrade'
            ? `${provider.action} ${provider.package} from ${provider.installed?.version.raw} to ${provider.version?.raw}, which provides ${key}`
            : `${key} is provided by ${label}`
      const decision: Decision = { report: { ...base, state, satisfiedBy: this.by(provider), message } }
      if (provider !== node) decision.to = provider.id
      return decision
    }
    if (dep.optional && this.policy.optional === 'Skip') return { report: { ...base, state: 'Skipped', message: `optional dependency ${key} is not served; skipped` } }
    if (node.action === 'keep') {
      // An untouched installation's API: the targets are to blame only if an installed version served it before.
      const before = this.servedBefore().get(key) ?? []
      if (before.length === 0) return { report: { ...base, state: 'Missing', resolvable: false, preExisting: true, message: `${key} is not served` } }
      const message = `${key} would no longer be served (provided before by ${before.join(', ')})`
      return {
        report: { ...base, state: 'Missing', resolvable: false, message },
        conflict: { id: key, package: key, namespace: node.namespace, required: key, resolvable: false, reason: 'Missing', message },
      }
    }
    const names = this.catalog.providers.get(key) ?? []
    // An installation of a providing package, at a version that does not provide it: change its version (rule 2 for APIs).
    let failed: Decision | undefined
    for (const name of names) {
      const present = this.nodes.get(this.scope(name, node.namespace))
      if (!present) continue
      const decision = this.providerChange(present, key, base)
      if (!decision.conflict || decision.conflict.resolvable) return decision
      failed ??= decision
    }
    const absent = names.filter((name) => !this.byPackage.has(name))
    for (const name of absent) {
      const entry = this.catalog.packages.get(name)!
      const namespace = this.installNamespace(name, node.namespace)
      const constraints = this.rangesOn({ package: name, id: nodeId(name, namespace) }).map((r) => r.constraint)
      const providing = this.candidates(entry, constraints).filter((v) => v.spec.provides.some((g) => gvkKey(g) === key))
      const chosen = providing[providing.length - 1]
      if (!chosen) continue
      const ambiguous = absent.length > 1
      const message = ambiguous ? `${key} is provided by ${absent.join(', ')}; picked ${name}@${chosen.version.raw} (catalog order)` : `install ${name}@${chosen.version.raw}, which provides ${key}`
      return {
        to: nodeId(name, namespace),
        effect: { kind: 'install', package: name, namespace, version: chosen },
        report: { ...base, state: ambiguous ? 'Ambiguous' : 'Install', satisfiedBy: { package: name, version: chosen.version.raw }, message },
      }
    }
    if (failed) return failed
    if (dep.optional) return { report: { ...base, state: 'Skipped', message: `optional dependency ${key} is not served and no package provides it; skipped` } }
    const message = `no installed package, cluster API or catalog package provides ${key}`
    return {
      report: { ...base, state: 'Missing', resolvable: false, message },
      conflict: { id: key, package: key, namespace: node.namespace, required: key, resolvable: false, reason: 'Missing', message },
    }
  }

  /**
   * A GVK dependency on `key` whose providing package is present at a version
   * that does not provide it: the version of that package that provides it and
   * satisfies every range on it, per the upgrade / downgrade policies (as rule 2
   * does for a package dependency). A target's version is fixed.
   */
  private providerChange(present: Node, key: string, base: Omit<DependencyReport, 'requiredBy' | 'transitive' | 'state' | 'message'>): Decision {
    const entry = this.catalog.packages.get(present.package)!
    const current = present.version
    const label = nodeLabel(present.package, present.namespace, current?.raw)
    const actual = present.installed?.version.raw ?? current?.raw
    const to = present.id
    const fail = (reason: Conflict['reason'], resolvable: boolean, text: string, extra: { direction?: Conflict['direction']; resolution?: Conflict['resolution'] } = {}): Decision => {
      const message = `${label} does not provide ${key}: ${text}`
      return {
        to,
        report: { ...base, state: 'Conflict', resolvable, ...(present.installed ? { installed: present.installed.version.raw } : {}), message },
        conflict: { id: present.id, package: present.package, namespace: present.namespace, ...(actual ? { actual } : {}), required: key, resolvable, reason, message, ...extra },
      }
    }
    if (present.action === 'target' || !current) return fail('Missing', false, `${present.package} is a target, so its version is fixed`)
    const constraints = this.rangesOn(present).map((r) => r.constraint)
    const providing = this.candidates(entry, constraints).filter((v) => v.spec.provides.some((g) => gvkKey(g) === key))
    if (providing.length === 0) {
      const all = entry.versions.filter((v) => v.spec.provides.some((g) => gvkKey(g) === key)).map((v) => v.version.raw)
      const text =
        constraints.length > 0
          ? `no version of ${present.package} both provides it and satisfies ${describeConstraints(constraints)}`
          : `no version of ${present.package} that provides it is admitted by \`policy.prereleases\` / \`policy.incompleteVersions\``
      return fail('NoVersionSatisfiesAll', false, `${text} (versions that provide it: ${all.join(', ')})`)
    }
    const report = (state: 'Install' | 'Upgrade' | 'Downgrade' | 'Fulfilled', v: IndexedVersion, message: string, effect: Effect): Decision => ({
      to,
      effect,
      report: {
        ...base,
        state,
        ...(present.installed ? { installed: present.installed.version.raw } : {}),
        satisfiedBy: { package: present.package, version: v.version.raw, ...(present.namespace ? { namespace: present.namespace } : {}) },
        message,
      },
    })
    if (present.action === 'install') {
      const chosen = providing[providing.length - 1]!
      return report('Install', chosen, `install ${present.package}@${chosen.version.raw}, which provides ${key}`, { kind: 'change', node: present, version: chosen, action: 'install' })
    }
    const original = present.installed!.version
    const kept = providing.find((v) => compareVersions(v.version, original) === 0)
    if (kept) return report('Fulfilled', kept, `${present.package}@${original.raw} kept; it provides ${key}`, { kind: 'change', node: present, version: undefined, action: 'keep' })
    const up = providing.filter((v) => compareVersions(v.version, original) > 0)
    const down = providing.filter((v) => compareVersions(v.version, original) < 0)
    if (up.length > 0) {
      const chosen = this.policy.upgradeTarget === 'Lowest' ? up[0]! : up[up.length - 1]!
      if (this.policy.upgrades === 'Allow') {
        return report('Upgrade', chosen, `upgrade ${present.package} from ${original.raw} to ${chosen.version.raw}, which provides ${key}`, {
          kind: 'change',
          node: present,
          version: chosen,
          action: 'upgrade',
        })
      }
      return fail('UpgradeNotAllowed', true, `upgrading to ${chosen.version.raw} resolves it (\`policy.upgrades\` is Deny)`, {
        direction: 'Below',
        resolution: { action: 'Upgrade', version: chosen.version.raw },
      })
    }
    const chosen = down[down.length - 1]!
    if (this.policy.downgrades === 'Allow') {
      return report('Downgrade', chosen, `downgrade ${present.package} from ${original.raw} to ${chosen.version.raw}, which provides ${key}`, {
        kind: 'change',
        node: present,
        version: chosen,
        action: 'downgrade',
      })
    }
    return fail('InstalledTooNew', false, `only a downgrade to ${chosen.version.raw} would provide it (\`policy.downgrades\` is Deny)`, { direction: 'Above' })
  }

  private decideAnyOf(node: Node, dep: Extract<Dependency, { type: 'AnyOf' }>, index: number): Decision {
    const name = dep.anyOf.map((a) => (a.type === 'Package' ? (a.version ? `${a.name} (${a.version})` : a.name) : gvkKey(a.gvk))).join(' | ')
    const base = { name, type: 'AnyOf' as const, optional: dep.optional || undefined }
    const decisions = dep.anyOf.map((alt) => (alt.type === 'Package' ? this.decidePackage(node, { ...alt, optional: false }) : this.decideGVK(node, { ...alt, optional: false })))
    const previous = node.choices.get(index)
    const fulfilled = decisions.findIndex((d) => !d.effect && !d.conflict && d.report.state !== 'Skipped')
    const resolvable = decisions.findIndex((d) => d.effect && !d.conflict)
    const chosen = fulfilled >= 0 ? fulfilled : previous !== undefined && decisions[previous]?.effect ? previous : resolvable
    if (chosen >= 0) {
      const d = decisions[chosen]!
      return { ...d, choice: chosen, report: { ...d.report, ...base, message: `alternative ${chosen + 1} (${dep.anyOf.length > 1 ? 'of ' + dep.anyOf.length : 'only'}): ${d.report.message}` } }
    }
    if (dep.optional && this.policy.optional === 'Skip') return { report: { ...base, state: 'Skipped', message: `optional dependency ${name}: no alternative is installed; skipped` } }
    const reasons = decisions.map((d, i) => `${i + 1}. ${d.report.message}`).join('; ')
    const missing = decisions.every((d) => d.report.state === 'Missing')
    const message = `no alternative of ${name} can be met: ${reasons}`
    return {
      report: { ...base, state: missing ? 'Missing' : 'Conflict', resolvable: false, message },
      conflict: { id: `${node.id}#anyOf`, package: name, namespace: node.namespace, required: name, resolvable: false, reason: missing ? 'Missing' : 'NoVersionSatisfiesAll', message },
    }
  }

  /** Present nodes providing a GVK, by id (cached; invalidated whenever a node changes). */
  private providersOf(key: string): Node[] {
    if (!this.providerCache) {
      this.providerCache = new Map()
      for (const n of this.sortedNodes()) {
        if (!n.version) continue
        for (const g of n.provides) {
          const k = gvkKey(g)
          const list = this.providerCache.get(k)
          if (!list) this.providerCache.set(k, [n])
          else if (!list.includes(n)) list.push(n)
        }
      }
    }
    return this.providerCache.get(key) ?? []
  }

  /** GVK key → the installations whose installed version provides it (labels, in id order); computed once. */
  private servedBefore(): Map<string, string[]> {
    if (!this.installedProvides) {
      this.installedProvides = new Map()
      for (const n of this.sortedNodes()) {
        if (!n.installed) continue
        for (const key of new Set(n.installed.provides.map(gvkKey))) {
          const label = nodeLabel(n.package, n.namespace, n.installed.version.raw)
          const list = this.installedProvides.get(key)
          if (list) list.push(label)
          else this.installedProvides.set(key, [label])
        }
      }
    }
    return this.installedProvides
  }

  private by(n: Node): SatisfiedBy {
    return { package: n.package, version: n.version?.raw ?? '', ...(n.namespace ? { namespace: n.namespace } : {}) }
  }

  private stateMessage(target: Node, state: string): string {
    const label = nodeLabel(target.package, target.namespace, target.version?.raw)
    if (state === 'Install') return `install ${label}`
    if (state === 'Upgrade') return `upgrade ${target.package} from ${target.installed?.version.raw} to ${target.version?.raw}`
    if (state === 'Downgrade') return `downgrade ${target.package} from ${target.installed?.version.raw} to ${target.version?.raw}`
    return target.action === 'target' ? `fulfilled by target ${label}` : `fulfilled by ${label}`
  }

  /**
   * Planned installs nobody requires any more (a dependant was re-chosen) are
   * dropped, repeatedly, with inbound counts (one pass over the edges).
   */
  private dropUnrequiredInstalls(): void {
    if (!this.mayOrphan) return
    const out = new Map<string, string[]>()
    const inbound = new Map<string, number>()
    for (const node of this.nodes.values()) {
      const edges = this.edgesOf(node)
      out.set(node.id, edges)
      for (const to of edges) inbound.set(to, (inbound.get(to) ?? 0) + 1)
    }
    const queue = this.sortedNodes().filter((n) => n.action === 'install' && !inbound.get(n.id))
    while (queue.length > 0) {
      const orphan = queue.shift()!
      this.unregister(orphan)
      this.providerCache = undefined
      this.nodes.delete(orphan.id)
      const rest = (this.byPackage.get(orphan.package) ?? []).filter((n) => n !== orphan)
      if (rest.length > 0) this.byPackage.set(orphan.package, rest)
      else this.byPackage.delete(orphan.package)
      for (const to of out.get(orphan.id) ?? []) {
        const left = (inbound.get(to) ?? 1) - 1
        inbound.set(to, left)
        const n = this.nodes.get(to)
        if (left === 0 && n?.action === 'install') queue.push(n)
      }
    }
  }

  /** The node ids a node's dependencies resolve to (final state). */
  private edgesOf(node: Node): string[] {
    const out: string[] = []
    node.deps.forEach((dep, i) => {
      const to = this.decide(node, dep, i).to
      if (to && this.nodes.has(to) && to !== node.id) out.push(to)
    })
    return out
  }

  // ---- report -------------------------------------------------------------------

  private report(targetIds: readonly string[]): Plan {
    const conflicts: Conflict[] = []
    const issues = [...this.issues]
    const evaluated = new Map<string, { decision: Decision; dep: Dependency; report: DependencyReport }[]>()
    const requiredBy = new Map<string, Set<string>>()
    const changed = (n: Node) => n.action !== 'keep'
    const conflictKeys = new Set<string>()
    const addConflict = (conflict: Conflict) => {
      const key = `${conflict.package}\0${conflict.namespace}\0${conflict.requiredBy}\0${conflict.reason}\0${conflict.message}`
      if (conflictKeys.has(key)) return
      conflictKeys.add(key)
      conflicts.push(conflict)
    }
    for (const node of this.sortedNodes()) {
      const label = nodeLabel(node.package, node.namespace, node.version?.raw)
      const list: { decision: Decision; dep: Dependency; report: DependencyReport }[] = []
      node.deps.forEach((dep, i) => {
        let decision = this.decide(node, dep, i)
        if (decision.effect && !(decision.effect.kind === 'change' && decision.effect.action === 'keep')) {
          // Resolution did not settle (a version changed maxChanges times): report, never guess.
          const message = `could not settle a version for ${decision.report.name} within ${maxChanges} attempts: ${decision.report.message}`
          decision = {
            ...decision,
            report: { ...decision.report, state: 'Conflict', resolvable: false, message },
            conflict: {
              id: decision.to ?? decision.report.name,
              package: decision.report.name,
              namespace: node.namespace,
              required: decision.report.required ?? '',
              resolvable: false,
              reason: 'NoVersionSatisfiesAll',
              message,
            },
          }
          delete decision.effect
        }
        const report: DependencyReport = { requiredBy: label, ...decision.report, transitive: node.action !== 'target' }
        if (dep.declaredAt) report.declaredAt = dep.declaredAt
        if (report.optional === undefined) delete report.optional
        list.push({ decision, dep, report })
        if (decision.to) {
          const set = requiredBy.get(decision.to) ?? new Set<string>()
          set.add(label)
          requiredBy.set(decision.to, set)
        }
        if (report.preExisting) {
          issues.push({ severity: 'warning', package: node.package, message: `${label}: ${report.message}`, ...(dep.declaredAt ? { declaredAt: dep.declaredAt } : {}) })
          return
        }
        if (decision.conflict && (changed(node) || decision.to === undefined || changed(this.nodes.get(decision.to)!))) {
          const { id: _id, ...rest } = decision.conflict
          void _id
          const constraints = this.constraintList(decision.to, decision.conflict.package)
          addConflict({ ...rest, requiredBy: label, constraints, ...(dep.declaredAt ? { declaredAt: dep.declaredAt } : {}) })
        } else if (decision.conflict) {
          issues.push({ severity: 'warning', package: node.package, message: `${label}: ${report.message} (pre-existing)` })
        }
      })
      evaluated.set(node.id, list)
    }
    for (const tc of this.targetConflicts) {
      const { id: _id, ...rest } = tc
      void _id
      addConflict(rest)
    }

    // Cycles (rule 9) and dependencies-first order.
    // Targets first, so a cycle is reported on the package being checked.
    const ids = [
      ...targetIds,
      ...this.sortedNodes()
        .map((n) => n.id)
        .filter((id) => !targetIds.includes(id)),
    ]
    const edges = (id: string) => (evaluated.get(id) ?? []).map((e) => e.decision.to).filter((to): to is string => !!to && to !== id && this.nodes.has(to))
    const { cycles, order } = walkGraph(ids, edges)
    for (const cycle of cycles) {
      const involved = cycle.path.some((id) => changed(this.nodes.get(id)!))
      const message = `detected cycle on: ${cycle.on} (${cycle.path.join(' -> ')})`
      const entry = (evaluated.get(cycle.from) ?? []).find((e) => e.decision.to === cycle.on)
      if (!involved) {
        issues.push({ severity: 'warning', package: cycle.on, message: `${message} (pre-existing)` })
        continue
      }
      if (entry) {
        entry.report.state = 'Cycle'
        entry.report.resolvable = false
        entry.report.message = message
      }
      const on = this.nodes.get(cycle.on)!
      const from = this.nodes.get(cycle.from)!
      addConflict({
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

    // installationType (rule 7): a second installation of a OnePerCluster package anywhere, or of a
    // OnePerNamespace package in one namespace (duplicate InstalledPackages count as installations).
    for (const [pkg, list] of [...this.byPackage].sort((a, b) => byString(a[0], b[0]))) {
      const present = list.filter((n) => this.nodes.has(n.id))
      const type = present.some((n) => n.installationType === 'OnePerCluster') ? 'OnePerCluster' : present.some((n) => n.installationType === 'OnePerNamespace') ? 'OnePerNamespace' : undefined
      if (!type) continue
      const groups = type === 'OnePerCluster' ? [present] : present.map((n) => [n])
      for (const group of groups) {
        const duplicates = group.flatMap((n) => (this.duplicates.get(n.id) ?? []).map((d) => ({ node: n, label: `${d.name} (${nodeLabel(pkg, n.namespace, d.version)})` })))
        if (group.length + duplicates.length < 2) continue
        const scopeOf = (n: Node) => n.namespace || 'the cluster scope'
        // A target at the version already installed creates nothing new.
        const extra = group.filter((n) => changed(n) && !(n.action === 'target' && n.installed && n.version && compareVersions(n.version, n.installed.version) === 0))
        if (extra.length === 0) {
          const places = [...group, ...duplicates.map((d) => d.node)].map(scopeOf).sort(byString)
          const text = type === 'OnePerNamespace' ? `${places.length} times in ${places[0]}` : `in ${places.join(', ')}`
          issues.push({ severity: 'warning', package: pkg, message: `${pkg} is ${type} but installed ${text} (pre-existing)` })
          continue
        }
        for (const n of extra) {
          const others = [...group.filter((o) => o !== n).map((o) => nodeLabel(o.package, o.namespace, o.version?.raw)), ...duplicates.map((d) => `installation ${d.label}`)]
          const sameScope = duplicates.filter((d) => d.node === n).map((d) => `installation ${d.label}`)
          const verb = n.action === 'target' ? (n.installed ? 'update' : 'install') : n.action
          const message =
            sameScope.length > 0
              ? `${pkg} is ${type} and ${scopeOf(n)} has another installation, ${sameScope.join(', ')}; the plan would ${verb} ${n.installed ? `installation ${n.installed.name} to ` : ''}${nodeLabel(n.package, n.namespace, n.version?.raw)}, leaving two installations (two versions at once) where only one is allowed`
              : `${pkg} is ${type} and already installed as ${others.join(', ')}; a second installation in ${scopeOf(n)} is not allowed`
          addConflict({
            package: pkg,
            namespace: n.namespace,
            ...(n.version ? { actual: n.version.raw } : {}),
            required: type,
            requiredBy: nodeLabel(n.package, n.namespace, n.version?.raw),
            constraints: [],
            resolvable: false,
            reason: 'InstallationTypeViolation',
            message,
          })
        }
      }
    }

    const labels = (id: string) => [...(requiredBy.get(id) ?? [])].sort(byString)
    const targetLabels = new Set(
      targetIds.map((id) => {
        const n = this.nodes.get(id)!
        return nodeLabel(n.package, n.namespace, n.version?.raw)
      }),
    )
    const install: InstallStep[] = []
    const upgrade: ChangeStep[] = []
    const downgrade: ChangeStep[] = []
    for (const n of this.sortedNodes()) {
      if (n.action === 'install') {
        const by = labels(n.id)
        install.push({ package: n.package, version: n.version!.raw, namespace: n.namespace, requiredBy: by, transitive: !by.some((l) => targetLabels.has(l)) })
      } else if (n.action === 'upgrade' || n.action === 'downgrade') {
        const step = { package: n.package, namespace: n.namespace, from: n.installed!.version.raw, to: n.version!.raw, requiredBy: labels(n.id) }
        ;(n.action === 'upgrade' ? upgrade : downgrade).push(step)
      }
    }
    install.sort((a, b) => byString(a.package, b.package) || byString(a.namespace, b.namespace))
    upgrade.sort((a, b) => byString(a.package, b.package) || byString(a.namespace, b.namespace))
    downgrade.sort((a, b) => byString(a.package, b.package) || byString(a.namespace, b.namespace))

    const prune = this.prune(edges)
    const packages = this.targetReports(targetIds, evaluated)
    conflicts.sort((a, b) => byString(a.package, b.package) || byString(a.requiredBy, b.requiredBy) || byString(a.message, b.message))
    const planOrder = order.filter((id) => changed(this.nodes.get(id)!))
    const result = conflicts.length > 0 || issues.some((i) => i.severity === 'error') ? 'CONFLICT' : install.length + upgrade.length + downgrade.length > 0 ? 'RESOLVABLE' : 'OK'
    return { result, packages, install, upgrade, downgrade, prune, order: planOrder, conflicts, issues }
  }

  private constraintList(to: string | undefined, pkg: string): { from: string; range: string }[] {
    const node = to ? this.nodes.get(to) : undefined
    const list = node ? this.rangesOn(node) : (this.ranges.get(pkg) ?? [])
    return list
      .map((r) => ({ from: nodeLabel(r.from.package, r.from.namespace, r.from.version?.raw), range: r.constraint.display }))
      .sort((a, b) => byString(a.from, b.from) || byString(a.range, b.range))
  }

  /** Rule 10: repeatedly drop untouched dependency installations that nothing requires. */
  private prune(edges: (id: string) => string[]): PruneStep[] {
    const inbound = new Map<string, number>()
    for (const id of this.nodes.keys()) for (const to of edges(id)) inbound.set(to, (inbound.get(to) ?? 0) + 1)
    const prunable = (n: Node | undefined) => !!n && n.action === 'keep' && !!n.installed?.asDependency && (inbound.get(n.id) ?? 0) === 0
    const pruned: PruneStep[] = []
    const queue = this.sortedNodes().filter(prunable)
    while (queue.length > 0) {
      const next = queue.shift()!
      pruned.push({ package: next.package, namespace: next.namespace, name: next.installed!.name })
      for (const to of edges(next.id)) {
        inbound.set(to, (inbound.get(to) ?? 1) - 1)
        const n = this.nodes.get(to)
        if (prunable(n) && !queue.includes(n!)) queue.push(n!)
      }
    }
    return pruned.sort((a, b) => byString(a.package, b.package) || byString(a.namespace, b.namespace))
  }

  /** Per target: its own dependencies, then those of the changed packages it pulls in (transitive). */
  private targetReports(targetIds: readonly string[], evaluated: Map<string, { decision: Decision; report: DependencyReport }[]>): TargetReport[] {
    return targetIds.map((id) => {
      const node = this.nodes.get(id)!
      const dependencies: DependencyReport[] = []
      const seen = new Set<string>([id])
      const queue = [id]
      while (queue.length > 0) {
        const current = queue.shift()!
        for (const e of evaluated.get(current) ?? []) {
          dependencies.push(e.report)
          const to = e.decision.to
          if (to && !seen.has(to) && this.nodes.has(to) && this.nodes.get(to)!.action !== 'keep' && this.nodes.get(to)!.action !== 'target') {
            seen.add(to)
            queue.push(to)
          }
        }
      }
      return { package: node.package, namespace: node.namespace, ...(node.version ? { version: node.version.raw } : {}), dependencies }
    })
  }
}
