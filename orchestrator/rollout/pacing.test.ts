import { parseObjects } from '../../functions/krm/index.js'
import { now, revision } from '../../test/support/rollout.js'
import { readFleetRollouts } from './gather.js'
import { pacePublishing } from './pacing.js'
import type { PublishCandidate } from './pacing.js'

const rollouts = readFleetRollouts(
  parseObjects(
    `apiVersion: kpt-variants.dev/v1alpha1
kind: Rollout
metadata: {name: web, namespace: default}
spec: {packageVariantSet: web, steps: [{name: canary, targets: {matchLabels: {tier: canary}}}, {name: rest}]}
---
apiVersion: kpt-variants.dev/v1alpha1
kind: Rollout
metadata: {name: broken, namespace: default}
spec: {packageVariantSet: db, steps: []}
`,
    'rollouts.yaml',
  ),
)

const candidate = (name: string, o: Partial<PublishCandidate> = {}): PublishCandidate => ({
  path: `${name}/pkg`,
  key: `default/${name}`,
  revision,
  draft: true,
  target: { name, labels: name === 'edge-01' ? { tier: 'canary' } : {}, annotations: {}, conditions: [] },
  ...o,
})

const decided = (result: ReturnType<typeof pacePublishing>) =>
  Object.fromEntries([...result.decisions].map(([path, d]) => [path, d.publish ? 'publish' : d.reason]))

describe('pacePublishing', () => {
  test('a paced set publishes what its rollout allows; other variants are published; variants without a draft get no decision', () => {
    const result = pacePublishing(
      [
        candidate('edge-01', { set: 'default/web' }),
        candidate('edge-02', { set: 'default/web' }),
        candidate('solo'),
        candidate('idle', { draft: false }),
        candidate('other', { set: 'default/unpaced' }),
      ],
      rollouts,
      { now },
    )
    expect(decided(result)).toEqual({
      'edge-01/pkg': 'publish',
      'edge-02/pkg': `waiting: step rest starts after canary is published at ${revision}: edge-01 is not yet`,
      'solo/pkg': 'publish',
      'other/pkg': 'publish',
    })
    expect(result.evaluations.map((e) => [e.rollout, e.state])).toEqual([['default/web', 'progressing']])
  })

  test('a set whose Rollout is invalid is held whole; --skip-rollout publishes it all', () => {
    const list = [candidate('db-1', { set: 'default/db' }), candidate('edge-02', { set: 'default/web' })]
    expect(decided(pacePublishing(list, rollouts, { now }))['db-1/pkg']).toMatch(
      /^held: rollout broken is invalid: `spec.steps` must have at least one step/,
    )
    expect(decided(pacePublishing(list, rollouts, { now, skipRollout: true }))).toEqual({
      'db-1/pkg': 'publish',
      'edge-02/pkg': 'publish',
    })
  })

  test('an automatic publish holds drafts with conflicts or deletions unless told', () => {
    const list = [candidate('a', { conflicts: true }), candidate('b', { removes: true }), candidate('c')]
    expect(decided(pacePublishing(list, rollouts, { now, holdConflicts: true, holdDeletions: true }))).toEqual({
      'a/pkg':
        'held: the draft reports conflicts: review it, then `kpt-variants publish`, or render with --publish-conflicts',
      'b/pkg':
        'held: the draft deletes the package: review it, then `kpt-variants publish`, or render with --publish-deletions',
      'c/pkg': 'publish',
    })
    expect(decided(pacePublishing(list, rollouts, { now, holdConflicts: true }))['b/pkg']).toBe('publish')
  })
})

describe('readiness gates', () => {
  const notReady = 'not ready: config.injection.ConfigMap.region-endpoints False: no resource matched'
  test("a draft that is not ready is held with the gate's reason, paced or not; publishNotReady (--force) lets it go", () => {
    const candidates = [
      candidate('edge-01', { set: 'default/web', notReady }),
      candidate('edge-03', { notReady }),
      candidate('edge-04'),
    ]
    expect(decided(pacePublishing(candidates, rollouts, { now }))).toEqual({
      'edge-01/pkg': notReady,
      'edge-03/pkg': notReady,
      'edge-04/pkg': 'publish',
    })
    expect(decided(pacePublishing(candidates, rollouts, { now, publishNotReady: true }))).toEqual({
      'edge-01/pkg': 'publish',
      'edge-03/pkg': 'publish',
      'edge-04/pkg': 'publish',
    })
  })

  test("a paced set's variant that cannot be rendered holds its step; its revision comes from the others", () => {
    const result = pacePublishing(
      [
        candidate('edge-01', {
          set: 'default/web',
          draft: false,
          revision: '',
          failure: 'repository "edge-01" not found',
        }),
        candidate('edge-02', { set: 'default/web' }),
      ],
      rollouts,
      { now },
    )
    expect(result.evaluations[0]).toMatchObject({ revision, state: 'halted' })
    expect(decided(result)).toEqual({
      'edge-02/pkg': `waiting: step rest starts after canary renders every variant: edge-01's variant cannot be rendered: repository "edge-01" not found`,
    })
  })
})
