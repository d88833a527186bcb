/** Planner invariants, property-tested over random catalogs. */
import fc from 'fast-check'
import { dep, pkg, installed, plan } from './resolve.fixtures.js'

describe('planner invariants', () => {
  /** A random DAG over p0..pn: each version depends on some higher-numbered packages. */
  const catalogArb = fc.integer({ min: 2, max: 12 }).chain((n) =>
    fc
      .array(
        fc.array(fc.tuple(fc.nat(n - 1), fc.constantFrom('', '^1', '>=1.1.0', '<2', '1.x || 2.x')), { maxLength: 3 }),
        { minLength: n, maxLength: n },
      )
      .map((depsPer) =>
        depsPer.map((deps, i) =>
          pkg(`p${i}`, {
            '1.0.0': deps.filter(([j]) => j > i).map(([j, r]) => dep(`p${j}`, r)),
            '1.2.0': deps.filter(([j]) => j > i).map(([j, r]) => dep(`p${j}`, r)),
            '2.0.0': [],
          }),
        ),
      ),
  )

  test('plan order puts every dependency before its dependant', () => {
    fc.assert(
      fc.property(catalogArb, (packages) => {
        const p = plan({ packages, targets: [{ package: 'p0', namespace: '', version: '1.0.0' }] })
        const position = new Map(p.order.map((id, i) => [id, i]))
        for (const step of p.install) {
          for (const by of step.requiredBy) {
            const from = by.split('@')[0]!
            if (position.has(from)) expect(position.get(step.package)!).toBeLessThan(position.get(from)!)
          }
        }
      }),
    )
  })

  test('the plan does not depend on input order', () => {
    fc.assert(
      fc.property(catalogArb, fc.integer({ min: 0, max: 1000 }), fc.nat(3), (packages, seed, installedCount) => {
        const permute = <T>(list: readonly T[]): T[] =>
          list
            .map((item, i) => ({ item, key: (i * 7919 + seed * 104729) % 1009 }))
            .sort((a, b) => a.key - b.key)
            .map((e) => e.item)
        const installedState = packages
          .slice(1, 1 + installedCount)
          .map((p, i) => installed(p.name, i % 2 ? '1.0.0' : '2.0.0', { asDependency: i % 3 === 0 }))
        const targets = [
          { package: 'p0', namespace: '', version: '1.0.0' },
          { package: 'p1', namespace: '', version: '1.2.0' },
        ]
        const a = plan({ packages, targets, installed: installedState })
        const shuffled = permute(packages)
        const split = Math.floor(shuffled.length / 2)
        const b = plan({
          targets: [...targets].reverse(),
          installed: permute(installedState),
          catalogs: [
            { name: 'b', packages: shuffled.slice(split) },
            { name: 'a', packages: shuffled.slice(0, split) },
          ],
        })
        expect(b).toEqual(a)
      }),
    )
  })

  test('every installed or planned version satisfies every changed dependant when the result is not CONFLICT', () => {
    fc.assert(
      fc.property(catalogArb, (packages) => {
        const p = plan({ packages, targets: [{ package: 'p0', namespace: '', version: '1.0.0' }] })
        if (p.result === 'CONFLICT') return
        for (const t of p.packages)
          for (const d of t.dependencies) expect(['Fulfilled', 'Install', 'Upgrade', 'Skipped']).toContain(d.state)
      }),
    )
  })
})
