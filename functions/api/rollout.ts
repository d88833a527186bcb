/**
 * `kpt-variants.dev/v1alpha1 Rollout`: the pace at which the variants of one
 * PackageVariantSet are published, in steps, with gates between them
 * (docs/rollouts.md). Read and validated here; `orchestrator/rollout/`
 * decides from it what a run may publish.
 */
import { compileLabelSelector, qualifiedNameErrors, dns1123LabelErrors } from '../krm/index.js'
import type { CompiledSelector, FieldPath, KubeObject, LabelSelector, LabelSelectorRequirement } from '../krm/index.js'
import { compact, Decoder } from './decode.js'
import type { FieldError } from './decode.js'
import { parseDuration } from './duration.js'
import { parseRfc3339 } from './rfc3339.js'
import { compileWindow } from './rollout-windows.js'
import type { RolloutWindow, RolloutWindowSpec } from './rollout-windows.js'

export const rolloutGroup = 'kpt-variants.dev'
export const rolloutVersion = 'v1alpha1'
export const rolloutApiVersion = `${rolloutGroup}/${rolloutVersion}`
export const rolloutKind = 'Rollout'

/** One `spec.steps` entry as written. */
export interface RolloutStepSpec {
  name: string
  /** A label selector over the set's target objects; absent: every variant no earlier step took. */
  targets?: LabelSelector
  /** A count, or a percentage (`50%`) of the step's variants. */
  maxConcurrent?: number | string
}

/** `spec.gates.health` as written. */
export interface HealthGate {
  /** The condition type each target must report True, e.g. `Ready`. */
  condition: string
  /** If set, this annotation of the target must equal the published revision too. */
  revisionAnnotation?: string
}

/** `spec.gates` as written: what must hold for a step's variants before the next step starts. */
export interface RolloutGatesSpec {
  soak?: string
  health?: HealthGate
  approval?: string
}

/** `spec` as written. */
export interface RolloutSpec {
  packageVariantSet: string
  steps: RolloutStepSpec[]
  gates?: RolloutGatesSpec
  paused?: boolean
  windows?: RolloutWindowSpec[]
}

/** One `status.approvals` entry: step `step` may start for upstream revision `revision`. */
export interface RolloutApprovalSpec {
  step: string
  revision: string
  /** RFC 3339. */
  time: string
}

/** `status` as written. */
export interface RolloutStatus {
  approvals?: RolloutApprovalSpec[]
}

/** How many of a step's variants may be published and not yet healthy at once. */
export type MaxConcurrent = { count: number } | { percent: number }

/** A step ready to sort variants. */
export interface RolloutStep {
  name: string
  /** Undefined for a step without `targets`: it takes every variant no earlier step took. */
  matches?: CompiledSelector
  /** Undefined: all of the step's variants at once. */
  maxConcurrent?: MaxConcurrent
}

/** An approval read from `status.approvals`. */
export interface RolloutApproval {
  step: string
  revision: string
  time: Date
}

/** A Rollout read and validated. */
export interface Rollout {
  object: KubeObject
  name: string
  namespace: string
  spec: RolloutSpec
  status: RolloutStatus
  steps: RolloutStep[]
  /** `gates.soak` in milliseconds; 0 without one. */
  soakMs: number
  health?: HealthGate
  /** `gates.approval`, default `auto`. */
  approval: 'manual' | 'auto'
  paused: boolean
  windows: RolloutWindow[]
  approvals: RolloutApproval[]
  /** Valid but likely not what was meant (a step that can get no variant). */
  warnings: FieldError[]
}

/** True for any version of the Rollout kind. */
export function isRollout(object: KubeObject): boolean {
  return object.isGroupKind(rolloutGroup, rolloutKind)
}

/** Reads and validates a Rollout; every problem is a field error naming its path. */
export function readRollout(object: KubeObject): { ok: true; value: Rollout } | { ok: false; errors: FieldError[] } {
  const d = new Decoder(object)
  if (object.apiVersion !== rolloutApiVersion)
    d.errors.push({
      field: 'apiVersion',
      message: `\`apiVersion\` ${JSON.stringify(object.apiVersion)} is not served: use ${rolloutApiVersion}`,
    })
  const spec = decodeSpec(d)
  const status = decodeStatus(d)
  if (d.errors.length > 0) return { ok: false, errors: d.errors }
  const errors: FieldError[] = []
  const warnings: FieldError[] = []
  const steps = compileSteps(spec.steps, errors, warnings)
  const gates = spec.gates ?? {}
  const soakMs = readSoak(gates.soak, errors)
  if (gates.health) checkHealthGate(gates.health, errors)
  if (gates.approval !== undefined && gates.approval !== 'manual' && gates.approval !== 'auto') {
    errors.push(fieldError('spec.gates.approval', `${JSON.stringify(gates.approval)} must be "manual" or "auto"`))
  }
  const windows = compileWindows(spec.windows, errors)
  const approvals = readApprovals(status.approvals ?? [], errors)
  if (errors.length > 0) return { ok: false, errors }
  return {
    ok: true,
    value: {
      object,
      name: object.name,
      namespace: object.namespace,
      spec,
      status,
      steps,
      soakMs,
      ...(gates.health ? { health: gates.health } : {}),
      approval: gates.approval === 'manual' ? 'manual' : 'auto',
      paused: spec.paused ?? false,
      windows,
      approvals,
      warnings,
    },
  }
}

