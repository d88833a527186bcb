import fc from 'fast-check'
import { defaultDependencyPolicy } from '../api/dependencies.js'
import type { CatalogPackage, Dependency, DependencyPolicy } from '../api/dependencies.js'
import { parseConstraint, satisfies } from './constraints.js'
import type { Plan, PlanInput } from './plan.js'
import { planDependencies } from './resolve.js'
import { planResults, resultStatus } from './report.js'
import { parseVersion } from './versions.js'

const dep = (name: string, version = '', optional = false): Dependency => ({ type: 'Package', name, version, optional })
const gvk = (kind: string): Dependency => ({ type: 'GVK', gvk: { apiVersion: 'x.dev/v1', kind }, optional: false })
const anyOf = (...alts: Dependency[]): Dependency => ({ type: 'AnyOf', anyOf: alts as never, optional: false })

function pkg(
  name: string,
  versions: Record<string, Dependency[]>,
  provides: Record<string, string[]> = {},
): CatalogPackage {
  return {
    name,
    versions: Object.entries(versions).map(([version, dependencies]) => ({
      version,
      dependencies,
      provides: (provides[version] ?? []).map((kind) => ({ apiVersion: 'x.dev/v1', kind })),
    })),
  }
}

function plan(
  packages: CatalogPackage[],
  targetDeps: Dependency[],
  policy: Partial<DependencyPolicy> = {},
  installed: PlanInput['installed'] = [],
): Plan {
  return planDependencies({
    targets: [
      { package: 'app', namespace: '', version: '1.0.0', manifest: { dependencies: targetDeps, provides: [] } },
    ],
    catalogs: [{ name: 'main', packages }],
    installed,
    clusterAPIs: [],
    policy: { ...defaultDependencyPolicy, ...policy },
  })
}

describe('exact resolution', () => {
  test('a lower version of a dependant is chosen when the highest ones cannot share a dependency', () => {
    // The highest a needs c ^2, b needs c ^1: only a@1.0.0 fits (rounds of "highest first" reported CONFLICT).
    const p = plan(
      [
        pkg('a', { '1.0.0': [dep('c', '^1')], '2.0.0': [dep('c', '^2')] }),
        pkg('b', { '1.0.0': [dep('c', '^1')] }),
        pkg('c', { '1.0.0': [], '2.0.0': [] }),
      ],
      [dep('a'), dep('b')],
    )
    expect(p.result).toBe('RESOLVABLE')
    expect(p.conflicts).toEqual([])
    expect(p.install.map((i) => `${i.package}@${i.version}`)).toEqual(['a@1.0.0', 'b@1.0.0', 'c@1.0.0'])
  })

  test('a 12,000-deep chain resolves (no round limit, no deep recursion)', () => {
    const depth = 12_000
    const packages = Array.from({ length: depth }, (_, i) =>
      pkg(`p${i}`, { '1.0.0': i + 1 < depth ? [dep(`p${i + 1}`, '^1')] : [] }),
    )
    const p = plan(packages, [dep('p0')])
    expect(p.result).toBe('RESOLVABLE')
    expect(p.install).toHaveLength(depth)
    expect(p.order[0]).toBe(`p${depth - 1}`)
  })

  test('an installed dependency is kept when a lower dependant version accepts it', () => {
    const p = plan(
      [pkg('a', { '1.0.0': [dep('c', '^1')], '2.0.0': [dep('c', '^2')] }), pkg('c', { '1.0.0': [], '2.0.0': [] })],
      [dep('a')],
      { downgrades: 'Deny', upgrades: 'Deny' },
      [{ name: 'c', package: 'c', version: '1.0.0', namespace: '', installedAsDependency: false, deleting: false }],
    )
    expect(p.result).toBe('RESOLVABLE')
    expect(p.install).toMatchObject([{ package: 'a', version: '1.0.0' }])
  })

  test('no solution: the explanation follows the chain of dependants to the conclusion', () => {
    const p = plan(
      [
        pkg('a', { '1.0.0': [dep('c', '^1')], '2.0.0': [dep('c', '^2')] }),
        pkg('b', { '1.0.0': [dep('c', '^3')] }),
        pkg('c', { '1.0.0': [], '2.0.0': [], '3.0.0': [] }),
      ],
      [dep('a'), dep('b')],
    )
    expect(p.result).toBe('CONFLICT')
    const text = p.explanation!.join('\n')
    expect(text).toContain('app@1.0.0 needs a (any)')
    expect(text).toContain('b@1.0.0 needs c (^3)')
    expect(text).toMatch(/a@1\.0\.0 needs c \(\^1\)|every a/)
    expect(p.explanation![p.explanation!.length - 1]).toMatch(
      /; therefore no set of versions satisfies every dependency$/,
    )
    // Reasons and tags of the conflicts stay as the edge-by-edge check gives them.
    expect(p.conflicts.every((c) => c.reason)).toBe(true)
    const why = planResults(p).find((r) => r.tags?.['explanation'])
    expect(why).toMatchObject({ severity: 'error', tags: { result: 'CONFLICT', explanation: 'true' } })
    expect(why!.message).toContain('no plan satisfies every dependency:')
    expect(resultStatus(p)['explanation']).toEqual(p.explanation)
  })
})

