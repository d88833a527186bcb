/**
 * The pure planner: `planDependencies(input) → plan` over the whole graph of
 * targets, installed packages and planned installs (docs/upstream-behaviour.md, "Resolution"). No I/O; the same input (in any order) gives the same plan.
 *
 * The stages, each in its own module under `planner/`:
 * 1. build the graph of installations and targets (`build.ts`);
 * 2. solve: the exact resolver (`solver/`), a PubGrub solver over every
 *    installation's possible versions, finds a plan whenever one exists; its
 *    values are applied to the graph (here);
 * 3. when no plan exists, diagnose: edge-by-edge rounds over the preferred
 *    versions (`rounds.ts`) leave the graph that names the dependencies that
 *    fail and why, and the solver's derivation is the explanation;
 * 4. report: every dependency edge evaluated against the graph, conflicts,
 *    cycles, installation types, steps and order (`report.ts`).
 */
import { parseConstraint } from './constraints.js'
import { findVersion } from './graph.js'
import type { Plan, PlanInput, PlanTarget } from './plan.js'
import { isUpgrade } from './versions.js'
import { buildGraph, chooseConstraintTargets, notBelowInstalled } from './planner/build.js'
import { candidates, pick } from './planner/candidates.js'
import { decide } from './planner/decide.js'
import type { Decision } from './planner/decision.js'
import { nodeId } from './planner/plan-graph.js'
import type { PlanGraph, PlanNode } from './planner/plan-graph.js'
import { report, unsettledConflict } from './planner/report.js'
import type { ReportOptions } from './planner/report.js'
import { diagnose } from './planner/rounds.js'
import { explain } from './solver/explain.js'
import type { Incompatibility } from './solver/incompatibility.js'
import { buildModel } from './solver/model.js'
import type { Model, ModelNode } from './solver/model.js'
import { solve } from './solver/solver.js'

/** Re-solves that forbid cycles; past that, the cycles found are reported. */
const maxCycleAttempts = 50

/** Plans installs, upgrades, downgrades and prunes for the targets; see the module doc. */
export function planDependencies(input: PlanInput): Plan {
  const { graph, targetIds } = buildGraph(input)
  const model = buildModel(modelNodes(graph, input.targets), {
    catalog: graph.catalog,
    policy: graph.policy,
    clusterAPIs: graph.clusterAPIs,
    servedBefore: graph.servedBefore(),
  })
  let solution = solve(model.problem)
  // A cycle is a conflict: forbid each one found and solve again, while another choice may avoid it.
  for (let attempt = 0; solution.ok && attempt < maxCycleAttempts; attempt++) {
    const cycles = model.forbidCycles(solution.values)
    if (cycles.length === 0) break
    model.problem.incompatibilities.push(...cycles)
    const next = solve(model.problem)
    if (!next.ok) {
      // Every solution has a cycle: plan the first one and report the cycle, with the proof.
      applySolution(graph, model, solution.values)
      chooseConstraintTargets(graph, input.targets)
      return explained(report(graph, targetIds, solved), next.root, model)
    }
    solution = next
  }
  if (solution.ok) {
    applySolution(graph, model, solution.values)
    chooseConstraintTargets(graph, input.targets)
    return report(graph, targetIds, solved)
  }
  // No solution exists: the edge-by-edge rounds find which dependencies fail and why
  // (reasons, resolutions); the solver's derivation explains why no plan can exist.
  chooseConstraintTargets(graph, input.targets)
  diagnose(graph, targetIds)
  return explained(report(graph, targetIds, diagnosing), solution.root, model)
}

/** A step that would fix one edge but break another: reported, never guessed. */
function noPlan(decision: Decision, node: PlanNode): Decision {
  return unsettledConflict(
    decision,
    node,
    `${decision.report.message}, but no plan satisfies every dependency together`,
  )
}

/** A solved graph: an optional dependency still to install was left out by the solver; anything else cannot be. */
const solved: ReportOptions = {
  unsettled: (decision, node, dep) => {
    if (!dep.optional) return noPlan(decision, node)
    // The solver left an optional dependency out: installing it does not fit the rest of the plan.
    const skipped = {
      report: {
        ...decision.report,
        state: 'Skipped' as const,
        message: `optional dependency ${decision.report.name} cannot be installed together with the rest of the plan; skipped`,
      },
    }
    delete skipped.report.satisfiedBy
    return skipped
  },
}

