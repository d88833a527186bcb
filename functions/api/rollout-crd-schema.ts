/** The schema of our Rollout CRD (docs/rollouts.md). */
import type {
  HealthGate,
  RolloutApprovalSpec,
  RolloutGatesSpec,
  RolloutSpec,
  RolloutStatus,
  RolloutStepSpec,
} from './rollout.js'
import type { RolloutWindowSpec } from './rollout-windows.js'
import { array, boolean, fields, labelSelectorFields, object, string } from './crd-schema.js'
import type { PrinterColumn } from './crd-schema.js'

const rolloutSelector = object(labelSelectorFields, {
  'x-kubernetes-map-type': 'atomic',
  description: "A label selector over the set's target objects; none: every variant no earlier step took.",
})

/**
 * Rollout's schema. Formats the API server cannot check (cron schedules,
 * durations, time zones, percentages) are checked by `readRollout`, which
 * every run calls, with messages naming the field.
 */
const rolloutSpec = fields<RolloutSpec>(
  {
    gates: fields<RolloutGatesSpec>(
      {
        approval: string({
          enum: ['manual', 'auto'],
          description:
            'manual: each step after the first starts only once approved (`kpt-variants rollout approve`). Default: auto.',
        }),
        health: fields<HealthGate>(
          {
            condition: string({
              minLength: 1,
              description: 'The condition type each target must report True in status.conditions, e.g. Ready.',
            }),
            revisionAnnotation: string({
              description:
                'If set, this annotation of the target must equal the published revision (its tag or commit).',
            }),
          },
          { required: ['condition'] },
        ),
        soak: string({
          description: "Time since a step's last publish before the next step starts, e.g. 30m. Default: none.",
        }),
      },
      { description: "What must hold for a step's variants before the next step starts." },
    ),
    packageVariantSet: string({
      minLength: 1,
      description: 'The PackageVariantSet whose variants this rollout paces, in the same namespace.',
    }),
    paused: boolean(),
    steps: array(
      fields<RolloutStepSpec>(
        {
          maxConcurrent: {
            'x-kubernetes-int-or-string': true,
            description:
              "At most this many (a count, or a percentage of the step's variants) published and not yet healthy at once. Default: all.",
          },
          name: string({ minLength: 1, maxLength: 63, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' }),
          targets: rolloutSelector,
        },
        { required: ['name'] },
      ),
      {
        description: 'In order; a variant belongs to the first step whose selector matches its target.',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
      },
    ),
    windows: array(
      fields<RolloutWindowSpec>(
        {
          duration: string({ description: 'How long each window stays open, e.g. 8h.' }),
          schedule: string({ description: 'When a window opens: a cron schedule of five fields, e.g. "0 9 * * 1-5".' }),
          timeZone: string({ description: 'The IANA time zone the schedule is read in. Default: UTC.' }),
        },
        { required: ['schedule', 'duration'] },
      ),
      { description: 'Publishing happens only inside a window; none: at any time.' },
    ),
  },
  { required: ['packageVariantSet', 'steps'] },
)

const rolloutStatus = fields<RolloutStatus>({
  approvals: array(
    fields<RolloutApprovalSpec>(
      {
        revision: string({ description: 'The upstream revision the approval is for.' }),
        step: string(),
        time: string({ format: 'date-time' }),
      },
      { required: ['step', 'revision', 'time'] },
    ),
  ),
})

export const rolloutSchema = object(
  { apiVersion: string(), kind: string(), metadata: { type: 'object' }, spec: rolloutSpec, status: rolloutStatus },
  {
    description:
      "Rollout paces the publishing of one PackageVariantSet's variants: in steps, gated by health, time and approval.",
  },
)

export const rolloutColumns: PrinterColumn[] = [
  { jsonPath: '.spec.packageVariantSet', name: 'PackageVariantSet', type: 'string' },
  { jsonPath: '.spec.paused', name: 'Paused', type: 'boolean' },
  { jsonPath: '.metadata.creationTimestamp', name: 'Age', type: 'date' },
]
