import type { PlanCatalog } from '../../functions/dependency-check/index.js'
import { KubeObject } from '../../functions/krm/index.js'
import { planRepository } from './repository-plan.js'
import type { RepositoryState } from './repository-plan.js'
import { context, crd, manifest, monitor, present, source } from './planning.fixtures.js'

describe('a repository whose packages need others', () => {
  test('a missing dependency is installed at the newest version its dependants accept, at its name, marked, from its source', () => {
    const state: RepositoryState = { repo: 'edge-01', targets: [monitor('edge-01')], present: [] }
    const plan = planRepository(state, context({ mode: 'check' }))
    expect(plan.failures.size).toBe(0)
    expect(plan.steps).toEqual([
      expect.objectContaining({
        action: 'install',
        package: 'cert-manager',
        version: 'v1.14.0',
        pkg: 'cert-manager',
        asDependency: true,
        source: source('cert-manager', 2),
        requiredBy: ['edge-monitor >=1.13.0'],
        neededBy: ['edge-01/edge-monitor'],
      }),
    ])
    expect(plan.manifests.get('edge-01/edge-monitor')).toEqual({
      name: 'edge-monitor',
      version: 'v1.0.0',
      requires: ['cert-manager'],
    })
  })

  test('a package someone installed on purpose is upgraded where it is and stays unmarked; one that satisfies is left alone', () => {
    const old = planRepository(
      {
        repo: 'edge-02',
        targets: [monitor('edge-02')],
        present: [present('edge-02', 'infra/cert-manager', 'cert-manager', 'v1.12.0', false)],
      },
      context({ mode: 'check' }),
    )
    expect(old.steps).toEqual([
      expect.objectContaining({
        action: 'upgrade',
        package: 'cert-manager',
        from: 'v1.12.0',
        version: 'v1.14.0',
        pkg: 'infra/cert-manager',
        asDependency: false,
      }),
    ])
    const current = planRepository(
      {
        repo: 'edge-02',
        targets: [monitor('edge-02')],
        present: [present('edge-02', 'cert-manager', 'cert-manager', 'v1.13.0', false)],
      },
      context({ mode: 'check' }),
    )
    expect(current.steps).toEqual([])
  })

  test("a true conflict with another installed package's range fails the variant that needs it, explained, and no step is planned for it", () => {
    const state: RepositoryState = {
      repo: 'edge-03',
      targets: [monitor('edge-03')],
      present: [
        present('edge-03', 'cert-manager', 'cert-manager', 'v1.12.0', false),
        present('edge-03', 'legacy', 'legacy', 'v2.0.0', false, [{ name: 'cert-manager', version: '~1.12.0' }]),
      ],
    }
    const plan = planRepository(state, context({ mode: 'check' }))
    expect(plan.steps).toEqual([])
    expect(new Set(plan.failures.get('edge-03/edge-monitor')!.map((f) => f.code))).toEqual(
      new Set(['DependencyUnresolved']),
    )
    const reasons = plan.failures
      .get('edge-03/edge-monitor')!
      .map((f) => f.message)
      .join('\n')
    expect(reasons).toContain('edge-monitor@v1.0.0 -> cert-manager in repository edge-03')
    expect(reasons).toContain('legacy@v2.0.0')
    expect(reasons).toMatch(/no set of versions satisfies every dependency/)
  })

  test('a variant that cannot be satisfied fails alone: the other variants of its repository keep their plan', () => {
    const state: RepositoryState = {
      repo: 'edge-04',
      targets: [monitor('edge-04', '>= v2.0.0', 'needs-v2'), monitor('edge-04', '>= v1.13.0', 'edge-monitor')],
      present: [],
    }
    const plan = planRepository(state, context({ mode: 'check' }))
    expect([...plan.failures.keys()]).toEqual(['edge-04/needs-v2'])
    expect(plan.steps.map((s) => `${s.action} ${s.package} ${s.version}`)).toEqual(['install cert-manager v1.14.0'])
  })

  test('a dependency installed for a package that is gone is removed; one installed on purpose stays', () => {
    const plan = planRepository(
      {
        repo: 'edge-05',
        targets: [],
        present: [
          present('edge-05', 'cert-manager', 'cert-manager', 'v1.14.0', true),
          present('edge-05', 'prom', 'prometheus-operator', 'v0.70.0', false),
        ],
      },
      context({ mode: 'check' }),
    )
    expect(plan.steps).toEqual([
      expect.objectContaining({
        action: 'remove',
        package: 'cert-manager',
        pkg: 'cert-manager',
        from: 'v1.14.0',
        deletionPolicy: 'delete',
      }),
    ])
  })

  test('an API dependency installs the package that serves it; a package already serving it fulfils it', () => {
    const root = '/out/edge-06/app'
    const needsApi = {
      path: 'edge-06/app',
      objects: [
        manifest(root, 'app', 'v1.0.0', [{ gvk: { apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor' } }]),
      ],
    }
    const install = planRepository({ repo: 'edge-06', targets: [needsApi], present: [] }, context({ mode: 'check' }))
    expect(install.steps).toEqual([
      expect.objectContaining({
        action: 'install',
        package: 'prometheus-operator',
        version: 'v0.70.0',
        requiredBy: ['app (monitoring.coreos.com/v1/ServiceMonitor)'],
      }),
    ])
    // Served by a package the catalog does not know: its CRD says so.
    const serving = present('edge-06', 'prom', 'my-operator', 'v3.0.0', false)
    const kept = planRepository(
      {
        repo: 'edge-06',
        targets: [needsApi],
        present: [
          { ...serving, objects: [...serving.objects, crd(serving.root, 'monitoring.coreos.com', 'ServiceMonitor')] },
        ],
      },
      context({ mode: 'check' }),
    )
    expect(kept.steps).toEqual([])
  })

  test('in install mode, a version whose source is unknown (or cannot be found) blocks the variants that need it, saying so', () => {
    const bare: PlanCatalog[] = [
      {
        name: 'platform',
        packages: [{ name: 'cert-manager', versions: [{ version: 'v1.14.0', provides: [], dependencies: [] }] }],
      },
    ]
    const state: RepositoryState = { repo: 'edge-07', targets: [monitor('edge-07')], present: [] }
    const checked = planRepository(state, context({ catalogs: bare, mode: 'check' }))
    expect(checked.failures.size).toBe(0)
    expect(checked.steps).toEqual([expect.objectContaining({ action: 'install', package: 'cert-manager' })])
    const installing = planRepository(state, context({ catalogs: bare }))
    expect(installing.failures.get('edge-07/edge-monitor')![0]!.message).toMatch(
      /cert-manager v1.14.0 cannot be installed in repository edge-07: no catalog names where it comes from .* it can be checked but not installed/,
    )
    const lost = planRepository(
      state,
      context({ resolve: () => ({ ok: false, message: 'its source cannot be found' }) }),
    )
    expect(lost.failures.get('edge-07/edge-monitor')).toEqual([
      {
        code: 'DependencyUnresolved',
        message: 'cert-manager v1.14.0 cannot be installed in repository edge-07: its source cannot be found',
      },
    ])
  })

  test('what was installed outside git (an InstalledPackage of the repository) is upgraded by installing the version into the repository', () => {
    const installed = KubeObject.fromObject({
      apiVersion: 'kpt-variants.dev/v1alpha1',
      kind: 'InstalledPackage',
      metadata: { name: 'cert-manager', labels: { 'kpt-variants.dev/repository': 'edge-08' } },
      spec: { package: 'cert-manager', version: 'v1.12.0' },
    })
    const elsewhere = KubeObject.fromObject({
      ...installed.toJS(),
      metadata: { name: 'cert-manager-other', labels: { 'kpt-variants.dev/repository': 'edge-09' } },
    })
    const plan = planRepository(
      { repo: 'edge-08', targets: [monitor('edge-08')], present: [] },
      context({ fleetObjects: [installed, elsewhere], mode: 'check' }),
    )
    expect(plan.steps).toEqual([
      expect.objectContaining({
        action: 'upgrade',
        from: 'v1.12.0',
        version: 'v1.14.0',
        pkg: 'cert-manager',
        outsideGit: true,
        asDependency: false,
      }),
    ])
    // Once the repository holds it, the InstalledPackage no longer counts.
    const after = planRepository(
      {
        repo: 'edge-08',
        targets: [monitor('edge-08')],
        present: [present('edge-08', 'cert-manager', 'cert-manager', 'v1.14.0', false)],
      },
      context({ fleetObjects: [installed], mode: 'check' }),
    )
    expect(after.steps).toEqual([])
  })
})

describe('the failure codes of a dependency plan', () => {
  test("a package's manifest that cannot be read: InvalidManifest; the fleet's dependency objects: DependencyInputInvalid", () => {
    const broken = {
      path: 'edge-01/broken',
      objects: [manifest('/out/edge-01/broken', 'broken', 'v1.0.0', [{ version: 5 }])],
    }
    const own = planRepository(
      { repo: 'edge-01', targets: [broken, monitor('edge-01')], present: [] },
      context({ mode: 'check' }),
    )
    expect([...own.failures].map(([path, reasons]) => [path, reasons.map((r) => r.code)])).toEqual([
      ['edge-01/broken', ['InvalidManifest']],
    ])
    const fleet = context()
    const unreadable = {
      ...fleet,
      fleet: { ...fleet.fleet, errors: ['DependencyPolicy default/p: spec.upgrades: invalid'] },
    }
    const planned = planRepository({ repo: 'edge-01', targets: [monitor('edge-01')], present: [] }, unreadable)
    expect(planned.failures.get('edge-01/edge-monitor')).toEqual([
      {
        code: 'DependencyInputInvalid',
        message: 'repository edge-01: DependencyPolicy default/p: spec.upgrades: invalid',
      },
    ])
  })
})
