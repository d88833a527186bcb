import { setConditions, statusUpdates, variantConditions } from './cluster-status.js'
import { nextStatus } from '../fleet/cluster-objects.js'
import type { RunOutcome } from './cluster-status.js'
import type { ListedObject } from '../fleet/cluster-objects.js'
import type { VariantReport } from '../report/report.js'
import { failure } from '../report/failure.js'

const now = '2026-03-03T03:03:03Z'
const earlier = '2026-01-01T00:00:00Z'

const report = (
  subject: string,
  status: VariantReport['status'],
  more: Partial<VariantReport> = {},
): VariantReport => ({ subject, status, reasons: [], warnings: [], conflicts: [], ...more })

const outcome: RunOutcome = {
  variants: [
    { key: 'default/ok' },
    { key: 'default/broken' },
    { key: 'default/nginx-edge-01', set: 'default/nginx' },
    { key: 'default/nginx-edge-02', set: 'default/nginx' },
  ],
  failures: [
    {
      subject: 'PackageVariant default/invalid',
      key: 'default/invalid',
      code: 'ValidationError',
      message: 'spec.upstream.package must not be empty',
    },
    {
      subject: 'PackageVariantSet default/bad',
      set: 'default/bad',
      message: "could not find upstream package revision 'nginx/7' in repo 'blueprints'",
      code: 'UpstreamNotFound',
    },
    {
      subject: 'PackageVariantSet default/half target WorkloadCluster "x"',
      set: 'default/half',
      message: 'repository "x" could not be loaded',
      code: 'UnexpectedError',
    },
  ],
  report: {
    dryRun: false,
    problems: [],
    variants: [
      report('PackageVariant default/ok', 'unchanged', { path: 'edge-01/web' }),
      report('PackageVariant default/broken', 'failed', {
        path: 'edge-01/broken',
        reasons: [failure('FunctionFailed', 'function failed'), failure('FunctionFailed', 'exit 1')],
      }),
      report('PackageVariant default/invalid', 'failed', {
        reasons: [failure('ValidationError', 'spec.upstream.package must not be empty')],
      }),
      report('PackageVariant default/nginx-edge-01', 'created', { path: 'edge-01/nginx' }),
      report('PackageVariant default/nginx-edge-02', 'failed', {
        path: 'edge-02/nginx',
        reasons: [failure('MergeConflict', 'conflict')],
      }),
    ],
  },
  sharded: false,
}

const listed = (kind: string, name: string, status?: unknown): ListedObject => ({
  apiVersion: 'config.porch.kpt.dev/v1alpha1',
  kind,
  object: {
    metadata: { name, namespace: 'default', resourceVersion: `${name.length}` },
    ...(status ? { status } : {}),
  },
})

describe('PackageVariant conditions, as Porch sets them', () => {
  test('rendered but not ready: not Ready, with the unmet gates, still naming its package', () => {
    const notReady = 'not ready: config.injection.ConfigMap.region-endpoints False: no resource matched'
    const unready: RunOutcome = {
      ...outcome,
      report: {
        ...outcome.report,
        variants: [report('PackageVariant default/ok', 'created', { path: 'edge-01/web', notReady })],
      },
    }
    expect(variantConditions('default/ok', unready)).toEqual({
      conditions: [
        { type: 'Stalled', status: 'False', reason: 'Valid', message: 'all validation checks passed' },
        { type: 'Ready', status: 'False', reason: 'NotReady', message: notReady },
      ],
      downstreamTargets: [{ name: 'edge-01/web' }],
    })
  })

  test('rendered: valid and Ready, naming its downstream package', () => {
    expect(variantConditions('default/ok', outcome)).toEqual({
      conditions: [
        { type: 'Stalled', status: 'False', reason: 'Valid', message: 'all validation checks passed' },
        {
          type: 'Ready',
          status: 'True',
          reason: 'NoErrors',
          message: 'successfully ensured downstream package variant',
        },
      ],
      downstreamTargets: [{ name: 'edge-01/web' }],
    })
  })

  test('not planned: Stalled with ValidationError, not Ready', () => {
    expect(variantConditions('default/invalid', outcome)).toEqual({
      conditions: [
        {
          type: 'Stalled',
          status: 'True',
          reason: 'ValidationError',
          message: 'spec.upstream.package must not be empty',
        },
        { type: 'Ready', status: 'False', reason: 'Error', message: 'invalid packagevariant object' },
      ],
    })
  })

  test('render failed: valid, not Ready, the reasons as the message', () => {
    expect(variantConditions('default/broken', outcome)).toEqual({
      conditions: [
        { type: 'Stalled', status: 'False', reason: 'Valid', message: 'all validation checks passed' },
        { type: 'Ready', status: 'False', reason: 'Error', message: 'function failed; exit 1' },
      ],
    })
  })

  test('not in this run (another shard): none', () => {
    expect(variantConditions('default/elsewhere', outcome)).toBeUndefined()
  })
})

