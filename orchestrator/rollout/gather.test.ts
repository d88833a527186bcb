import { parseObjects } from '../../functions/krm/index.js'
import { readFleetRollouts, rolloutRevision } from './gather.js'

const rollout = (name: string, spec: string, namespace = 'default') =>
  `apiVersion: kpt-variants.dev/v1alpha1\nkind: Rollout\nmetadata: {name: ${name}, namespace: ${namespace}}\nspec: ${spec}\n`

function read(...docs: string[]) {
  return readFleetRollouts(parseObjects(docs.join('---\n'), 'rollouts.yaml'))
}

describe('readFleetRollouts', () => {
  test('one rollout per set, by namespace', () => {
    const { bySet, problems } = read(
      rollout('a', '{packageVariantSet: s, steps: [{name: all}]}'),
      rollout('b', '{packageVariantSet: s, steps: [{name: all}]}', 'other'),
    )
    expect([...bySet.keys()]).toEqual(['default/s', 'other/s'])
    expect((bySet.get('default/s') as { rollout: { name: string } }).rollout.name).toBe('a')
    expect(problems).toEqual([])
  })

  test('an invalid rollout holds its set and is a problem naming the field', () => {
    const { bySet, problems } = read(rollout('a', '{packageVariantSet: s, steps: [{name: all, maxConcurrent: 0}]}'))
    expect(bySet.get('default/s')).toEqual({
      held: expect.stringMatching(
        /^held: rollout a is invalid: `spec\.steps\[0\]\.maxConcurrent` 0 must be a count of at least 1/,
      ),
    })
    expect(problems).toEqual([
      {
        file: 'rollouts.yaml',
        message: expect.stringMatching(/^Rollout default\/a: `spec\.steps\[0\]\.maxConcurrent` 0 must be/),
      },
    ])
  })

  test('two rollouts of one set hold it', () => {
    const { bySet } = read(
      rollout('a', '{packageVariantSet: s, steps: [{name: all}]}'),
      rollout('b', '{packageVariantSet: s, steps: [{name: x}]}'),
    )
    expect(bySet.get('default/s')).toEqual({ held: 'held: rollouts a and b all pace set default/s: keep one' })
  })

  test('warnings are apart from problems', () => {
    const { problems, warnings } = read(
      rollout('a', '{packageVariantSet: s, steps: [{name: rest}, {name: eu, targets: {matchLabels: {r: eu}}}]}'),
    )
    expect(problems).toEqual([])
    expect(warnings.map((p) => p.message)).toEqual([
      'Rollout default/a: `spec.steps[1]` step "eu" can get no variant: step "rest" before it has no `targets` and takes every variant left',
    ])
  })
})

test('rolloutRevision', () => {
  expect(rolloutRevision({ ref: 'nginx/v3', commit: '1a2b3c4d5e6f7a8b9c0d' })).toBe('nginx/v3@1a2b3c4d5e6f')
})
