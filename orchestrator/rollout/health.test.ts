import { parseObjects } from '../../functions/krm/index.js'
import { source } from '../../test/support/source.js'
import { rolloutTarget, targetHealth } from './health.js'
import type { RolloutTarget } from './types.js'

const published = { tag: 'nginx/v3', commit: 'abc123', upstream: 'nginx/v2@2', time: new Date(0) }

describe('rolloutTarget', () => {
  test("reads a fleet object's name, labels, annotations and conditions, skipping entries it cannot read", () => {
    const [object] = parseObjects(
      source`
        apiVersion: infra.nephio.org/v1alpha1
        kind: WorkloadCluster
        metadata:
          name: edge-01
          labels: {tier: canary}
          annotations: {kpt-variants.dev/running-revision: nginx/v3}
        status:
          conditions:
          - {type: Ready, status: "False", reason: ImagePullBackOff, message: back-off pulling nginx:1.27}
          - {type: Synced}
          - just a string
          - {status: "True"}
      `,
      'clusters.yaml',
    )
    expect(rolloutTarget(object!)).toEqual({
      name: 'edge-01',
      labels: { tier: 'canary' },
      annotations: { 'kpt-variants.dev/running-revision': 'nginx/v3' },
      conditions: [
        { type: 'Ready', status: 'False', reason: 'ImagePullBackOff', message: 'back-off pulling nginx:1.27' },
        { type: 'Synced', status: 'Unknown' },
      ],
    })
  })
})

describe('targetHealth', () => {
  const target = (status?: string, running?: string): RolloutTarget => ({
    name: 'edge-01',
    labels: {},
    annotations: running ? { 'example.com/rev': running } : {},
    conditions: status ? [{ type: 'Ready', status, reason: 'Why', message: 'because' }] : [],
  })
  const gate = { condition: 'Ready' }
  const withRevision = { condition: 'Ready', revisionAnnotation: 'example.com/rev' }

  test.each([
    ['no gate', target(), undefined, { state: 'healthy' }],
    ['True', target('True'), gate, { state: 'healthy' }],
    ['no condition', target(), gate, { state: 'pending', detail: 'edge-01 has no Ready condition' }],
    ['Unknown', target('Unknown'), gate, { state: 'pending', detail: 'edge-01 Ready is Unknown' }],
    ['something else', target('Maybe'), gate, { state: 'pending', detail: 'edge-01 Ready is Maybe' }],
    ['False', target('False'), gate, { state: 'failed', detail: 'edge-01 Ready is False', message: 'Why: because' }],
    ['the published tag', target('True', 'nginx/v3'), withRevision, { state: 'healthy' }],
    ['the published commit', target('True', 'abc123'), withRevision, { state: 'healthy' }],
    [
      'another revision',
      target('False', 'nginx/v2'),
      withRevision,
      { state: 'pending', detail: 'edge-01 runs nginx/v2, not nginx/v3' },
    ],
    [
      'no revision',
      target('True'),
      withRevision,
      { state: 'pending', detail: 'edge-01 has no example.com/rev annotation' },
    ],
  ])('%s', (_, t, g, want) => {
    expect(targetHealth(t, published, g)).toEqual(want)
  })
})