/** `spec` as written, its shape checked (types and required fields), its values not yet. */
function decodeSpec(d: Decoder): RolloutSpec {
  d.isMapOrAbsent(['spec'])
  return compact({
    packageVariantSet: d.requiredString(['spec', 'packageVariantSet']) ?? '',
    steps: d.list(['spec', 'steps'], (p) => readStep(d, p)) ?? [],
    gates: d.map(['spec', 'gates'], (p) =>
      compact({
        soak: d.string([...p, 'soak']),
        health: d.map([...p, 'health'], (h) =>
          compact({
            condition: d.string([...h, 'condition']) ?? '',
            revisionAnnotation: d.string([...h, 'revisionAnnotation']),
          }),
        ),
        approval: d.string([...p, 'approval']),
      }),
    ),
    paused: d.boolean(['spec', 'paused']),
    windows: d.list(['spec', 'windows'], (p) =>
      compact({
        schedule: d.string([...p, 'schedule']) ?? '',
        duration: d.string([...p, 'duration']) ?? '',
        timeZone: d.string([...p, 'timeZone']),
      }),
    ),
  })
}

/** `status` as written, its shape checked. */
function decodeStatus(d: Decoder): RolloutStatus {
  d.isMapOrAbsent(['status'])
  return compact({
    approvals: d.list(['status', 'approvals'], (p) => ({
      step: d.string([...p, 'step']) ?? '',
      revision: d.string([...p, 'revision']) ?? '',
      time: d.string([...p, 'time']) ?? '',
    })),
  })
}

/** The windows compiled (schedule, duration, time zone); each error names its field. */
function compileWindows(specs: RolloutWindowSpec[] | undefined, errors: FieldError[]): RolloutWindow[] {
  const windows: RolloutWindow[] = []
  specs?.forEach((w, i) => {
    const compiled = compileWindow(w)
    if (compiled.ok) windows.push(compiled.window)
    else for (const e of compiled.errors) errors.push(fieldError(`spec.windows[${i}].${e.field}`, e.problem))
  })
  return windows
}

function readStep(d: Decoder, base: FieldPath): RolloutStepSpec {
  const maxConcurrent = d.object.get([...base, 'maxConcurrent'])
  if (
    maxConcurrent !== undefined &&
    maxConcurrent !== null &&
    typeof maxConcurrent !== 'number' &&
    typeof maxConcurrent !== 'string'
  ) {
    d.fail([...base, 'maxConcurrent'], 'must be a count or a percentage (e.g. 2 or 50%)')
  }
  return compact({
    name: d.string([...base, 'name']) ?? '',
    targets: d.map([...base, 'targets'], (p) => readLabelSelector(d, p)),
    maxConcurrent: typeof maxConcurrent === 'number' || typeof maxConcurrent === 'string' ? maxConcurrent : undefined,
  })
}

function readLabelSelector(d: Decoder, base: FieldPath): LabelSelector {
  return compact({
    matchLabels: d.stringMap([...base, 'matchLabels']),
    matchExpressions: d.list([...base, 'matchExpressions'], (p): LabelSelectorRequirement =>
      compact({
        key: d.string([...p, 'key']) ?? '',
        operator: d.string([...p, 'operator']) ?? '',
        values: d.stringList([...p, 'values']),
      }),
    ),
  })
}

