import { defaultDependencyPolicy } from '../../api/dependencies.js'
import type { PlanInput } from '../plan.js'
import { planDependencies } from '../resolve.js'
import { buildGraph } from './build.js'
import { EdgeRounds, maxChanges } from './rounds.js'

/**
 * The API `x/v1/B` is provided only by p@1.0.0, which needs p ^2 (itself at
 * another version): no plan exists. Edge by edge, the API re-chooses 1.0.0 and
 * the range 2.0.0, for ever but for the bound on how often a version changes.
 */
const flipFlop: PlanInput = {
  targets: [
    {
      package: 'app',
      namespace: '',
      version: '1.0.0',
      manifest: {
        provides: [],
        dependencies: [{ type: 'GVK', gvk: { apiVersion: 'x/v1', kind: 'B' }, optional: false }],
      },
    },
  ],
  catalogs: [
    {
      name: 'main',
      packages: [
        {
          name: 'p',
          versions: [
            {
              version: '1.0.0',
              provides: [{ apiVersion: 'x/v1', kind: 'B' }],
              dependencies: [{ type: 'Package', name: 'p', version: '^2', optional: false }],
            },
            { version: '2.0.0', provides: [], dependencies: [] },
          ],
        },
      ],
    },
  ],
  installed: [],
  clusterAPIs: [],
  policy: { ...defaultDependencyPolicy },
}

/** Runs the rounds of `flipFlop`, stopping after far more rounds than the bound needs: without it, they would still be going. */
function runRounds() {
  const { graph, targetIds } = buildGraph(flipFlop)
  const rounds = new EdgeRounds(graph)
  let dirty = new Set(targetIds)
  let count = 0
  for (; dirty.size > 0 && count < 100; count++) dirty = rounds.round(dirty)
  return { ended: dirty.size === 0, count, changes: graph.nodes.get('p')!.changes }
}

describe('diagnosis rounds', () => {
  test('end when dependencies keep re-choosing one version: a version changes at most maxChanges times', () => {
    const { ended, count, changes } = runRounds()
    expect(ended).toBe(true)
    expect(count).toBeLessThan(2 * maxChanges + 4)
    expect(changes).toBe(maxChanges)
  })

  test('the plan of such an input is a conflict with its explanation', () => {
    // planDependencies runs the same rounds: only once they are known to end.
    expect(runRounds().ended).toBe(true)
    const plan = planDependencies(flipFlop)
    expect(plan.result).toBe('CONFLICT')
    expect(plan.conflicts.map((c) => c.message)).toEqual([
      'install p@2.0.0, but no plan satisfies every dependency together',
    ])
    expect(plan.explanation).toEqual([
      'p@1.0.0 needs p (^2), itself and app@1.0.0 needs the API x/v1/B (provided by p@1.0.0); therefore no set of versions satisfies every dependency',
    ])
  })
})
