/**
 * Turns a plan into the `DependencyCheckResult` object (described in README.md) and
 * results: one per dependency of each target (errors for unmet ones, in
 * Glasskube's `unmet dependency P -> D: …` form), one per remaining conflict,
 * the input issues, the explanation when no plan exists, and a summary with
 * Crossplane's `missing dependencies` list.
 */
import { dependenciesApiVersion, dependencyCheckResultKind } from '../api/dependencies.js'
import { KubeObject, localConfigAnnotation, newResult } from '../krm/index.js'
import type { Result, Severity } from '../krm/index.js'
import { missingDependencies } from './messages.js'
import type { Conflict, DependencyReport, DependencyState, Plan } from './plan.js'

/** File the result object is written to under `kpt fn eval` (or a mutator step). */
export const resultFile = 'dependency-check-result.yaml'

const unmet: readonly DependencyState[] = ['Conflict', 'Missing', 'NoMatchingVersion', 'Cycle']

/** The severity of one dependency's result. */
export function severityOf(report: DependencyReport): Severity {
  if (unmet.includes(report.state)) return 'error'
  if (report.state === 'Ambiguous') return 'warning'
  return 'info'
}

/** Results for a plan, in a stable order. */
export function planResults(plan: Plan): Result[] {
  const results: Result[] = []
  const refs = new Map<KubeObject, Result>()
  const reported = new Set<string>()
  // Every error result carries the same tags: `state`, `dependency` and, for a conflict, its `reason`.
  const reasons = new Map(plan.conflicts.map((c) => [`${c.requiredBy}\0${c.message}`, c.reason]))
  for (const target of plan.packages) {
    for (const dep of target.dependencies) {
      const severity = severityOf(dep)
      const key = `${dep.requiredBy}\0${dep.message}`
      const text =
        severity === 'error'
          ? `unmet dependency ${dep.requiredBy} -> ${dep.name}: ${dep.message}`
          : `dependency ${dep.requiredBy} -> ${dep.name}: ${dep.message}`
      if (severity === 'error') reported.add(key)
      const reason = severity === 'error' ? reasons.get(key) : undefined
      const tags: Record<string, string> = { state: dep.state, dependency: dep.name, ...(reason ? { reason } : {}) }
      results.push(resultAt(severity, text, dep.declaredAt, tags, refs))
    }
  }
  for (const c of plan.conflicts) {
    if (reported.has(`${c.requiredBy}\0${c.message}`)) continue
    results.push(
      newResult('error', conflictText(c), {
        ...at(c.declaredAt),
        tags: { state: 'Conflict', dependency: c.package, reason: c.reason },
      }),
    )
  }
  for (const issue of plan.issues) results.push(newResult(issue.severity, issue.message, at(issue.declaredAt)))
  if (plan.explanation)
    results.push(
      newResult('error', explanationText(plan.explanation), { tags: { result: plan.result, explanation: 'true' } }),
    )
  results.push(
    newResult(plan.result === 'CONFLICT' ? 'error' : 'info', summary(plan), { tags: { result: plan.result } }),
  )
  return results
}

/** `no plan satisfies every dependency: <step>; <step>; …`, one line per derivation step. */
export function explanationText(lines: readonly string[]): string {
  return `no plan satisfies every dependency: ${lines.join('\n')}`
}

function conflictText(c: Conflict): string {
  return `dependency conflict: ${c.message} (required by ${c.requiredBy})`
}

/**
 * newResult for a dependency where it was declared. The object's reference and
 * file are worked out once per object (a catalog declares thousands), and
 * shared by its results, which nothing changes.
 */
function resultAt(
  severity: Severity,
  message: string,
  declaredAt: DependencyReport['declaredAt'],
  tags: Record<string, string>,
  refs: Map<KubeObject, Result>,
): Result {
  if (!declaredAt) return newResult(severity, message, { tags })
  let ref = refs.get(declaredAt.object)
  if (!ref) refs.set(declaredAt.object, (ref = newResult(severity, '', { object: declaredAt.object })))
  const result: Result = { message, severity }
  if (ref.resourceRef) result.resourceRef = ref.resourceRef
  result.field = { path: declaredAt.field }
  if (ref.file) result.file = ref.file
  if (Object.keys(tags).length > 0) result.tags = tags
  return result
}

function at(declaredAt: DependencyReport['declaredAt']): { object?: KubeObject; field?: string } {
  return declaredAt ? { object: declaredAt.object, field: declaredAt.field } : {}
}

