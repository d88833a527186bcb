/** The planner: GVK dependencies, their providers and what an installed version provides. */
import type { DependencyPolicy } from '../api/dependencies.js'
import { dep, gvk, pkg, installed, target, plan } from './resolve.fixtures.js'

describe('planDependencies', () => {
  test('GVK dependencies: cluster APIs, installed providers, catalog providers, ambiguity', () => {
    const packages = [
      pkg('gw-a', { '1.0.0': [] }, {}, { '1.0.0': ['gateway.networking.k8s.io/v1|Gateway'] }),
      pkg('gw-b', { '1.0.0': [] }, {}, { '1.0.0': ['gateway.networking.k8s.io/v1|Gateway'] }),
      pkg(
        'cm',
        { '1.0.0': [], '1.1.0': [] },
        {},
        { '1.0.0': ['cert-manager.io/v1|Certificate'], '1.1.0': ['cert-manager.io/v1|Certificate'] },
      ),
    ]
    const p = plan({
      packages,
      clusterAPIs: [{ apiVersion: 'v1', kind: 'ConfigMap' }],
      targets: [
        target('a', '1.0.0', [
          gvk('v1', 'ConfigMap'),
          gvk('cert-manager.io/v1', 'Certificate'),
          gvk('gateway.networking.k8s.io/v1', 'Gateway'),
          gvk('x/v1', 'Y'),
        ]),
      ],
    })
    expect(p.packages[0]!.dependencies.map((d) => [d.state, d.satisfiedBy])).toEqual([
      ['Fulfilled', { clusterAPI: true }],
      ['Install', { package: 'cm', version: '1.1.0' }],
      ['Ambiguous', { package: 'gw-a', version: '1.0.0' }],
      ['Missing', undefined],
    ])
  })

  describe('GVK dependency on an installed package at a version that does not provide it', () => {
    const C = 'cert-manager.io/v1|Certificate'
    const cm = pkg(
      'cm',
      { '0.9.0': [], '1.0.0': [], '1.5.0': [], '2.0.0': [] },
      {},
      { '1.0.0': [C], '1.5.0': [C], '2.0.0': [C] },
    )
    const needsC = [target('a', '1.0.0', [gvk('cert-manager.io/v1', 'Certificate')])]
    const holder = (range: string) => installed('x', '1.0.0', { deps: [dep('cm', range)] })
    test.each([
      ['Highest', {}, [], 'Upgrade', '0.9.0 -> 2.0.0', undefined],
      ['Lowest', { upgradeTarget: 'Lowest' }, [], 'Upgrade', '0.9.0 -> 1.0.0', undefined],
      ['Highest within every range on it', {}, [holder('<2')], 'Upgrade', '0.9.0 -> 1.5.0', undefined],
      [
        'upgrades denied: resolvable, nothing planned',
        { upgrades: 'Deny' },
        [holder('<2')],
        'Conflict',
        '',
        {
          reason: 'UpgradeNotAllowed',
          resolvable: true,
          resolution: { action: 'Upgrade', version: '1.5.0' },
          direction: 'Below',
        },
      ],
      [
        'no providing version satisfies the ranges',
        {},
        [holder('<1')],
        'Conflict',
        '',
        { reason: 'NoVersionSatisfiesAll', resolvable: false },
      ],
    ] as [
      string,
      Partial<DependencyPolicy>,
      ReturnType<typeof installed>[],
      string,
      string,
      Record<string, unknown> | undefined,
    ][])('%s', (_name, policy, others, state, upgrade, conflict) => {
      const p = plan({
        packages: [cm],
        installed: [installed('cm', '0.9.0', { asDependency: true }), ...others],
        targets: needsC,
        policy,
      })
      expect(p.packages[0]!.dependencies[0]!.state).toBe(state)
      expect(p.upgrade.map((u) => `${u.from} -> ${u.to}`)).toEqual(upgrade ? [upgrade] : [])
      expect(p.conflicts).toEqual(
        conflict
          ? [
              expect.objectContaining({
                package: 'cm',
                actual: '0.9.0',
                required: 'cert-manager.io/v1/Certificate',
                requiredBy: 'a@1.0.0',
                ...conflict,
              }),
            ]
          : [],
      )
      expect(p.result).toBe(conflict ? 'CONFLICT' : 'RESOLVABLE')
      expect(p.prune).toEqual([])
    })

    test('upgrade messages and the unresolvable text', () => {
      const up = plan({ packages: [cm], installed: [installed('cm', '0.9.0')], targets: needsC })
      expect(up.packages[0]!.dependencies[0]).toMatchObject({
        satisfiedBy: { package: 'cm', version: '2.0.0' },
        message: 'upgrade cm from 0.9.0 to 2.0.0, which provides cert-manager.io/v1/Certificate',
      })
      expect(up.order).toEqual(['cm', 'a'])
      const none = plan({ packages: [cm], installed: [installed('cm', '0.9.0'), holder('<1')], targets: needsC })
      expect(none.conflicts[0]!.message).toBe(
        'cm@0.9.0 does not provide cert-manager.io/v1/Certificate: no version of cm both provides it and satisfies [<1] (versions that provide it: 1.0.0, 1.5.0, 2.0.0)',
      )
      expect(none.conflicts[0]!.constraints).toEqual([{ from: 'x@1.0.0', range: '<1' }])
    })

    test('an installed version newer than every provider: downgrade only when allowed', () => {
      const old = pkg('cm', { '1.0.0': [], '3.0.0': [] }, {}, { '1.0.0': [C] })
      const input = { packages: [old], installed: [installed('cm', '3.0.0')], targets: needsC }
      expect(plan(input).conflicts).toMatchObject([
        { reason: 'InstalledTooNew', resolvable: false, direction: 'Above' },
      ])
      expect(plan({ ...input, policy: { downgrades: 'Allow' } }).downgrade).toMatchObject([
        { package: 'cm', from: '3.0.0', to: '1.0.0' },
      ])
    })

    test('the installed provider is upgraded rather than a second provider installed', () => {
      const other = pkg('other-cm', { '1.0.0': [] }, {}, { '1.0.0': [C] })
      const p = plan({ packages: [other, cm], installed: [installed('cm', '0.9.0')], targets: needsC })
      expect(p.install).toEqual([])
      expect(p.upgrade).toMatchObject([{ package: 'cm', to: '2.0.0' }])
      const stuck = plan({
        packages: [other, cm],
        installed: [installed('cm', '0.9.0'), holder('<1')],
        targets: needsC,
      })
      expect(stuck.install).toMatchObject([{ package: 'other-cm' }])
      expect(stuck.conflicts).toEqual([])
    })

    test('a range registered later still gets a providing version', () => {
      const t = pkg('t', { '1.0.0': [dep('cm', '<1.5')] })
      const p = plan({
        packages: [cm, t],
        installed: [installed('cm', '0.9.0')],
        targets: [target('a', '1.0.0', [gvk('cert-manager.io/v1', 'Certificate'), dep('t')])],
      })
      expect(p.conflicts).toEqual([])
      expect(p.upgrade).toMatchObject([{ package: 'cm', from: '0.9.0', to: '1.0.0' }])
    })

    test('an untouched installation: pre-existing when never served, a conflict when the targets remove it', () => {
      const never = plan({
        packages: [cm],
        installed: [installed('x', '1.0.0', { deps: [gvk('cert-manager.io/v1', 'Certificate')] })],
        targets: [target('a', '1.0.0', [])],
      })
      expect(never.result).toBe('OK')
      expect(never.issues).toMatchObject([
        { severity: 'warning', message: 'x@1.0.0: cert-manager.io/v1/Certificate is not served' },
      ])
      const removed = plan({
        packages: [cm],
        installed: [
          installed('cm', '1.0.0'),
          installed('x', '1.0.0', { deps: [gvk('cert-manager.io/v1', 'Certificate')] }),
        ],
        targets: [{ package: 'cm', namespace: '', version: '0.9.0' }],
        // A target's own downgrade needs the policy to allow it.
        policy: { downgrades: 'Allow' },
      })
      expect(removed.conflicts).toMatchObject([
        {
          reason: 'Missing',
          requiredBy: 'x@1.0.0',
          message: 'cert-manager.io/v1/Certificate would no longer be served (provided before by cm@1.0.0)',
        },
      ])
    })
  })
})
