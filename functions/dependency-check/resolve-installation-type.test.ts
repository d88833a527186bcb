/** The planner: installation types (OnePerCluster, OnePerNamespace) and scopes. */
import type { Dependency } from '../api/dependencies.js'
import type { PlanTarget } from './plan.js'
import { dep, pkg, installed, plan } from './resolve.fixtures.js'

describe('planDependencies', () => {
  test('OnePerCluster: a second installation is a violation', () => {
    const p = plan({
      packages: [pkg('cm', { '1.0.0': [] }, { installationType: 'OnePerCluster' })],
      installed: [installed('cm', '1.0.0', { namespace: 'a' })],
      targets: [{ package: 'cm', namespace: 'b', version: '1.0.0' }],
    })
    expect(p.conflicts).toMatchObject([{ reason: 'InstallationTypeViolation', namespace: 'b' }])
  })

  describe('installationType (rule 7)', () => {
    const d = (installationType?: 'OnePerCluster' | 'OnePerNamespace') =>
      pkg('d', { '1.0.0': [], '1.4.0': [], '2.0.0': [] }, installationType ? { installationType } : {})
    const at = (name: string, namespace: string, deps: Dependency[]): PlanTarget => ({
      package: name,
      namespace,
      version: '1.0.0',
      manifest: { dependencies: deps, provides: [] },
    })
    const inst = (
      name: string,
      version: string,
      namespace: string,
      extra: { deps?: Dependency[]; installation?: string } = {},
    ) => ({
      ...installed(name, version, { namespace, ...(extra.deps ? { deps: extra.deps } : {}) }),
      name: extra.installation ?? name,
    })
    test.each([
      [
        'OnePerNamespace: two versions at once in one namespace',
        {
          packages: [d('OnePerNamespace')],
          targets: [at('a', 'ns', [dep('d', '^1')]), at('b', 'ns', [dep('d', '^2')])],
        },
        ['ns/a@1.0.0 InstallationTypeViolation', 'ns/b@1.0.0 InstallationTypeViolation'],
        'CONFLICT',
        '',
      ],
      [
        'OnePerNamespace: one version per namespace is fine',
        {
          packages: [d('OnePerNamespace')],
          targets: [at('a', 'ns1', [dep('d', '^1')]), at('b', 'ns2', [dep('d', '^2')])],
        },
        [],
        'RESOLVABLE',
        'install ns1/d@1.4.0, ns2/d@2.0.0',
      ],
      [
        'OnePerNamespace: an installed dependant in the namespace holds the installed version',
        {
          packages: [d('OnePerNamespace')],
          installed: [inst('d', '1.0.0', 'ns'), inst('x', '1.0.0', 'ns', { deps: [dep('d', '^1')] })],
          targets: [at('a', 'ns', [dep('d', '^2')])],
        },
        ['ns/a@1.0.0 InstallationTypeViolation'],
        'CONFLICT',
        '',
      ],
      [
        'OnePerNamespace: a dependant in another namespace does not count',
        {
          packages: [d('OnePerNamespace')],
          installed: [
            inst('d', '1.0.0', 'ns'),
            inst('d', '1.0.0', 'other'),
            inst('x', '1.0.0', 'other', { deps: [dep('d', '^1')] }),
          ],
          targets: [at('a', 'ns', [dep('d', '^2')])],
        },
        [],
        'RESOLVABLE',
        'upgrade ns/d 1.0.0 -> 2.0.0',
      ],
      [
        'NoRestrictions: the same ranges have no common version (not an installationType matter)',
        { packages: [d()], targets: [at('a', 'ns', [dep('d', '^1')]), at('b', 'ns', [dep('d', '^2')])] },
        ['ns/a@1.0.0 NoMatchingVersion', 'ns/b@1.0.0 NoMatchingVersion'],
        'CONFLICT',
        '',
      ],
      [
        'OnePerCluster: two versions at once across namespaces',
        {
          packages: [d('OnePerCluster')],
          targets: [at('a', 'ns1', [dep('d', '^1')]), at('b', 'ns2', [dep('d', '^2')])],
        },
        ['ns1/a@1.0.0 InstallationTypeViolation', 'ns2/b@1.0.0 InstallationTypeViolation'],
        'CONFLICT',
        '',
      ],
      [
        'OnePerNamespace: updating one of two installations in a namespace',
        {
          packages: [d('OnePerNamespace')],
          installed: [inst('d', '1.0.0', 'ns'), inst('d', '1.0.0', 'ns', { installation: 'd-copy' })],
          targets: [{ package: 'd', namespace: 'ns', version: '2.0.0' }],
        },
        ['ns/d@2.0.0 InstallationTypeViolation'],
        'CONFLICT',
        '',
      ],
      [
        'OnePerNamespace: a second installation in another namespace is fine',
        {
          packages: [d('OnePerNamespace')],
          installed: [inst('d', '1.0.0', 'ns')],
          targets: [at('a', 'other', [dep('d', '^2')])],
        },
        [],
        'RESOLVABLE',
        'install other/d@2.0.0',
      ],
    ] as [string, Parameters<typeof plan>[0], string[], string, string][])(
      '%s',
      (_name, input, conflicts, result, steps) => {
        const p = plan(input)
        expect(p.conflicts.map((c) => `${c.requiredBy} ${c.reason}`)).toEqual(conflicts)
        expect(p.conflicts.every((c) => !c.resolvable)).toBe(true)
        expect(p.result).toBe(result)
        const ns = (s: { namespace: string; package: string }) => `${s.namespace ? s.namespace + '/' : ''}${s.package}`
        const planned = [
          ...(p.install.length ? [`install ${p.install.map((i) => `${ns(i)}@${i.version}`).join(', ')}`] : []),
          ...p.upgrade.map((u) => `upgrade ${ns(u)} ${u.from} -> ${u.to}`),
        ]
        expect(planned.join('; ')).toBe(steps)
      },
    )

    test('the conflict names both ranges and the namespace', () => {
      const p = plan({
        packages: [d('OnePerNamespace')],
        installed: [inst('d', '1.0.0', 'ns'), inst('x', '1.0.0', 'ns', { deps: [dep('d', '^1')] })],
        targets: [at('a', 'ns', [dep('d', '^2')])],
      })
      expect(p.conflicts[0]!.message).toBe(
        'd (required: ^2, actual: 1.0.0): d is OnePerNamespace and ns/a@1.0.0 needs ^2, ns/x@1.0.0 needs ^1: two different versions at once in namespace ns, where only one installation is allowed',
      )
      expect(p.packages[0]!.dependencies[0]).toMatchObject({ state: 'Conflict', resolvable: false })
    })

    test('duplicate installations: the plan touching one is a violation, untouched ones a warning', () => {
      const installedState = [inst('d', '1.0.0', 'ns'), inst('d', '1.0.0', 'ns', { installation: 'd-copy' })]
      const update = plan({
        packages: [d('OnePerNamespace')],
        installed: installedState,
        targets: [{ package: 'd', namespace: 'ns', version: '2.0.0' }],
      })
      expect(update.conflicts[0]!.message).toBe(
        'd is OnePerNamespace and ns has another installation, installation d-copy (ns/d@1.0.0); the plan would update installation d to ns/d@2.0.0, leaving two installations (two versions at once) where only one is allowed',
      )
      for (const targets of [
        [at('a', 'ns', [dep('d', '^1')])],
        [{ package: 'd', namespace: 'ns', version: '1.0.0' }],
      ]) {
        const untouched = plan({ packages: [d('OnePerNamespace')], installed: installedState, targets })
        expect(untouched.conflicts).toEqual([])
        expect(untouched.issues.map((i) => i.message)).toContain(
          'd is OnePerNamespace but installed 2 times in ns (pre-existing)',
        )
      }
    })
  })
})