/** `dependency check: CONFLICT: 1 conflict(s); missing dependencies: "x"; plan: install 2 (a, b), …`. */
export function summary(plan: Plan): string {
  const parts = [`dependency check: ${plan.result}`]
  if (plan.conflicts.length > 0) parts.push(`${plan.conflicts.length} conflict(s)`)
  const missing = plan.packages.flatMap((t) =>
    t.dependencies
      .filter((d) => d.state === 'Missing' && d.type === 'Package')
      .map((d) => ({ name: d.name, constraint: d.required ?? '' })),
  )
  const unique = [...new Map(missing.map((m) => [`${m.name}\0${m.constraint}`, m])).values()]
  if (unique.length > 0) parts.push(missingDependencies(unique))
  const steps: string[] = []
  if (plan.install.length > 0) steps.push(`install ${plan.install.map((s) => `${s.package}@${s.version}`).join(', ')}`)
  if (plan.upgrade.length > 0)
    steps.push(`upgrade ${plan.upgrade.map((s) => `${s.package} ${s.from} -> ${s.to}`).join(', ')}`)
  if (plan.downgrade.length > 0)
    steps.push(`downgrade ${plan.downgrade.map((s) => `${s.package} ${s.from} -> ${s.to}`).join(', ')}`)
  if (plan.prune.length > 0) steps.push(`prune ${plan.prune.map((s) => s.package).join(', ')}`)
  if (steps.length > 0) parts.push(`plan: ${steps.join('; ')}; order: ${plan.order.join(', ')}`)
  else if (plan.result === 'OK') parts.push('nothing to install, upgrade or prune')
  return parts.join('; ')
}

/** The `status` of a DependencyCheckResult: plain data, undefined fields dropped. */
export function resultStatus(plan: Plan): Record<string, unknown> {
  const ok = plan.result !== 'CONFLICT'
  return clean({
    result: plan.result,
    conditions: [
      {
        type: 'Resolved',
        status: ok ? 'True' : 'False',
        reason: ok ? 'DependencyResolutionSucceeded' : 'DependencyConflict',
        message: plan.explanation ? `${summary(plan)}; ${explanationText(plan.explanation)}` : summary(plan),
      },
    ],
    explanation: plan.explanation,
    packages: plan.packages.map((t) => ({
      package: t.package,
      namespace: t.namespace || undefined,
      version: t.version,
      dependencies: t.dependencies.map(({ declaredAt: _d, preExisting: _p, ...d }) => d),
    })),
    plan: {
      install: plan.install,
      upgrade: plan.upgrade,
      downgrade: plan.downgrade,
      prune: plan.prune,
      order: plan.order,
    },
    conflicts: plan.conflicts.map(({ declaredAt: _d, ...c }) => c),
  }) as Record<string, unknown>
}

/** A new DependencyCheckResult object (local config, written to `dependency-check-result.yaml`). */
export function newResultObject(name: string, plan: Plan): KubeObject {
  const object = KubeObject.fromObject(
    {
      apiVersion: dependenciesApiVersion,
      kind: dependencyCheckResultKind,
      metadata: { name, annotations: { [localConfigAnnotation]: 'true' } },
      status: resultStatus(plan),
    },
    { path: resultFile },
  ) // placed as it is rendered: a later setPath would parse the whole plan back
  return object
}

/**
 * Drops undefined values and empty-string namespaces, recursively. What holds
 * neither is returned as it is, not copied: a plan of 50,000 packages is
 * mostly clean already.
 */
function clean(value: unknown): unknown {
  if (Array.isArray(value)) {
    let out: unknown[] | undefined
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i]
      const cleaned = clean(item)
      if (cleaned !== item && !out) out = value.slice(0, i)
      if (out) out.push(cleaned)
    }
    return out ?? value
  }
  if (value && typeof value === 'object') {
    const object = value as Record<string, unknown>
    let out: Record<string, unknown> | undefined
    for (const k in object) {
      if (!Object.prototype.hasOwnProperty.call(object, k)) continue
      const v = object[k]
      const dropped = v === undefined || (k === 'namespace' && v === '')
      const cleaned = dropped ? undefined : clean(v)
      if ((dropped || cleaned !== v) && !out) {
        // The keys before this one, as they were.
        out = {}
        for (const before in object) {
          if (before === k) break
          if (Object.prototype.hasOwnProperty.call(object, before)) out[before] = object[before]
        }
      }
      if (out && !dropped) out[k] = cleaned
    }
    return out ?? value
  }
  return value
}