/** A diagnosed graph (no plan exists): every step still wanted is a conflict. */
const diagnosing: ReportOptions = { unsettled: noPlan }

function explained(plan: Plan, root: Incompatibility, model: Model): Plan {
  if (plan.result === 'CONFLICT') plan.explanation = explain(root, model.variables)
  return plan
}

/** The starting nodes as the model reads them: installations, and targets with their possible versions. */
function modelNodes(graph: PlanGraph, targets: readonly PlanTarget[]): ModelNode[] {
  const { catalog, policy } = graph
  const constraintTargets = new Map(
    targets.filter((t) => !t.version && !t.manifest).map((t) => [nodeId(t.package, t.namespace), t]),
  )
  return graph.sortedNodes().map((node) => {
    const base = { id: node.id, package: node.package, namespace: node.namespace }
    if (node.action !== 'target')
      return {
        ...base,
        installed: {
          version: node.installed!.version,
          deps: node.installed!.deps,
          provides: node.installed!.provides,
          asDependency: node.installed!.asDependency,
        },
      }
    const entry = catalog.packages.get(node.package)
    const byConstraint = constraintTargets.get(node.id)
    const parsed = byConstraint && entry && !node.version ? parseConstraint(byConstraint.constraint ?? '') : undefined
    if (parsed?.ok) {
      const admitted = notBelowInstalled(graph, node, candidates(entry!, [parsed.constraint], policy))
      const first = pick(entry!, admitted, [parsed.constraint], policy)
      if (first) {
        const ordered = [first, ...admitted.filter((c) => c !== first).reverse()]
        return {
          ...base,
          target: {
            values: ordered.map((c) => ({
              version: c.version,
              indexed: c,
              deps: c.spec.dependencies,
              provides: c.spec.provides,
            })),
          },
        }
      }
    }
    const indexed = node.version ? findVersion(entry, node.version) : undefined
    return {
      ...base,
      target: {
        values: [
          {
            ...(node.version ? { version: node.version } : {}),
            ...(indexed ? { indexed } : {}),
            deps: node.deps,
            provides: node.provides,
          },
        ],
      },
    }
  })
}

/** Sets every node to the solver's value: new installations, upgrades, downgrades, target versions. */
function applySolution(graph: PlanGraph, model: Model, values: readonly number[]): void {
  model.variables.forEach((variable, v) => {
    const value = variable.values[values[v]!]!
    if (value.kind === 'absent' || value.kind === 'keep') return
    let node = graph.nodes.get(variable.id)
    if (!node) {
      // A new installation, made whole at once: one object shape for every node, no fields added later.
      const entry = graph.catalog.packages.get(variable.package)
      node = {
        id: variable.id,
        package: variable.package,
        namespace: variable.namespace,
        action: 'install',
        version: value.version!,
        deps: value.deps,
        provides: value.provides,
        installationType: value.indexed?.spec.installationType ?? entry?.installationType ?? 'NoRestrictions',
        changes: 0,
        registered: undefined,
      }
      graph.addNode(node)
      graph.register(node)
      return
    }
    if (node.action === 'keep') {
      node.action = isUpgrade(node.installed!.version, value.version!) ? 'upgrade' : 'downgrade'
    }
    graph.unregister(node)
    if (value.version) node.version = value.version
    node.deps = value.deps
    node.provides = value.provides
    if (value.kind === 'target' && value.indexed)
      node.installationType = value.indexed.spec.installationType ?? node.installationType
    graph.register(node)
  })
  graph.nodeChanged()
  // anyOf: record the alternative the report will name, so its range counts in the conflict lists.
  for (const node of graph.sortedNodes()) {
    node.deps.forEach((dep, i) => {
      if (dep.type !== 'AnyOf') return
      const choice = decide(graph, node, dep, i).choice
      if (choice === undefined) return
      graph.choose(node, i, choice)
    })
  }
}
