/**
 * Builders for the rollout tests: a Rollout from a few fields, variants from
 * a target name and labels. Test support only (imported by *.test.ts).
 */
import { parseObjects } from '../../functions/krm/index.js'
import { readRollout } from '../../functions/api/rollout.js'
import type { Rollout } from '../../functions/api/rollout.js'
import type { PublishedRevision, RolloutVariant, TargetCondition } from '../../orchestrator/rollout/types.js'

/** A Rollout read from its `spec` (and optional `status`), given as YAML flow or block text. */
export function rolloutOf(spec: string, status = ''): Rollout {
  const text = `apiVersion: kpt-variants.dev/v1alpha1\nkind: Rollout\nmetadata: {name: edge-monitor, namespace: default}\nspec: ${spec}\n${status ? `status: ${status}\n` : ''}`
  const [object] = parseObjects(text, 'rollout.yaml')
  const read = readRollout(object!)
  if (!read.ok) throw new Error(read.errors.map((e) => e.message).join('; '))
  return read.value
}

/** The canary / eu / rest rollout of the issue, without windows; `gates` replaces its gates. */
export function issueRollout(gates = '{soak: 30m, health: {condition: Ready}}', extra = ''): Rollout {
  return rolloutOf(
    `{packageVariantSet: edge-monitor, steps: [{name: canary, targets: {matchLabels: {tier: canary}}}, {name: eu, targets: {matchLabels: {region: eu-west1}}, maxConcurrent: 50%}, {name: rest}], gates: ${gates}${extra}}`,
  )
}

export const revision = 'nginx/v2@222222222222'
export const oldRevision = 'nginx/v1@111111111111'

/** Options of one variant. */
export interface VariantOptions {
  labels?: Record<string, string>
  /** A draft waiting; default true. */
  draft?: boolean
  /** Published at `revision` (true), at `oldRevision` ('old'), never (false, default); or exactly this. */
  published?: boolean | 'old' | PublishedRevision
  /** Minutes before `now` it was published; default 60. */
  publishedAgo?: number
  ready?: 'True' | 'False' | 'Unknown'
  annotations?: Record<string, string>
}

export const now = new Date('2025-06-02T10:00:00Z')

/** A variant `default/<name>` whose target is named `name`. */
export function variant(name: string, o: VariantOptions = {}): RolloutVariant {
  const conditions: TargetCondition[] = o.ready
    ? [{ type: 'Ready', status: o.ready, ...(o.ready === 'False' ? { reason: 'ImagePullBackOff' } : {}) }]
    : []
  const v: RolloutVariant = {
    key: `default/${name}`,
    target: { name, labels: o.labels ?? {}, annotations: o.annotations ?? {}, conditions },
    draft: o.draft ?? true,
  }
  const time = new Date(now.getTime() - (o.publishedAgo ?? 60) * 60_000)
  if (o.published === true) v.published = { tag: 'nginx/v2', commit: 'c2', upstream: revision, time }
  else if (o.published === 'old') v.published = { tag: 'nginx/v1', commit: 'c1', upstream: oldRevision, time }
  else if (o.published) v.published = o.published
  return v
}

export const canary = { tier: 'canary' }
export const eu = { region: 'eu-west1' }
