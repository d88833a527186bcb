import fc from 'fast-check'
import { defaultDependencyPolicy } from '../api/dependencies.js'
import type { CatalogPackage, Dependency, DependencyPolicy } from '../api/dependencies.js'
import type { PlanInput, PlanTarget } from './plan.js'
import { planDependencies } from './resolve.js'

/** `dep('b', '^1')`; `gvk('x/v1', 'K')`. */
const dep = (name: string, version = '', optional = false): Dependency => ({ type: 'Package', name, version, optional })
const gvk = (apiVersion: string, kind: string, optional = false): Dependency => ({ type: 'GVK', gvk: { apiVersion, kind }, optional })
const anyOf = (...alts: Dependency[]): Dependency => ({ type: 'AnyOf', anyOf: alts as never, optional: false })

/** `pkg('b', {'1.0.0': [dep(...)], '2.0.0': []})` */
function pkg(name: string, versions: Record<string, Dependency[]>, extra: Partial<CatalogPackage> = {}, provides: Record<string, string[]> = {}): CatalogPackage {
  return {
    name,
    ...extra,
    versions: Object.entries(versions).map(([version, dependencies]) => ({
      version,
      dependencies,
      provides: (provides[version] ?? []).map((k) => ({ apiVersion: k.split('|')[0]!, kind: k.split('|')[1]! })),
    })),
  }
}
const installed = (name: string, version: string, extra: { asDependency?: boolean; namespace?: string; deps?: Dependency[] } = {}) => ({
  name,
  package: name,
  version,
  namespace: extra.namespace ?? '',
  installedAsDependency: extra.asDependency ?? false,
  deleting: false,
  ...(extra.deps ? { dependencies: extra.deps } : {}),
})
const target = (name: string, version?: string, deps?: Dependency[]): PlanTarget => ({
  package: name,
  namespace: '',
  ...(version ? { version } : {}),
  ...(deps ? { manifest: { dependencies: deps, provides: [] } } : {}),
})

function plan(input: Partial<Omit<PlanInput, 'policy'>> & { packages?: CatalogPackage[]; policy?: Partial<DependencyPolicy> }) {
  return planDependencies({
    targets: input.targets ?? [],
    catalogs: input.catalogs ?? [{ name: 'main', packages: input.packages ?? [] }],
    installed: input.installed ?? [],
    clusterAPIs: input.clusterAPIs ?? [],
    policy: { ...defaultDependencyPolicy, ...input.policy },
  })
}