describe('PackageVariantSet conditions', () => {
  test("the set's own failure, with fan-out's reason; a target's failure", () => {
    expect(setConditions('default/bad', outcome)).toEqual([
      {
        type: 'Stalled',
        status: 'True',
        reason: 'UpstreamNotFound',
        message: "could not find upstream package revision 'nginx/7' in repo 'blueprints'",
      },
      {
        type: 'Ready',
        status: 'False',
        reason: 'UpstreamNotFound',
        message: "could not find upstream package revision 'nginx/7' in repo 'blueprints'",
      },
    ])
    expect(setConditions('default/half', outcome)[0]).toEqual({
      type: 'Stalled',
      status: 'True',
      reason: 'UnexpectedError',
      message: 'repository "x" could not be loaded',
    })
  })

  test('a failed variant of the set fails the set; with --shard only what every shard sees counts', () => {
    expect(setConditions('default/nginx', outcome)[1]).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'UnexpectedError',
      message: 'PackageVariant default/nginx-edge-02: conflict',
    })
    expect(setConditions('default/nginx', { ...outcome, sharded: true })[1]).toEqual({
      type: 'Ready',
      status: 'True',
      reason: 'Reconciled',
      message: 'package variants successfully reconciled',
    })
    expect(setConditions('default/other', outcome)[1]).toEqual({
      type: 'Ready',
      status: 'True',
      reason: 'Reconciled',
      message: 'package variants successfully reconciled',
    })
  })
})

describe('statusUpdates', () => {
  test("a message longer than metav1.Condition's limit is truncated", () => {
    const long = {
      ...outcome,
      report: {
        ...outcome.report,
        variants: [
          report('PackageVariant default/broken', 'failed', {
            reasons: [failure('FunctionFailed', 'x'.repeat(40000))],
          }),
        ],
      },
    }
    const [update] = statusUpdates([listed('PackageVariant', 'broken')], [], long, now)
    const message = (update!.status['conditions'] as { message: string }[])[1]!.message
    expect(message).toHaveLength(32768)
    expect(message.endsWith('... (truncated: see the report)')).toBe(true)
  })

  test('new conditions get the time; an unchanged status keeps its time; other conditions stay; unchanged objects get no update', () => {
    const keep = { type: 'Custom', status: 'True', reason: 'Mine', message: 'kept', lastTransitionTime: earlier }
    const sameStatus = {
      conditions: [
        keep,
        // Sorted keys, as a real API server returns custom objects; the same status with an old message.
        { lastTransitionTime: earlier, message: 'old', reason: 'Valid', status: 'False', type: 'Stalled' },
      ],
    }
    const upToDate = {
      conditions: [
        {
          lastTransitionTime: earlier,
          message: 'all validation checks passed',
          reason: 'Valid',
          status: 'False',
          type: 'Stalled',
        },
        {
          lastTransitionTime: earlier,
          message: 'successfully ensured downstream package variant',
          reason: 'NoErrors',
          status: 'True',
          type: 'Ready',
        },
      ],
      downstreamTargets: [{ name: 'edge-01/web' }],
    }
    const updates = statusUpdates(
      [
        listed('PackageVariant', 'ok', upToDate),
        listed('PackageVariant', 'broken', sameStatus),
        listed('PackageVariant', 'elsewhere'),
      ],
      [listed('PackageVariantSet', 'bad')],
      outcome,
      now,
    )
    // Each carries the resourceVersion it was computed from (the write is conditional on it).
    expect(updates.map(({ wanted: _, ...update }) => update)).toEqual([
      {
        apiVersion: 'config.porch.kpt.dev/v1alpha1',
        kind: 'PackageVariant',
        namespace: 'default',
        name: 'broken',
        resourceVersion: '6',
        subject: 'PackageVariant default/broken',
        status: {
          conditions: [
            keep,
            {
              type: 'Stalled',
              status: 'False',
              lastTransitionTime: earlier,
              reason: 'Valid',
              message: 'all validation checks passed',
            },
            {
              type: 'Ready',
              status: 'False',
              lastTransitionTime: now,
              reason: 'Error',
              message: 'function failed; exit 1',
            },
          ],
        },
      },
      {
        apiVersion: 'config.porch.kpt.dev/v1alpha1',
        kind: 'PackageVariantSet',
        namespace: 'default',
        name: 'bad',
        resourceVersion: '3',
        subject: 'PackageVariantSet default/bad',
        status: {
          conditions: [
            {
              type: 'Stalled',
              status: 'True',
              lastTransitionTime: now,
              reason: 'UpstreamNotFound',
              message: "could not find upstream package revision 'nginx/7' in repo 'blueprints'",
            },
            {
              type: 'Ready',
              status: 'False',
              lastTransitionTime: now,
              reason: 'UpstreamNotFound',
              message: "could not find upstream package revision 'nginx/7' in repo 'blueprints'",
            },
          ],
        },
      },
    ])
  })

  test('after a conflict the status is computed again from the object as another writer left it, keeping its conditions', () => {
    const [update] = statusUpdates([listed('PackageVariant', 'ok')], [], outcome, now)
    expect(update!.wanted).toEqual({
      conditions: variantConditions('default/ok', outcome)!.conditions,
      extra: { downstreamTargets: [{ name: 'edge-01/web' }] },
      now,
    })
    const theirs = { type: 'Approved', status: 'True', reason: 'ByHand', message: 'ok', lastTransitionTime: earlier }
    const ready = {
      type: 'Ready',
      status: 'True',
      reason: 'NoErrors',
      message: 'successfully ensured downstream package variant',
      lastTransitionTime: earlier,
    }
    expect(nextStatus({ conditions: [theirs, ready] }, update!.wanted)).toEqual({
      conditions: [
        theirs,
        ready,
        {
          type: 'Stalled',
          status: 'False',
          lastTransitionTime: now,
          reason: 'Valid',
          message: 'all validation checks passed',
        },
      ],
      downstreamTargets: [{ name: 'edge-01/web' }],
    })
    // Another writer already wrote what this run wants: nothing to write.
    expect(nextStatus(update!.status, update!.wanted)).toBeUndefined()
  })
})
