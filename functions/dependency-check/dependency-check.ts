/**
 * dependency-check: validates the packages' dependencies (PackageManifests
 * among the items, or `spec.targets`) against a catalog and the installed
 * state from `--sources`, and records the plan in a DependencyCheckResult.
 */
import { dependencyCheckResultKind, isDependencyKind } from '../api/dependencies.js'
import type { ResourceList, TransformOptions } from '../krm/index.js'
import { parseConfig } from './config.js'
import { gatherInputs } from './inputs.js'
import { planDependencies } from './resolve.js'
import { newResultObject, planResults, resultStatus } from './report.js'

/** The transform: config, gather, plan, report. */
export function dependencyCheck(rl: ResourceList, options: TransformOptions): void {
  const parsed = parseConfig(rl.functionConfig)
  if (!parsed.ok) {
    rl.results.push(...parsed.results)
    return
  }
  const { config } = parsed
  const gathered = gatherInputs(rl.items, options.sources, config)
  rl.results.push(...gathered.results)
  if (gathered.results.some((r) => r.severity === 'error')) return
  if (gathered.input.targets.length === 0) {
    rl.results.info('no PackageManifest among the items and no `spec.targets`: nothing to check')
    return
  }
  const plan = planDependencies(gathered.input)
  rl.results.push(...planResults(plan))
  upsertResult(rl, config.name, plan)
}

/** Updates an existing DependencyCheckResult of that name in place (idempotent re-runs), else appends one. */
function upsertResult(rl: ResourceList, name: string, plan: ReturnType<typeof planDependencies>): void {
  const existing = rl.items.find((o) => isDependencyKind(o, dependencyCheckResultKind) && o.name === name)
  if (existing) existing.set(['status'], resultStatus(plan))
  else rl.items.push(newResultObject(name, plan))
}