function compileSteps(specs: readonly RolloutStepSpec[], errors: FieldError[], warnings: FieldError[]): RolloutStep[] {
  if (specs.length === 0) errors.push(fieldError('spec.steps', 'must have at least one step'))
  const seen = new Map<string, number>()
  let catchAll: string | undefined
  return specs.map((spec, i) => {
    const at = `spec.steps[${i}]`
    if (spec.name === '') errors.push(fieldError(`${at}.name`, 'is required'))
    else {
      const nameErrors = dns1123LabelErrors(spec.name)
      if (nameErrors.length > 0)
        errors.push(
          fieldError(`${at}.name`, `${JSON.stringify(spec.name)} is not a valid step name: ${nameErrors.join('; ')}`),
        )
      const first = seen.get(spec.name)
      if (first !== undefined)
        errors.push(
          fieldError(
            `${at}.name`,
            `${JSON.stringify(spec.name)} is also the name of spec.steps[${first}]: step names must be unique`,
          ),
        )
      else seen.set(spec.name, i)
    }
    if (catchAll !== undefined) {
      warnings.push(
        fieldError(
          at,
          `step ${JSON.stringify(spec.name)} can get no variant: step ${JSON.stringify(catchAll)} before it has no \`targets\` and takes every variant left`,
        ),
      )
    }
    const step: RolloutStep = { name: spec.name }
    const selector = spec.targets ?? {}
    if (!spec.targets || isEmptySelector(selector)) catchAll ??= spec.name
    else {
      const compiled = compileLabelSelector(selector)
      if (compiled.ok) step.matches = compiled.matches
      else errors.push(fieldError(`${at}.targets`, `is not a valid label selector: ${compiled.error}`))
    }
    if (spec.maxConcurrent !== undefined) {
      const max = readMaxConcurrent(spec.maxConcurrent)
      if (max.ok) step.maxConcurrent = max.value
      else errors.push(fieldError(`${at}.maxConcurrent`, max.error))
    }
    return step
  })
}

function isEmptySelector(selector: LabelSelector): boolean {
  return Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0
}

/** A count of at least 1, or a percentage from 1% to 100%: a step that may publish nothing would hold its variants forever. */
function readMaxConcurrent(value: number | string): { ok: true; value: MaxConcurrent } | { ok: false; error: string } {
  const hint =
    'must be a count of at least 1 or a percentage from 1% to 100% (e.g. 2 or 50%); to hold a step, use `spec.gates.approval: manual`'
  if (typeof value === 'number')
    return Number.isInteger(value) && value >= 1
      ? { ok: true, value: { count: value } }
      : { ok: false, error: `${value} ${hint}` }
  const m = /^(\d+)%$/.exec(value)
  const percent = m ? Number(m[1]) : NaN
  if (percent >= 1 && percent <= 100) return { ok: true, value: { percent } }
  return { ok: false, error: `${JSON.stringify(value)} ${hint}` }
}

function readSoak(soak: string | undefined, errors: FieldError[]): number {
  if (soak === undefined) return 0
  const parsed = parseDuration(soak)
  if (!parsed.ok) errors.push(fieldError('spec.gates.soak', parsed.error))
  else if (parsed.ms < 0) errors.push(fieldError('spec.gates.soak', `${JSON.stringify(soak)} must not be negative`))
  return parsed.ok ? Math.max(0, parsed.ms) : 0
}

function checkHealthGate(health: HealthGate, errors: FieldError[]): void {
  if (health.condition === '')
    errors.push(
      fieldError(
        'spec.gates.health.condition',
        'is required: the condition type each target must report True (e.g. Ready)',
      ),
    )
  else {
    const conditionErrors = qualifiedNameErrors(health.condition)
    if (conditionErrors.length > 0)
      errors.push(
        fieldError(
          'spec.gates.health.condition',
          `${JSON.stringify(health.condition)} is not a condition type: ${conditionErrors.join('; ')}`,
        ),
      )
  }
  if (health.revisionAnnotation !== undefined) {
    const keyErrors = qualifiedNameErrors(health.revisionAnnotation)
    if (keyErrors.length > 0)
      errors.push(
        fieldError(
          'spec.gates.health.revisionAnnotation',
          `${JSON.stringify(health.revisionAnnotation)} is not an annotation key: ${keyErrors.join('; ')}`,
        ),
      )
  }
}

function readApprovals(approvals: readonly RolloutApprovalSpec[], errors: FieldError[]): RolloutApproval[] {
  const out: RolloutApproval[] = []
  approvals.forEach((a, i) => {
    const at = `status.approvals[${i}]`
    if (a.step === '') errors.push(fieldError(`${at}.step`, 'is required'))
    if (a.revision === '') errors.push(fieldError(`${at}.revision`, 'is required'))
    const time = parseRfc3339(a.time)
    if (!time.ok) errors.push(fieldError(`${at}.time`, `${JSON.stringify(a.time)} ${time.error}`))
    else if (a.step !== '' && a.revision !== '') out.push({ step: a.step, revision: a.revision, time: time.date })
  })
  return out
}

function fieldError(field: string, problem: string): FieldError {
  return { field, message: `\`${field}\` ${problem}` }
}
