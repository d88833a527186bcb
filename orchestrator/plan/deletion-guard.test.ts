import fc from 'fast-check'
import { KubeObject } from '../../functions/krm/index.js'
import { allowMassDeletionAnnotation, guardDeletions } from './deletion-guard.js'
import type { DeletionGuardSettings, GuardedRemoval } from './deletion-guard.js'

const setObject = (annotations: Record<string, string> = {}) =>
  KubeObject.fromObject({
    apiVersion: 'config.porch.kpt.dev/v1alpha2',
    kind: 'PackageVariantSet',
    metadata: { name: 'nginx', namespace: 'default', annotations },
  })

const removals = (count: number, status: GuardedRemoval['status'] = 'deleted'): GuardedRemoval[] =>
  Array.from({ length: count }, (_, i) => ({
    path: `edge-${String(i + 1).padStart(2, '0')}/nginx`,
    set: 'default/nginx',
    status,
  }))

function guard(
  count: number,
  existing: number,
  settings: DeletionGuardSettings = {},
  sets = [setObject()],
  emptyMatches: string[] = [],
) {
  return guardDeletions(removals(count), () => ({ existing, emptyMatches }), sets, settings)
}

describe('the deletion guard', () => {
  test.each([
    // [removed, existing, held]
    [12, 12, true],
    [11, 12, true],
    [7, 12, true],
    [6, 12, false], // half is not more than half
    [1, 9, false], // one cluster relabelled out of nine
    [1, 1, false], // a single removal is never refused by the share
    [2, 2, true],
    [2, 3, true],
    [2, 4, false],
  ])('by default, %i of %i removed: held %s', (removed, existing, held) => {
    expect(guard(removed, existing)).toHaveLength(held ? 1 : 0)
  })

  test('says how many, which set, why, and how to allow it', () => {
    const [held] = guard(
      12,
      12,
      {},
      [setObject()],
      [
        'spec.targets[0].objectSelector: no WorkloadCluster (infra.nephio.org/v1alpha1) matches the selector "site=edge"',
      ],
    )
    expect(held).toEqual({
      set: 'default/nginx',
      removals: 12,
      existing: 12,
      message:
        'the run would delete 12 of its 12 packages (edge-01/nginx, edge-02/nginx, edge-03/nginx and 9 more), more than the deletion guard allows (half of a set, and at least 2): their targets no longer match (spec.targets[0].objectSelector: no WorkloadCluster (infra.nephio.org/v1alpha1) matches the selector "site=edge"). Nothing of the set was written. If this is meant: --allow-deletions for one run, --max-deletions N or P% for another limit, or the annotation kpt-variants.dev/allow-mass-deletion: "true" on the set',
    })
  })

  test('a set removed from the fleet is named as the reason', () => {
    const [held] = guard(3, 3, {}, [])
    expect(held!.message).toContain(
      'the run would delete 3 of its 3 packages (edge-01/nginx, edge-02/nginx, edge-03/nginx), more than the deletion guard allows (half of a set, and at least 2): the PackageVariantSet is no longer in the fleet.',
    )
  })

  test('orphaning counts as removing, and is called so', () => {
    const [held] = guardDeletions(removals(3, 'orphaned'), () => ({ existing: 3, emptyMatches: [] }), [], {})
    expect(held!.message).toMatch(/^the run would orphan 3 of its 3 packages/)
  })

  test('--max-deletions sets a count or a share; --allow-deletions and the annotation lift it', () => {
    expect(guard(3, 12, { maxDeletions: { count: 2 } })[0]!.message).toContain(
      'more than the --max-deletions limit of 2',
    )
    expect(guard(2, 12, { maxDeletions: { count: 2 } })).toEqual([])
    expect(guard(1, 12, { maxDeletions: { count: 0 } })).toHaveLength(1)
    expect(guard(4, 12, { maxDeletions: { percent: 25 } })[0]!.message).toContain('the --max-deletions limit of 25%')
    expect(guard(3, 12, { maxDeletions: { percent: 25 } })).toEqual([])
    expect(guard(12, 12, { allowDeletions: true })).toEqual([])
    expect(guard(12, 12, {}, [setObject({ [allowMassDeletionAnnotation]: 'true' })])).toEqual([])
    expect(guard(12, 12, {}, [setObject({ [allowMassDeletionAnnotation]: 'yes' })])).toHaveLength(1)
  })

  test('the existing count is never below the removals', () => {
    expect(guard(3, 0)[0]).toMatchObject({ removals: 3, existing: 3 })
  })

  test('property: by default a set is held exactly when it loses more than half, and at least two', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 0, max: 200 }), (removed, kept) => {
        const existing = removed + kept
        const held = guard(removed, existing).length === 1
        expect(held).toBe(removed >= 2 && removed * 2 > existing)
      }),
    )
  })
})
