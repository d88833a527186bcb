/** The planner: installs, versions, ranges, prunes and violations. */
import { dep, anyOf, pkg, installed, target, plan } from './resolve.fixtures.js'

describe('planDependencies', () => {
  test('installs transitively, dependencies first', () => {
    const p = plan({
      packages: [
        pkg('b', { '1.0.0': [dep('c', '^2')], '1.1.0': [dep('c', '^2')] }),
        pkg('c', { '2.0.0': [], '2.3.0': [], '3.0.0': [] }),
      ],
      targets: [target('a', '1.0.0', [dep('b', '^1')])],
    })
    expect(p.result).toBe('RESOLVABLE')
    expect(p.install).toEqual([
      { package: 'b', version: '1.1.0', namespace: '', requiredBy: ['a@1.0.0'], transitive: false },
      { package: 'c', version: '2.3.0', namespace: '', requiredBy: ['b@1.1.0'], transitive: true },
    ])
    expect(p.order).toEqual(['c', 'b', 'a'])
    expect(p.packages[0]!.dependencies.map((d) => [d.name, d.state, d.transitive])).toEqual([
      ['b', 'Install', false],
      ['c', 'Install', true],
    ])
  })

  test('a diamond picks a version every dependant accepts', () => {
    const p = plan({
      packages: [
        pkg('left', { '1.0.0': [dep('d', '>=1.2.0, <2')] }),
        pkg('right', { '1.0.0': [dep('d', '~1.3')] }),
        pkg('d', { '1.2.0': [], '1.3.5': [], '1.4.0': [], '2.0.0': [] }),
      ],
      targets: [target('app', '1.0.0', [dep('left'), dep('right')])],
    })
    expect(p.conflicts).toEqual([])
    expect(p.install.find((i) => i.package === 'd')).toMatchObject({
      version: '1.3.5',
      requiredBy: ['left@1.0.0', 'right@1.0.0'],
    })
  })

  test('a diamond with an installed dependant respects its range', () => {
    const p = plan({
      packages: [pkg('d', { '1.0.0': [], '1.5.0': [], '2.0.0': [] })],
      installed: [installed('other', '1.0.0', { deps: [dep('d', '<1.5.0 || >=2')] })],
      targets: [target('app', '1.0.0', [dep('d', '^1')])],
    })
    expect(p.install).toMatchObject([{ package: 'd', version: '1.0.0' }])
  })

  test('installed dependency below the range is upgraded (Highest) or planned Lowest', () => {
    const input = {
      packages: [pkg('d', { '1.0.0': [], '1.2.0': [], '1.3.0': [], '2.0.0': [] })],
      installed: [installed('d', '1.0.0', { asDependency: true })],
      targets: [target('app', '1.0.0', [dep('d', '^1.2')])],
    }
    expect(plan(input).upgrade).toEqual([
      { package: 'd', namespace: '', from: '1.0.0', to: '1.3.0', requiredBy: ['app@1.0.0'] },
    ])
    expect(plan({ ...input, policy: { upgradeTarget: 'Lowest' } }).upgrade[0]!.to).toBe('1.2.0')
    const denied = plan({ ...input, policy: { upgrades: 'Deny' } })
    expect(denied.result).toBe('CONFLICT')
    expect(denied.conflicts).toMatchObject([
      {
        package: 'd',
        reason: 'UpgradeNotAllowed',
        resolvable: true,
        resolution: { action: 'Upgrade', version: '1.3.0' },
        direction: 'Below',
      },
    ])
  })

  test('autoUpgrade: Dependencies moves a dependency to the highest version every range admits (Glasskube auto-update)', () => {
    const input = {
      packages: [pkg('d', { '1.0.0': [], '1.2.0': [], '1.3.0': [], '2.0.0': [] })],
      installed: [
        installed('d', '1.0.0', { asDependency: true }),
        installed('other', '1.0.0', { deps: [dep('d', '<2')] }),
      ],
      targets: [target('app', '1.0.0', [dep('d', '^1')])],
    }
    expect(plan(input).upgrade).toEqual([])
    expect(plan({ ...input, policy: { autoUpgrade: 'Dependencies' } }).upgrade).toEqual([
      { package: 'd', namespace: '', from: '1.0.0', to: '1.3.0', requiredBy: ['app@1.0.0', 'other@1.0.0'] },
    ])
    // A package installed on purpose stays where it is; upgrades: Deny wins.
    const mine = { ...input, installed: [installed('d', '1.0.0'), input.installed[1]!] }
    expect(plan({ ...mine, policy: { autoUpgrade: 'Dependencies' } }).upgrade).toEqual([])
    expect(plan({ ...input, policy: { autoUpgrade: 'Dependencies', upgrades: 'Deny' } }).upgrade).toEqual([])
  })

  test('installed dependency above the range: not resolvable unless downgrades are allowed', () => {
    const input = {
      packages: [pkg('cert-manager', { 'v1.16.0': [], 'v2.1.0': [] })],
      installed: [installed('cert-manager', 'v2.1.0')],
      targets: [target('keptn', 'v1.2.0', [dep('cert-manager', '>= v1.13.0, < 2')])],
    }
    const p = plan(input)
    expect(p.conflicts).toMatchObject([
      {
        package: 'cert-manager',
        actual: 'v2.1.0',
        required: '>=1.13.0 <2',
        direction: 'Above',
        resolvable: false,
        reason: 'InstalledTooNew',
        requiredBy: 'keptn@v1.2.0',
      },
    ])
    expect(p.conflicts[0]!.message).toMatch(/^cert-manager \(required: >=1.13.0 <2, actual: v2.1.0\)/)
    expect(plan({ ...input, policy: { downgrades: 'Allow' } }).downgrade).toEqual([
      { package: 'cert-manager', namespace: '', from: 'v2.1.0', to: 'v1.16.0', requiredBy: ['keptn@v1.2.0'] },
    ])
  })

  describe('a target below its installed version (Carvel refuses the downgrade)', () => {
    const packages = [pkg('portal', { 'v1.0.0': [], 'v2.0.0': [] }, { latestVersion: 'v1.0.0' })]
    const input = { packages, installed: [installed('portal', 'v2.0.0')] }
    const refusal = {
      package: 'portal',
      actual: 'v2.0.0',
      required: 'v1.0.0',
      requiredBy: 'spec.targets',
      direction: 'Above',
      resolvable: true,
      resolution: { action: 'Downgrade', package: 'portal', version: 'v1.0.0' },
      reason: 'DowngradeNotAllowed',
      message:
        "Stopped installing matched version 'v1.0.0' of portal since installed version 'v2.0.0' is higher (hint: set `policy.downgrades: Allow` to proceed with downgrade)",
    }

    test('a target at a lower version is a conflict while downgrades are denied', () => {
      const p = plan({ ...input, targets: [target('portal', 'v1.0.0', [])] })
      expect(p.result).toBe('CONFLICT')
      expect(p.conflicts).toMatchObject([refusal])
      expect(
        plan({ ...input, targets: [target('portal', 'v1.0.0', [])], policy: { downgrades: 'Allow' } }),
      ).toMatchObject({ result: 'OK', conflicts: [] })
      expect(plan({ ...input, targets: [target('portal', 'v2.0.0', [])] })).toMatchObject({
        result: 'OK',
        conflicts: [],
      })
    })

    test('a target by constraint takes no version below the installed one', () => {
      expect(
        plan({ ...input, targets: [{ package: 'portal', namespace: '', constraint: '<2' }] }).conflicts,
      ).toMatchObject([refusal])
      const allowed = plan({
        ...input,
        targets: [{ package: 'portal', namespace: '', constraint: '<2' }],
        policy: { downgrades: 'Allow' },
      })
      expect(allowed).toMatchObject({ result: 'OK', packages: [{ package: 'portal', version: 'v1.0.0' }] })
      // No range: `latestVersion` (v1.0.0) would be a downgrade, so the installed version stays.
      expect(plan({ ...input, targets: [{ package: 'portal', namespace: '' }] })).toMatchObject({
        result: 'OK',
        packages: [{ version: 'v2.0.0' }],
      })
    })
  })

  test('upward check: updating a dependency breaks an installed dependant (Glasskube #364, #400)', () => {
    const packages = [
      pkg('p', { '1.0.0': [dep('d', '^1')], '2.0.0': [dep('d', '^2')] }),
      pkg('d', { '1.0.0': [], '2.0.0': [] }),
    ]
    const installedState = [installed('p', '1.0.0'), installed('d', '1.0.0', { asDependency: true })]
    const alone = plan({ packages, installed: installedState, targets: [target('d', '2.0.0')] })
    expect(alone.conflicts).toMatchObject([
      {
        package: 'd',
        requiredBy: 'p@1.0.0',
        resolvable: true,
        resolution: { action: 'Upgrade', package: 'p', version: '2.0.0' },
        reason: 'InstalledTooNew',
      },
    ])
    const together = plan({
      packages,
      installed: installedState,
      targets: [target('d', '2.0.0'), target('p', '2.0.0')],
    })
    expect(together.conflicts).toEqual([])
    expect(together.order).toEqual(['d', 'p'])
    const viaP = plan({ packages, installed: installedState, targets: [target('p', '2.0.0')] })
    expect(viaP.upgrade).toMatchObject([{ package: 'd', from: '1.0.0', to: '2.0.0' }])
  })

  test('a re-chosen version drops the installs only the old choice needed', () => {
    const p = plan({
      packages: [
        pkg('x', { '1.0.0': [dep('b', '<1.5')] }),
        pkg('b', { '1.0.0': [dep('c1')], '1.9.0': [dep('c9')] }),
        pkg('c1', { '1.0.0': [] }),
        pkg('c9', { '1.0.0': [] }),
      ],
      targets: [target('t', '1.0.0', [dep('x'), dep('b')])],
    })
    expect(p.conflicts).toEqual([])
    expect(p.install.map((i) => `${i.package}@${i.version}`)).toEqual(['b@1.0.0', 'c1@1.0.0', 'x@1.0.0'])
  })

  test('a cycle is reported with Crossplane words', () => {
    const p = plan({
      packages: [pkg('b', { '1.0.0': [dep('c')] }), pkg('c', { '1.0.0': [dep('a')] }), pkg('a', { '1.0.0': [] })],
      targets: [target('a', '1.0.0', [dep('b')])],
    })
    expect(p.result).toBe('CONFLICT')
    expect(p.conflicts).toMatchObject([{ reason: 'Cycle', message: 'detected cycle on: a (a -> b -> c -> a)' }])
  })

  test('missing and unmatched dependencies', () => {
    const p = plan({
      packages: [pkg('d', { '1.0.0': [], '2.0.0-rc.1': [] })],
      targets: [target('a', '1.0.0', [dep('nope'), dep('d', '>=2')])],
    })
    expect(p.packages[0]!.dependencies.map((d) => d.state)).toEqual(['Missing', 'NoMatchingVersion'])
    expect(p.conflicts.map((c) => c.message)).toEqual([
      'dependency (d) does not have a valid version that satisfies all constraints. Constraints: [>=2] (details: all=2 -> after-prereleases-filter=1 -> after-constraints-filter=0)',
      '"nope" is not available in any repository',
    ])
    expect(
      plan({
        packages: [pkg('d', { '1.0.0': [], '2.0.0-rc.1': [] })],
        targets: [target('a', '1.0.0', [dep('d', '>1')])],
        policy: { prereleases: 'Include' },
      }).install,
    ).toMatchObject([{ package: 'd', version: '2.0.0-rc.1' }])
    // 2.0.0-rc.1 is below `>=2` (2.0.0), whatever the prerelease policy (Masterminds).
    expect(
      plan({
        packages: [pkg('d', { '1.0.0': [], '2.0.0-rc.1': [] })],
        targets: [target('a', '1.0.0', [dep('d', '>=2')])],
        policy: { prereleases: 'Include' },
      }).result,
    ).toBe('CONFLICT')
    expect(
      plan({
        packages: [pkg('d', { '1.0.0': [], '2.0.0-rc.1': [] })],
        targets: [target('a', '1.0.0', [dep('d', '>=2.0.0-0')])],
      }).install,
    ).toMatchObject([{ version: '2.0.0-rc.1' }])
  })

  test.each([
    ['~1.2', '1.2.0-rc.1', '1.1.0'],
    ['1.2.x', '1.2.0-rc.1', '1.1.0'],
    ['^1', '1.0.0-rc.1', '0.9.0'],
    ['1.x', '1.0.0-rc.1', '0.9.0'],
  ])('prereleases: Include does not pick %s for %j: it is below the range', (range, prerelease, older) => {
    const packages = [pkg('d', { [older]: [], [prerelease]: [] })]
    const p = plan({ packages, targets: [target('a', '1.0.0', [dep('d', range)])], policy: { prereleases: 'Include' } })
    expect(p.install).toEqual([])
    expect(p.packages[0]!.dependencies.map((d) => d.state)).toEqual(['NoMatchingVersion'])
  })

  test('latest: latestVersion field, highest stable, build tiebreak', () => {
    const packages = [
      pkg(
        'd',
        { 'v1.1.7': [], 'v1.17.0+2': [], 'v1.17.1+1': [], 'v2.0.0-alpha.1': [] },
        { latestVersion: 'v1.17.0+2' },
      ),
    ]
    const targets = [target('a', '1.0.0', [dep('d')])]
    expect(plan({ packages, targets }).install[0]!.version).toBe('v1.17.0+2')
    expect(plan({ packages, targets, policy: { latest: 'HighestStable' } }).install[0]!.version).toBe('v1.17.1+1')
    expect(plan({ packages, targets, policy: { latest: 'Highest', prereleases: 'Include' } }).install[0]!.version).toBe(
      'v2.0.0-alpha.1',
    )
    const builds = [pkg('d', { '1.1.0+1': [], '1.1.0+2': [], '1.0.0': [] })]
    expect(
      plan({ packages: builds, targets: [target('a', '1', [dep('d', '>=1.0.0 <1.1.1')])] }).install[0]!.version,
    ).toBe('1.1.0+2')
  })

  test('latest: HighestStable with prereleases: Include prefers the highest stable version, else the highest prerelease', () => {
    const packages = [pkg('d', { 'v1.1.7': [], 'v1.17.1+1': [], 'v2.0.0-alpha.1': [] })]
    const policy = { latest: 'HighestStable', prereleases: 'Include' } as const
    // A new installation (the solver's preference) and a target given by constraint (the planner's pick).
    expect(plan({ packages, targets: [target('a', '1.0.0', [dep('d')])], policy }).install[0]!.version).toBe(
      'v1.17.1+1',
    )
    expect(plan({ packages, targets: [{ package: 'd', namespace: '' }], policy }).packages[0]!.version).toBe(
      'v1.17.1+1',
    )
    // Only prereleases: the highest of them.
    const prereleases = [pkg('d', { '2.0.0-alpha.1': [], '2.0.0-beta.1': [] })]
    expect(
      plan({ packages: prereleases, targets: [target('a', '1.0.0', [dep('d')])], policy }).install[0]!.version,
    ).toBe('2.0.0-beta.1')
    expect(
      plan({ packages: prereleases, targets: [{ package: 'd', namespace: '' }], policy }).packages[0]!.version,
    ).toBe('2.0.0-beta.1')
  })

  test('anyOf: first fulfilled, else first resolvable', () => {
    const packages = [pkg('nginx', { '4.1.0': [] }), pkg('traefik', { '2.0.0': [] })]
    const fulfilled = plan({
      packages,
      installed: [installed('traefik', '2.0.0')],
      targets: [target('a', '1.0.0', [anyOf(dep('nginx', '^4'), dep('traefik'))])],
    })
    expect(fulfilled.packages[0]!.dependencies[0]).toMatchObject({
      state: 'Fulfilled',
      satisfiedBy: { package: 'traefik' },
    })
    const resolvable = plan({ packages, targets: [target('a', '1.0.0', [anyOf(dep('nginx', '^5'), dep('traefik'))])] })
    expect(resolvable.install).toMatchObject([{ package: 'traefik' }])
    const none = plan({ packages, targets: [target('a', '1.0.0', [anyOf(dep('nginx', '^5'), dep('haproxy'))])] })
    expect(none.conflicts[0]!.message).toMatch(
      /^no alternative of nginx \(\^5\) \| haproxy can be met: 1\. dependency \(nginx\)/,
    )
  })

  test('optional dependencies: skipped when absent, checked when installed', () => {
    const packages = [pkg('prom', { '50.0.0': [], '40.0.0': [] })]
    const skip = plan({ packages, targets: [target('a', '1.0.0', [dep('prom', '>=50', true)])] })
    expect(skip.packages[0]!.dependencies[0]!.state).toBe('Skipped')
    expect(skip.result).toBe('OK')
    const present = plan({
      packages,
      policy: { upgrades: 'Deny' },
      installed: [installed('prom', '40.0.0')],
      targets: [target('a', '1.0.0', [dep('prom', '>=50', true)])],
    })
    expect(present.conflicts).toMatchObject([{ package: 'prom', reason: 'UpgradeNotAllowed' }])
    const eager = plan({
      packages,
      policy: { optional: 'InstallIfResolvable' },
      targets: [target('a', '1.0.0', [dep('prom', '>=50', true)])],
    })
    expect(eager.install).toMatchObject([{ package: 'prom', version: '50.0.0' }])
  })

  test('prunes orphaned dependency installations, never targets or the plan', () => {
    const p = plan({
      packages: [
        pkg('old', { '1.0.0': [dep('lib')] }),
        pkg('lib', { '1.0.0': [dep('base')] }),
        pkg('base', { '1.0.0': [] }),
      ],
      installed: [
        installed('lib', '1.0.0', { asDependency: true }),
        installed('base', '1.0.0', { asDependency: true }),
        installed('manual', '1.0.0'),
      ],
      targets: [target('a', '1.0.0', [])],
    })
    expect(p.prune).toEqual([
      { package: 'base', namespace: '', name: 'base' },
      { package: 'lib', namespace: '', name: 'lib' },
    ])
  })

  test('pre-existing violations are warnings, not conflicts (Glasskube isErrNew)', () => {
    const p = plan({
      packages: [pkg('d', { '1.0.0': [] })],
      installed: [installed('x', '1.0.0', { deps: [dep('d', '^2')] }), installed('d', '1.0.0')],
      targets: [target('a', '1.0.0', [dep('d', '^1')])],
    })
    expect(p.result).toBe('OK')
    expect(p.issues).toMatchObject([{ severity: 'warning', message: expect.stringContaining('pre-existing') }])
  })

  test('improper constraints are conflicts naming the text', () => {
    const p = plan({ targets: [target('a', '1.0.0', [dep('d', '>=1, garbage')])] })
    expect(p.conflicts).toMatchObject([{ reason: 'ImproperConstraint', message: 'improper constraint: >=1, garbage' }])
  })
})