describe('planDependencies', () => {
  test('installs transitively, dependencies first', () => {
    const p = plan({
      packages: [pkg('b', { '1.0.0': [dep('c', '^2')], '1.1.0': [dep('c', '^2')] }), pkg('c', { '2.0.0': [], '2.3.0': [], '3.0.0': [] })],
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
      packages: [pkg('left', { '1.0.0': [dep('d', '>=1.2.0, <2')] }), pkg('right', { '1.0.0': [dep('d', '~1.3')] }), pkg('d', { '1.2.0': [], '1.3.5': [], '1.4.0': [], '2.0.0': [] })],
      targets: [target('app', '1.0.0', [dep('left'), dep('right')])],
    })
    expect(p.conflicts).toEqual([])
    expect(p.install.find((i) => i.package === 'd')).toMatchObject({ version: '1.3.5', requiredBy: ['left@1.0.0', 'right@1.0.0'] })
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
    expect(plan(input).upgrade).toEqual([{ package: 'd', namespace: '', from: '1.0.0', to: '1.3.0', requiredBy: ['app@1.0.0'] }])
    expect(plan({ ...input, policy: { upgradeTarget: 'Lowest' } }).upgrade[0]!.to).toBe('1.2.0')
    const denied = plan({ ...input, policy: { upgrades: 'Deny' } })
    expect(denied.result).toBe('CONFLICT')
    expect(denied.conflicts).toMatchObject([{ package: 'd', reason: 'UpgradeNotAllowed', resolvable: true, resolution: { action: 'Upgrade', version: '1.3.0' }, direction: 'Below' }])
  })

  test('installed dependency above the range: not resolvable unless downgrades are allowed', () => {
    const input = {
      packages: [pkg('cert-manager', { 'v1.16.0': [], 'v2.1.0': [] })],
      installed: [installed('cert-manager', 'v2.1.0')],
      targets: [target('keptn', 'v1.2.0', [dep('cert-manager', '>= v1.13.0, < 2')])],
    }
    const p = plan(input)
    expect(p.conflicts).toMatchObject([
      { package: 'cert-manager', actual: 'v2.1.0', required: '>=1.13.0 <2', direction: 'Above', resolvable: false, reason: 'InstalledTooNew', requiredBy: 'keptn@v1.2.0' },
    ])
    expect(p.conflicts[0]!.message).toMatch(/^cert-manager \(required: >=1.13.0 <2, actual: v2.1.0\)/)
    expect(plan({ ...input, policy: { downgrades: 'Allow' } }).downgrade).toEqual([{ package: 'cert-manager', namespace: '', from: 'v2.1.0', to: 'v1.16.0', requiredBy: ['keptn@v1.2.0'] }])
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
      message: "Stopped installing matched version 'v1.0.0' of portal since installed version 'v2.0.0' is higher (hint: set `policy.downgrades: Allow` to proceed with downgrade)",
    }

    test('a target at a lower version is a conflict while downgrades are denied', () => {
      const p = plan({ ...input, targets: [target('portal', 'v1.0.0', [])] })
      expect(p.result).toBe('CONFLICT')
      expect(p.conflicts).toMatchObject([refusal])
      expect(plan({ ...input, targets: [target('portal', 'v1.0.0', [])], policy: { downgrades: 'Allow' } })).toMatchObject({ result: 'OK', conflicts: [] })
      expect(plan({ ...input, targets: [target('portal', 'v2.0.0', [])] })).toMatchObject({ result: 'OK', conflicts: [] })
    })

    test('a target by constraint takes no version below the installed one', () => {
      expect(plan({ ...input, targets: [{ package: 'portal', namespace: '', constraint: '<2' }] }).conflicts).toMatchObject([refusal])
      const allowed = plan({ ...input, targets: [{ package: 'portal', namespace: '', constraint: '<2' }], policy: { downgrades: 'Allow' } })
      expect(allowed).toMatchObject({ result: 'OK', packages: [{ package: 'portal', version: 'v1.0.0' }] })
      // No range: `latestVersion` (v1.0.0) would be a downgrade, so the installed version stays.
      expect(plan({ ...input, targets: [{ package: 'portal', namespace: '' }] })).toMatchObject({ result: 'OK', packages: [{ version: 'v2.0.0' }] })
    })
  })

  test('upward check: updating a dependency breaks an installed dependant (Glasskube #364, #400)', () => {
    const packages = [pkg('p', { '1.0.0': [dep('d', '^1')], '2.0.0': [dep('d', '^2')] }), pkg('d', { '1.0.0': [], '2.0.0': [] })]
    const installedState = [installed('p', '1.0.0'), installed('d', '1.0.0', { asDependency: true })]
    const alone = plan({ packages, installed: installedState, targets: [target('d', '2.0.0')] })
    expect(alone.conflicts).toMatchObject([{ package: 'd', requiredBy: 'p@1.0.0', resolvable: true, resolution: { action: 'Upgrade', package: 'p', version: '2.0.0' }, reason: 'InstalledTooNew' }])
    const together = plan({ packages, installed: installedState, targets: [target('d', '2.0.0'), target('p', '2.0.0')] })
    expect(together.conflicts).toEqual([])
    expect(together.order).toEqual(['d', 'p'])
    const viaP = plan({ packages, installed: installedState, targets: [target('p', '2.0.0')] })
    expect(viaP.upgrade).toMatchObject([{ package: 'd', from: '1.0.0', to: '2.0.0' }])
  })

  test('a re-chosen version drops the installs only the old choice needed', () => {
    const p = plan({
      packages: [pkg('x', { '1.0.0': [dep('b', '<1.5')] }), pkg('b', { '1.0.0': [dep('c1')], '1.9.0': [dep('c9')] }), pkg('c1', { '1.0.0': [] }), pkg('c9', { '1.0.0': [] })],
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
    const p = plan({ packages: [pkg('d', { '1.0.0': [], '2.0.0-rc.1': [] })], targets: [target('a', '1.0.0', [dep('nope'), dep('d', '>=2')])] })
    expect(p.packages[0]!.dependencies.map((d) => d.state)).toEqual(['Missing', 'NoMatchingVersion'])
    expect(p.conflicts.map((c) => c.message)).toEqual([
      'dependency (d) does not have a valid version that satisfies all constraints. Constraints: [>=2] (details: all=2 -> after-prereleases-filter=1 -> after-constraints-filter=0)',
      '"nope" is not available in any repository',
    ])
    expect(plan({ packages: [pkg('d', { '1.0.0': [], '2.0.0-rc.1': [] })], targets: [target('a', '1.0.0', [dep('d', '>1')])], policy: { prereleases: 'Include' } }).install).toMatchObject([
      { package: 'd', version: '2.0.0-rc.1' },
    ])
    // 2.0.0-rc.1 is below `>=2` (2.0.0), whatever the prerelease policy (Masterminds).
    expect(plan({ packages: [pkg('d', { '1.0.0': [], '2.0.0-rc.1': [] })], targets: [target('a', '1.0.0', [dep('d', '>=2')])], policy: { prereleases: 'Include' } }).result).toBe('CONFLICT')
    expect(plan({ packages: [pkg('d', { '1.0.0': [], '2.0.0-rc.1': [] })], targets: [target('a', '1.0.0', [dep('d', '>=2.0.0-0')])] }).install).toMatchObject([{ version: '2.0.0-rc.1' }])
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
    const packages = [pkg('d', { 'v1.1.7': [], 'v1.17.0+2': [], 'v1.17.1+1': [], 'v2.0.0-alpha.1': [] }, { latestVersion: 'v1.17.0+2' })]
    const targets = [target('a', '1.0.0', [dep('d')])]
    expect(plan({ packages, targets }).install[0]!.version).toBe('v1.17.0+2')
    expect(plan({ packages, targets, policy: { latest: 'HighestStable' } }).install[0]!.version).toBe('v1.17.1+1')
    expect(plan({ packages, targets, policy: { latest: 'Highest', prereleases: 'Include' } }).install[0]!.version).toBe('v2.0.0-alpha.1')
    const builds = [pkg('d', { '1.1.0+1': [], '1.1.0+2': [], '1.0.0': [] })]
    expect(plan({ packages: builds, targets: [target('a', '1', [dep('d', '>=1.0.0 <1.1.1')])] }).install[0]!.version).toBe('1.1.0+2')
  })

  test('latest: HighestStable with prereleases: Include prefers the highest stable version, else the highest prerelease', () => {
    const packages = [pkg('d', { 'v1.1.7': [], 'v1.17.1+1': [], 'v2.0.0-alpha.1': [] })]
    const policy = { latest: 'HighestStable', prereleases: 'Include' } as const
    // A new installation (the solver's preference) and a target given by constraint (the planner's pick).
    expect(plan({ packages, targets: [target('a', '1.0.0', [dep('d')])], policy }).install[0]!.version).toBe('v1.17.1+1')
    expect(plan({ packages, targets: [{ package: 'd', namespace: '' }], policy }).packages[0]!.version).toBe('v1.17.1+1')
    // Only prereleases: the highest of them.
    const prereleases = [pkg('d', { '2.0.0-alpha.1': [], '2.0.0-beta.1': [] })]
    expect(plan({ packages: prereleases, targets: [target('a', '1.0.0', [dep('d')])], policy }).install[0]!.version).toBe('2.0.0-beta.1')
    expect(plan({ packages: prereleases, targets: [{ package: 'd', namespace: '' }], policy }).packages[0]!.version).toBe('2.0.0-beta.1')
  })

  test('GVK dependencies: cluster APIs, installed providers, catalog providers, ambiguity', () => {
    const packages = [
      pkg('gw-a', { '1.0.0': [] }, {}, { '1.0.0': ['gateway.networking.k8s.io/v1|Gateway'] }),
      pkg('gw-b', { '1.0.0': [] }, {}, { '1.0.0': ['gateway.networking.k8s.io/v1|Gateway'] }),
      pkg('cm', { '1.0.0': [], '1.1.0': [] }, {}, { '1.0.0': ['cert-manager.io/v1|Certificate'], '1.1.0': ['cert-manager.io/v1|Certificate'] }),
    ]
    const p = plan({
      packages,
      clusterAPIs: [{ apiVersion: 'v1', kind: 'ConfigMap' }],
      targets: [target('a', '1.0.0', [gvk('v1', 'ConfigMap'), gvk('cert-manager.io/v1', 'Certificate'), gvk('gateway.networking.k8s.io/v1', 'Gateway'), gvk('x/v1', 'Y')])],
    })
    expect(p.packages[0]!.dependencies.map((d) => [d.state, d.satisfiedBy])).toEqual([
      ['Fulfilled', { clusterAPI: true }],
      ['Install', { package: 'cm', version: '1.1.0' }],
      ['Ambiguous', { package: 'gw-a', version: '1.0.0' }],
      ['Missing', undefined],
    ])
  })

  test('anyOf: first fulfilled, else first resolvable', () => {
    const packages = [pkg('nginx', { '4.1.0': [] }), pkg('traefik', { '2.0.0': [] })]
    const fulfilled = plan({ packages, installed: [installed('traefik', '2.0.0')], targets: [target('a', '1.0.0', [anyOf(dep('nginx', '^4'), dep('traefik'))])] })
    expect(fulfilled.packages[0]!.dependencies[0]).toMatchObject({ state: 'Fulfilled', satisfiedBy: { package: 'traefik' } })
    const resolvable = plan({ packages, targets: [target('a', '1.0.0', [anyOf(dep('nginx', '^5'), dep('traefik'))])] })
    expect(resolvable.install).toMatchObject([{ package: 'traefik' }])
    const none = plan({ packages, targets: [target('a', '1.0.0', [anyOf(dep('nginx', '^5'), dep('haproxy'))])] })
    expect(none.conflicts[0]!.message).toMatch(/^no alternative of nginx \(\^5\) \| haproxy can be met: 1\. dependency \(nginx\)/)
  })

  test('optional dependencies: skipped when absent, checked when installed', () => {
    const packages = [pkg('prom', { '50.0.0': [], '40.0.0': [] })]
    const skip = plan({ packages, targets: [target('a', '1.0.0', [dep('prom', '>=50', true)])] })
    expect(skip.packages[0]!.dependencies[0]!.state).toBe('Skipped')
    expect(skip.result).toBe('OK')
    const present = plan({ packages, policy: { upgrades: 'Deny' }, installed: [installed('prom', '40.0.0')], targets: [target('a', '1.0.0', [dep('prom', '>=50', true)])] })
    expect(present.conflicts).toMatchObject([{ package: 'prom', reason: 'UpgradeNotAllowed' }])
    const eager = plan({ packages, policy: { optional: 'InstallIfResolvable' }, targets: [target('a', '1.0.0', [dep('prom', '>=50', true)])] })
    expect(eager.install).toMatchObject([{ package: 'prom', version: '50.0.0' }])
  })

  test('prunes orphaned dependency installations, never targets or the plan', () => {
    const p = plan({
      packages: [pkg('old', { '1.0.0': [dep('lib')] }), pkg('lib', { '1.0.0': [dep('base')] }), pkg('base', { '1.0.0': [] })],
      installed: [installed('lib', '1.0.0', { asDependency: true }), installed('base', '1.0.0', { asDependency: true }), installed('manual', '1.0.0')],
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

  test('OnePerCluster: a second installation is a violation', () => {
    const p = plan({
      packages: [pkg('cm', { '1.0.0': [] }, { installationType: 'OnePerCluster' })],
      installed: [installed('cm', '1.0.0', { namespace: 'a' })],
      targets: [{ package: 'cm', namespace: 'b', version: '1.0.0' }],
    })
    expect(p.conflicts).toMatchObject([{ reason: 'InstallationTypeViolation', namespace: 'b' }])
  })

  describe('installationType (rule 7)', () => {
    const d = (installationType?: 'OnePerCluster' | 'OnePerNamespace') => pkg('d', { '1.0.0': [], '1.4.0': [], '2.0.0': [] }, installationType ? { installationType } : {})
    const at = (name: string, namespace: string, deps: Dependency[]): PlanTarget => ({ package: name, namespace, version: '1.0.0', manifest: { dependencies: deps, provides: [] } })
    const inst = (name: string, version: string, namespace: string, extra: { deps?: Dependency[]; installation?: string } = {}) => ({
      ...installed(name, version, { namespace, ...(extra.deps ? { deps: extra.deps } : {}) }),
      name: extra.installation ?? name,
    })
    test.each([
      [
        'OnePerNamespace: two versions at once in one namespace',
        { packages: [d('OnePerNamespace')], targets: [at('a', 'ns', [dep('d', '^1')]), at('b', 'ns', [dep('d', '^2')])] },
        ['ns/a@1.0.0 InstallationTypeViolation', 'ns/b@1.0.0 InstallationTypeViolation'],
        'CONFLICT',
        '',
      ],
      [
        'OnePerNamespace: one version per namespace is fine',
        { packages: [d('OnePerNamespace')], targets: [at('a', 'ns1', [dep('d', '^1')]), at('b', 'ns2', [dep('d', '^2')])] },
        [],
        'RESOLVABLE',
        'install ns1/d@1.4.0, ns2/d@2.0.0',
      ],
      [
        'OnePerNamespace: an installed dependant in the namespace holds the installed version',
        { packages: [d('OnePerNamespace')], installed: [inst('d', '1.0.0', 'ns'), inst('x', '1.0.0', 'ns', { deps: [dep('d', '^1')] })], targets: [at('a', 'ns', [dep('d', '^2')])] },
        ['ns/a@1.0.0 InstallationTypeViolation'],
        'CONFLICT',
        '',
      ],
      [
        'OnePerNamespace: a dependant in another namespace does not count',
        {
          packages: [d('OnePerNamespace')],
          installed: [inst('d', '1.0.0', 'ns'), inst('d', '1.0.0', 'other'), inst('x', '1.0.0', 'other', { deps: [dep('d', '^1')] })],
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
        { packages: [d('OnePerCluster')], targets: [at('a', 'ns1', [dep('d', '^1')]), at('b', 'ns2', [dep('d', '^2')])] },
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
        { packages: [d('OnePerNamespace')], installed: [inst('d', '1.0.0', 'ns')], targets: [at('a', 'other', [dep('d', '^2')])] },
        [],
        'RESOLVABLE',
        'install other/d@2.0.0',
      ],
    ] as [string, Parameters<typeof plan>[0], string[], string, string][])('%s', (_name, input, conflicts, result, steps) => {
      const p = plan(input)
      expect(p.conflicts.map((c) => `${c.requiredBy} ${c.reason}`)).toEqual(conflicts)
      expect(p.conflicts.every((c) => !c.resolvable)).toBe(true)
      expect(p.result).toBe(result)
      const ns = (s: { namespace: string; package: string }) => `${s.namespace ? s.namespace + '/' : ''}${s.package}`
      const planned = [...(p.install.length ? [`install ${p.install.map((i) => `${ns(i)}@${i.version}`).join(', ')}`] : []), ...p.upgrade.map((u) => `upgrade ${ns(u)} ${u.from} -> ${u.to}`)]
      expect(planned.join('; ')).toBe(steps)
    })

    test('the conflict names both ranges and the namespace', () => {
      const p = plan({ packages: [d('OnePerNamespace')], installed: [inst('d', '1.0.0', 'ns'), inst('x', '1.0.0', 'ns', { deps: [dep('d', '^1')] })], targets: [at('a', 'ns', [dep('d', '^2')])] })
      expect(p.conflicts[0]!.message).toBe(
        'd (required: ^2, actual: 1.0.0): d is OnePerNamespace and ns/a@1.0.0 needs ^2, ns/x@1.0.0 needs ^1: two different versions at once in namespace ns, where only one installation is allowed',
      )
      expect(p.packages[0]!.dependencies[0]).toMatchObject({ state: 'Conflict', resolvable: false })
    })

    test('duplicate installations: the plan touching one is a violation, untouched ones a warning', () => {
      const installedState = [inst('d', '1.0.0', 'ns'), inst('d', '1.0.0', 'ns', { installation: 'd-copy' })]
      const update = plan({ packages: [d('OnePerNamespace')], installed: installedState, targets: [{ package: 'd', namespace: 'ns', version: '2.0.0' }] })
      expect(update.conflicts[0]!.message).toBe(
        'd is OnePerNamespace and ns has another installation, installation d-copy (ns/d@1.0.0); the plan would update installation d to ns/d@2.0.0, leaving two installations (two versions at once) where only one is allowed',
      )
      for (const targets of [[at('a', 'ns', [dep('d', '^1')])], [{ package: 'd', namespace: 'ns', version: '1.0.0' }]]) {
        const untouched = plan({ packages: [d('OnePerNamespace')], installed: installedState, targets })
        expect(untouched.conflicts).toEqual([])
        expect(untouched.issues.map((i) => i.message)).toContain('d is OnePerNamespace but installed 2 times in ns (pre-existing)')
      }
    })
  })

  describe('GVK dependency on an installed package at a version that does not provide it', () => {
    const C = 'cert-manager.io/v1|Certificate'
    const cm = pkg('cm', { '0.9.0': [], '1.0.0': [], '1.5.0': [], '2.0.0': [] }, {}, { '1.0.0': [C], '1.5.0': [C], '2.0.0': [C] })
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
        { reason: 'UpgradeNotAllowed', resolvable: true, resolution: { action: 'Upgrade', version: '1.5.0' }, direction: 'Below' },
      ],
      ['no providing version satisfies the ranges', {}, [holder('<1')], 'Conflict', '', { reason: 'NoVersionSatisfiesAll', resolvable: false }],
    ] as [string, Partial<DependencyPolicy>, ReturnType<typeof installed>[], string, string, Record<string, unknown> | undefined][])('%s', (_name, policy, others, state, upgrade, conflict) => {
      const p = plan({ packages: [cm], installed: [installed('cm', '0.9.0', { asDependency: true }), ...others], targets: needsC, policy })
      expect(p.packages[0]!.dependencies[0]!.state).toBe(state)
      expect(p.upgrade.map((u) => `${u.from} -> ${u.to}`)).toEqual(upgrade ? [upgrade] : [])
      expect(p.conflicts).toEqual(conflict ? [expect.objectContaining({ package: 'cm', actual: '0.9.0', required: 'cert-manager.io/v1/Certificate', requiredBy: 'a@1.0.0', ...conflict })] : [])
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
      expect(plan(input).conflicts).toMatchObject([{ reason: 'InstalledTooNew', resolvable: false, direction: 'Above' }])
      expect(plan({ ...input, policy: { downgrades: 'Allow' } }).downgrade).toMatchObject([{ package: 'cm', from: '3.0.0', to: '1.0.0' }])
    })

    test('the installed provider is upgraded rather than a second provider installed', () => {
      const other = pkg('other-cm', { '1.0.0': [] }, {}, { '1.0.0': [C] })
      const p = plan({ packages: [other, cm], installed: [installed('cm', '0.9.0')], targets: needsC })
      expect(p.install).toEqual([])
      expect(p.upgrade).toMatchObject([{ package: 'cm', to: '2.0.0' }])
      const stuck = plan({ packages: [other, cm], installed: [installed('cm', '0.9.0'), holder('<1')], targets: needsC })
      expect(stuck.install).toMatchObject([{ package: 'other-cm' }])
      expect(stuck.conflicts).toEqual([])
    })

    test('a range registered later still gets a providing version', () => {
      const t = pkg('t', { '1.0.0': [dep('cm', '<1.5')] })
      const p = plan({ packages: [cm, t], installed: [installed('cm', '0.9.0')], targets: [target('a', '1.0.0', [gvk('cert-manager.io/v1', 'Certificate'), dep('t')])] })
      expect(p.conflicts).toEqual([])
      expect(p.upgrade).toMatchObject([{ package: 'cm', from: '0.9.0', to: '1.0.0' }])
    })

    test('an untouched installation: pre-existing when never served, a conflict when the targets remove it', () => {
      const never = plan({ packages: [cm], installed: [installed('x', '1.0.0', { deps: [gvk('cert-manager.io/v1', 'Certificate')] })], targets: [target('a', '1.0.0', [])] })
      expect(never.result).toBe('OK')
      expect(never.issues).toMatchObject([{ severity: 'warning', message: 'x@1.0.0: cert-manager.io/v1/Certificate is not served' }])
      const removed = plan({
        packages: [cm],
        installed: [installed('cm', '1.0.0'), installed('x', '1.0.0', { deps: [gvk('cert-manager.io/v1', 'Certificate')] })],
        targets: [{ package: 'cm', namespace: '', version: '0.9.0' }],
        // A target's own downgrade needs the policy to allow it.
        policy: { downgrades: 'Allow' },
      })
      expect(removed.conflicts).toMatchObject([{ reason: 'Missing', requiredBy: 'x@1.0.0', message: 'cert-manager.io/v1/Certificate would no longer be served (provided before by cm@1.0.0)' }])
    })
  })

  test('digest pins compare exactly', () => {
    const digest = `sha256:${'a'.repeat(64)}`
    const p = plan({ installed: [installed('d', `sha256:${'b'.repeat(64)}`)], targets: [target('a', '1.0.0', [dep('d', digest)])] })
    expect(p.conflicts).toMatchObject([{ reason: 'DigestMismatch', direction: 'Digest' }])
  })

  describe('digests are versions (Crossplane pins dependencies by digest)', () => {
    const digest = `sha256:${'a'.repeat(64)}`
    const other = `sha256:${'c'.repeat(64)}`
    const packages = [pkg('d', { '1.0.0': [], '1.1.0': [], [digest]: [dep('e', '^2')], [other]: [] }), pkg('e', { '2.0.0': [] })]

    test('a pinned digest is installed, with the dependencies the catalog lists for it', () => {
      const p = plan({ packages, targets: [target('a', '1.0.0', [dep('d', digest)])] })
      expect(p.result).toBe('RESOLVABLE')
      expect(p.install).toEqual([
        { package: 'd', version: digest, namespace: '', requiredBy: ['a@1.0.0'], transitive: false },
        { package: 'e', version: '2.0.0', namespace: '', requiredBy: [`d@${digest}`], transitive: true },
      ])
      expect(p.packages[0]!.dependencies[0]).toMatchObject({ state: 'Install', satisfiedBy: { package: 'd', version: digest } })
    })

    test('no range and no latest pick a digest: only a constraint that names one does', () => {
      expect(plan({ packages, targets: [target('a', '1.0.0', [dep('d')])] }).install).toMatchObject([{ package: 'd', version: '1.1.0' }])
      expect(plan({ packages, targets: [target('a', '1.0.0', [dep('d')])], policy: { latest: 'Highest' } }).install).toMatchObject([{ package: 'd', version: '1.1.0' }])
      const digestsOnly = plan({ packages: [pkg('d', { [digest]: [] })], targets: [target('a', '1.0.0', [dep('d')])] })
      expect(digestsOnly.packages[0]!.dependencies[0]!.state).toBe('NoMatchingVersion')
    })

    test('an installed version moves to the pinned digest as an upgrade', () => {
      const input = { packages, installed: [installed('d', '1.1.0', { asDependency: true })], targets: [target('a', '1.0.0', [dep('d', digest)])] }
      const p = plan(input)
      expect(p.upgrade).toEqual([{ package: 'd', namespace: '', from: '1.1.0', to: digest, requiredBy: ['a@1.0.0'] }])
      expect(p.install).toMatchObject([{ package: 'e', version: '2.0.0' }])
      expect(p.packages[0]!.dependencies[0]).toMatchObject({ state: 'Upgrade', message: `upgrade d from 1.1.0 to ${digest}` })
      const denied = plan({ ...input, policy: { upgrades: 'Deny' } })
      expect(denied.conflicts).toMatchObject([{ package: 'd', reason: 'UpgradeNotAllowed', resolvable: true, resolution: { action: 'Upgrade', version: digest } }])
      // Away from a digest, too: a move between a digest and a version has no order.
      const away = plan({ packages, installed: [installed('d', digest, { asDependency: true })], targets: [target('a', '1.0.0', [dep('d', '^1')])] })
      expect(away.upgrade).toMatchObject([{ package: 'd', from: digest, to: '1.1.0' }])
    })

    test('an installed digest has the dependencies its catalog entry lists, and a target may be a digest', () => {
      const kept = plan({ packages, installed: [installed('d', digest)], targets: [target('a', '1.0.0', [dep('d', digest)])] })
      // Its missing dependency is known now, and pre-existing (not the targets' doing).
      expect(kept).toMatchObject({ result: 'OK', issues: [{ severity: 'warning', package: 'd', message: `d@${digest}: e not installed` }] })
      const asTarget = plan({ packages, targets: [{ package: 'd', namespace: '', version: digest }] })
      expect(asTarget).toMatchObject({ result: 'RESOLVABLE', install: [{ package: 'e', version: '2.0.0' }] })
    })

    test('two dependants pinning different digests cannot both be met', () => {
      const p = plan({ packages: [...packages, pkg('b', { '1.0.0': [dep('d', other)] })], targets: [target('a', '1.0.0', [dep('d', digest), dep('b')])] })
      expect(p.result).toBe('CONFLICT')
      expect(p.conflicts.map((c) => c.package)).toContain('d')
    })
  })

  test('improper constraints are conflicts naming the text', () => {
    const p = plan({ targets: [target('a', '1.0.0', [dep('d', '>=1, garbage')])] })
    expect(p.conflicts).toMatchObject([{ reason: 'ImproperConstraint', message: 'improper constraint: >=1, garbage' }])
  })
})

describe('planner invariants', () => {
  /** A random DAG over p0..pn: each version depends on some higher-numbered packages. */
  const catalogArb = fc.integer({ min: 2, max: 12 }).chain((n) =>
    fc.array(fc.array(fc.tuple(fc.nat(n - 1), fc.constantFrom('', '^1', '>=1.1.0', '<2', '1.x || 2.x')), { maxLength: 3 }), { minLength: n, maxLength: n }).map((depsPer) =>
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
        const installedState = packages.slice(1, 1 + installedCount).map((p, i) => installed(p.name, i % 2 ? '1.0.0' : '2.0.0', { asDependency: i % 3 === 0 }))
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
        for (const t of p.packages) for (const d of t.dependencies) expect(['Fulfilled', 'Install', 'Upgrade', 'Skipped']).toContain(d.state)
      }),
    )
  })
})