/**
 * Random small catalogs (packages p0…p3, up to three versions each, package,
 * optional, GVK and anyOf dependencies, some back on lower-numbered packages,
 * so cycles that a lower version may avoid): brute force enumerates every assignment (not installed, or one
 * version, per package) and the planner must find a plan exactly when one
 * exists, and its plan must satisfy every dependency.
 */
describe('exact resolution against brute force', () => {
  const ranges = ['', '^1', '^2', '<1.1.0', '>=1.1.0', '1.0.0 || 2.0.0']
  const versionNames = ['1.0.0', '1.1.0', '2.0.0']
  const kinds = ['A', 'B']
  const dependencyArb = (from: number, n: number): fc.Arbitrary<Dependency | undefined> =>
    from + 1 >= n
      ? fc.constant(undefined)
      : fc.oneof(
          {
            weight: 5,
            arbitrary: fc
              .tuple(fc.integer({ min: from + 1, max: n - 1 }), fc.constantFrom(...ranges), fc.boolean())
              .map(([j, r, optional]) => dep(`p${j}`, r, optional && j % 2 === 0)),
          },
          // A dependency back on a lower-numbered package: cycles, which another version may avoid.
          {
            weight: 1,
            arbitrary: fc
              .tuple(fc.integer({ min: 0, max: Math.max(0, from - 1) }), fc.constantFrom(...ranges))
              .map(([j, r]) => dep(`p${j}`, r)),
          },
          { weight: 1, arbitrary: fc.constantFrom(...kinds).map(gvk) },
          {
            weight: 1,
            arbitrary: fc
              .tuple(
                fc.integer({ min: from + 1, max: n - 1 }),
                fc.constantFrom(...ranges),
                fc.integer({ min: from + 1, max: n - 1 }),
                fc.constantFrom(...ranges),
              )
              .map(([i, r, j, s]) => anyOf(dep(`p${i}`, r), dep(`p${j}`, s))),
          },
        )
  const catalogArb = fc
    .integer({ min: 2, max: 4 })
    .chain((n) =>
      fc.tuple(
        ...Array.from({ length: n }, (_, i) =>
          fc
            .subarray(versionNames, { minLength: 1 })
            .chain((names) =>
              fc
                .tuple(
                  ...names.map(() => fc.tuple(fc.array(dependencyArb(i, n), { maxLength: 3 }), fc.subarray(kinds))),
                )
                .map((specs) =>
                  pkg(
                    `p${i}`,
                    Object.fromEntries(
                      names.map((v, k) => [v, specs[k]![0].filter((d): d is Dependency => d !== undefined)]),
                    ),
                    Object.fromEntries(names.map((v, k) => [v, i === 0 ? [] : specs[k]![1]])),
                  ),
                ),
            ),
        ),
      ),
    )

  /**
   * The package → version assignment satisfies every dependency of every
   * present package, and its dependency graph has no cycle (a cycle is a
   * conflict): a package edge goes to the package, an API edge to the first
   * present provider by name (none when the dependant provides it), an anyOf
   * edge to its first met alternative.
   */
  function valid(packages: readonly CatalogPackage[], chosen: Map<string, string>): boolean {
    const specOf = (name: string) =>
      packages.find((p) => p.name === name)!.versions.find((v) => v.version === chosen.get(name))!
    const providerOf = (kind: string) =>
      [...chosen.keys()].sort().find((name) => specOf(name).provides.some((g) => g.kind === kind))
    const met = (d: Dependency): boolean => {
      if (d.type === 'GVK') return providerOf(d.gvk.kind) !== undefined
      if (d.type === 'AnyOf') return d.anyOf.some(met)
      const version = chosen.get(d.name)
      if (version === undefined) return d.optional
      const parsed = parseConstraint(d.version)
      return parsed.ok && satisfies(parseVersion(version, { coerce: false })!, parsed.constraint)
    }
    const edge = (from: string, d: Dependency): string | undefined => {
      if (d.type === 'Package') return chosen.has(d.name) ? d.name : undefined
      if (d.type === 'GVK') {
        if (specOf(from).provides.some((g) => g.kind === d.gvk.kind)) return undefined
        return providerOf(d.gvk.kind)
      }
      const first = d.anyOf.find((alt) => met({ ...alt, optional: false }))
      return first ? edge(from, first) : undefined
    }
    for (const name of chosen.keys()) if (!specOf(name).dependencies.every(met)) return false
    // Cycle check: DFS with colours, iteratively.
    const state = new Map<string, 1 | 2>()
    for (const root of chosen.keys()) {
      if (state.has(root)) continue
      const stack: { name: string; out: string[] }[] = [
        {
          name: root,
          out: specOf(root)
            .dependencies.map((d) => edge(root, d))
            .filter((e): e is string => e !== undefined && e !== root),
        },
      ]
      state.set(root, 1)
      while (stack.length > 0) {
        const top = stack[stack.length - 1]!
        const next = top.out.pop()
        if (next === undefined) {
          state.set(top.name, 2)
          stack.pop()
          continue
        }
        if (state.get(next) === 1) return false
        if (state.has(next)) continue
        state.set(next, 1)
        stack.push({
          name: next,
          out: specOf(next)
            .dependencies.map((d) => edge(next, d))
            .filter((e): e is string => e !== undefined && e !== next),
        })
      }
    }
    return true
  }

  function bruteForce(packages: readonly CatalogPackage[]): boolean {
    // p0 is the target's only dependency, any version; every other package: absent or one version.
    const options = packages.map((p, i) => [...(i === 0 ? [] : [undefined]), ...p.versions.map((v) => v.version)])
    const total = options.reduce((n, o) => n * o.length, 1)
    for (let k = 0; k < total; k++) {
      const chosen = new Map<string, string>()
      let rest = k
      options.forEach((o, i) => {
        const pick = o[rest % o.length]
        rest = Math.floor(rest / o.length)
        if (pick !== undefined) chosen.set(packages[i]!.name, pick)
      })
      if (valid(packages, chosen)) return true
    }
    return false
  }

  test('finds a plan exactly when one exists, and every plan it returns satisfies every dependency', () => {
    fc.assert(
      fc.property(catalogArb, (packages) => {
        const p = plan(packages, [dep('p0')])
        const exists = bruteForce(packages)
        expect(p.result === 'CONFLICT' ? false : true).toBe(exists)
        if (p.result === 'CONFLICT') {
          expect(p.explanation?.length).toBeGreaterThan(0)
          return
        }
        const chosen = new Map(p.install.map((i) => [i.package, i.version]))
        expect(valid(packages, chosen)).toBe(true)
        expect(chosen.has('p0')).toBe(true)
      }),
      { numRuns: Number(process.env['EXACT_PROPERTY_RUNS'] ?? 400) },
    )
  })
})
