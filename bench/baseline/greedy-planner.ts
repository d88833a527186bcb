/**
 * The greedy round-based planner as it was before the exact resolver (issue 15),
 * kept only as the bench baseline; never imported by the functions.
 *
 * It builds, decides and reports with the planner's own stages
 * (functions/dependency-check/planner/) and differs where the old planner did:
 * no solver. Rounds from the targets pick every version: each install, upgrade
 * or re-chosen version marks the changed node and its dependants for the next
 * round; a node's version changes at most `maxChanges` times and the rounds
 * stop after 10,000, so it always ends, and a dependency left unsettled is
 * reported as a conflict.
 */
import { buildGraph, chooseConstraintTargets } from '../../functions/dependency-check/planner/build.js'
import { report, unsettledConflict } from '../../functions/dependency-check/planner/report.js'
import { EdgeRounds, maxChanges } from '../../functions/dependency-check/planner/rounds.js'
import type { Plan, PlanInput } from '../../functions/dependency-check/plan.js'

/** Past this many rounds (one level of a chain each), the old planner gave up. */
const maxRounds = 10_000

/** Plans installs, upgrades, downgrades and prunes for the targets, greedily; see the module doc. */
export function planDependencies(input: PlanInput): Plan {
  const { graph, targetIds } = buildGraph(input)
  chooseConstraintTargets(graph, input.targets)
  const rounds = new EdgeRounds(graph)
  let dirty = new Set(targetIds)
  for (let round = 0; dirty.size > 0 && round < maxRounds; round++) dirty = rounds.round(dirty)
  rounds.dropUnrequiredInstalls()
  return report(graph, targetIds, {
    // Resolution did not settle (a version changed maxChanges times, or the rounds ran out): report, never guess.
    unsettled: (decision, node) =>
      unsettledConflict(
        decision,
        node,
        `could not settle a version for ${decision.report.name} within ${maxChanges} attempts: ${decision.report.message}`,
      ),
  })
}
