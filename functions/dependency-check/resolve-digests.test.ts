/** The planner: digests as versions and pins. */
import { dep, pkg, installed, target, plan } from './resolve.fixtures.js'

describe('planDependencies', () => {
  test('digest pins compare exactly', () => {
    const digest = `sha256:${'a'.repeat(64)}`
    const p = plan({
      installed: [installed('d', `sha256:${'b'.repeat(64)}`)],
      targets: [target('a', '1.0.0', [dep('d', digest)])],
    })
    expect(p.conflicts).toMatchObject([{ reason: 'DigestMismatch', direction: 'Digest' }])
  })

  describe('digests are versions (Crossplane pins dependencies by digest)', () => {
    const digest = `sha256:${'a'.repeat(64)}`
    const other = `sha256:${'c'.repeat(64)}`
    const packages = [
      pkg('d', { '1.0.0': [], '1.1.0': [], [digest]: [dep('e', '^2')], [other]: [] }),
      pkg('e', { '2.0.0': [] }),
    ]

    test('a pinned digest is installed, with the dependencies the catalog lists for it', () => {
      const p = plan({ packages, targets: [target('a', '1.0.0', [dep('d', digest)])] })
      expect(p.result).toBe('RESOLVABLE')
      expect(p.install).toEqual([
        { package: 'd', version: digest, namespace: '', requiredBy: ['a@1.0.0'], transitive: false },
        { package: 'e', version: '2.0.0', namespace: '', requiredBy: [`d@${digest}`], transitive: true },
      ])
      expect(p.packages[0]!.dependencies[0]).toMatchObject({
        state: 'Install',
        satisfiedBy: { package: 'd', version: digest },
      })
    })

    test('no range and no latest pick a digest: only a constraint that names one does', () => {
      expect(plan({ packages, targets: [target('a', '1.0.0', [dep('d')])] }).install).toMatchObject([
        { package: 'd', version: '1.1.0' },
      ])
      expect(
        plan({ packages, targets: [target('a', '1.0.0', [dep('d')])], policy: { latest: 'Highest' } }).install,
      ).toMatchObject([{ package: 'd', version: '1.1.0' }])
      const digestsOnly = plan({ packages: [pkg('d', { [digest]: [] })], targets: [target('a', '1.0.0', [dep('d')])] })
      expect(digestsOnly.packages[0]!.dependencies[0]!.state).toBe('NoMatchingVersion')
    })

    test('an installed version moves to the pinned digest as an upgrade', () => {
      const input = {
        packages,
        installed: [installed('d', '1.1.0', { asDependency: true })],
        targets: [target('a', '1.0.0', [dep('d', digest)])],
      }
      const p = plan(input)
      expect(p.upgrade).toEqual([{ package: 'd', namespace: '', from: '1.1.0', to: digest, requiredBy: ['a@1.0.0'] }])
      expect(p.install).toMatchObject([{ package: 'e', version: '2.0.0' }])
      expect(p.packages[0]!.dependencies[0]).toMatchObject({
        state: 'Upgrade',
        message: `upgrade d from 1.1.0 to ${digest}`,
      })
      const denied = plan({ ...input, policy: { upgrades: 'Deny' } })
      expect(denied.conflicts).toMatchObject([
        {
          package: 'd',
          reason: 'UpgradeNotAllowed',
          resolvable: true,
          resolution: { action: 'Upgrade', version: digest },
        },
      ])
      // Away from a digest, too: a move between a digest and a version has no order.
      const away = plan({
        packages,
        installed: [installed('d', digest, { asDependency: true })],
        targets: [target('a', '1.0.0', [dep('d', '^1')])],
      })
      expect(away.upgrade).toMatchObject([{ package: 'd', from: digest, to: '1.1.0' }])
    })

    test('an installed digest has the dependencies its catalog entry lists, and a target may be a digest', () => {
      const kept = plan({
        packages,
        installed: [installed('d', digest)],
        targets: [target('a', '1.0.0', [dep('d', digest)])],
      })
      // Its missing dependency is known now, and pre-existing (not the targets' doing).
      expect(kept).toMatchObject({
        result: 'OK',
        issues: [{ severity: 'warning', package: 'd', message: `d@${digest}: e not installed` }],
      })
      const asTarget = plan({ packages, targets: [{ package: 'd', namespace: '', version: digest }] })
      expect(asTarget).toMatchObject({ result: 'RESOLVABLE', install: [{ package: 'e', version: '2.0.0' }] })
    })

    test('two dependants pinning different digests cannot both be met', () => {
      const p = plan({
        packages: [...packages, pkg('b', { '1.0.0': [dep('d', other)] })],
        targets: [target('a', '1.0.0', [dep('d', digest), dep('b')])],
      })
      expect(p.result).toBe('CONFLICT')
      expect(p.conflicts.map((c) => c.package)).toContain('d')
    })
  })
})
