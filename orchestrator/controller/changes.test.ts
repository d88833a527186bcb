import { parseObjects } from '../../functions/krm/index.js'
import { fleetFiles, threeClusters } from '../../test/support/fleet.js'
import type { Cluster, FleetOptions } from '../../test/support/fleet.js'
import { buildFleet } from '../fleet/fleet.js'
import { planFleet } from '../plan/plan.js'
import { packageRevisionObject } from '../upstream/revisions.js'
import { affectedScope, fleetWideKeys, planState } from './changes.js'
import type { PlanState } from './changes.js'
import { nginxRevision as revision } from '../../test/support/unit-fleet.js'

/** The e2e tests' fleet (an nginx set over edge WorkloadClusters, region endpoints injected), planned; `edit` changes its files first. */
function state(
  options: Partial<FleetOptions> & { clusters?: Cluster[] } = {},
  edit: (files: Record<string, string>) => void = () => {},
  revisions = [revision(1), revision(2)],
) {
  const files = fleetFiles({ clusters: threeClusters, ...options })
  edit(files)
  const objects = Object.entries(files).flatMap(([file, text]) => parseObjects(text, file))
  const fleet = buildFleet({ root: '/fleet', objects, problems: [], digest: '' })
  const plan = planFleet(fleet, {
    revisions: new Map([['default|blueprints|nginx', revisions]]),
    objects: revisions.map(packageRevisionObject),
    problems: new Map(),
  })
  return { plan, state: planState(plan, fleet) }
}

/** The variants and repositories of the scope. */
const scope = (before: PlanState, after: PlanState, always: string[] = []) => {
  const { variants, repositories } = affectedScope(before, after, { always })
  return { variants, repositories }
}
const before = state().state

describe('what a change of the fleet affects', () => {
  test('nothing changed: nothing is affected', () => {
    expect(before.digests.size).toBe(3)
    expect(scope(before, state().state)).toEqual({ variants: [], repositories: [] })
  })

  test('a new target is a new variant, in its repository', () => {
    const after = state({ clusters: [...threeClusters, { name: 'edge-04', region: 'us-east1' }] }).state
    expect(scope(before, after)).toEqual({ variants: ['default/nginx-edge-04-nginx'], repositories: ['edge-04'] })
  })

  test('a removed target, or one relabelled out of the selector, is a gone variant, in the repository where its package is', () => {
    const removed = state({ clusters: threeClusters.slice(0, 2) }).state
    expect(scope(before, removed)).toEqual({ variants: ['default/nginx-edge-03-nginx'], repositories: ['edge-03'] })
    const relabelled = state({
      clusters: [threeClusters[0]!, threeClusters[1]!, { ...threeClusters[2]!, siteType: 'core' }],
    }).state
    expect(scope(before, relabelled)).toEqual(scope(before, removed))
  })

  test('a label a template reads changes that variant only; a label nothing reads changes none', () => {
    const moved = state(
      {},
      (files) => (files['clusters.yaml'] = files['clusters.yaml']!.replace('region: us-west1', 'region: eu-west1')),
    ).state
    expect(scope(before, moved)).toEqual({ variants: ['default/nginx-edge-02-nginx'], repositories: ['edge-02'] })
    const unread = state(
      {},
      (files) =>
        (files['clusters.yaml'] = files['clusters.yaml']!.replace(
          'region: us-west1',
          'region: us-west1\n    owner: someone',
        )),
    ).state
    expect(scope(before, unread)).toEqual({ variants: [], repositories: [] })
  })

  test('an injected object changes the variants that inject it; another object changes none', () => {
    const injected = state(
      {},
      (files) =>
        (files['endpoints.yaml'] = files['endpoints.yaml']!.replace(
          'https://api.eu-west1.example.com',
          'https://eu.example.com',
        )),
    ).state
    expect(scope(before, injected)).toEqual({ variants: ['default/nginx-edge-03-nginx'], repositories: ['edge-03'] })
    const other = state(
      {},
      (files) =>
        (files['other.yaml'] =
          'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: unrelated, namespace: default}\ndata: {A: b}\n'),
    ).state
    expect(scope(before, other)).toEqual({ variants: [], repositories: [] })
  })

  test("the set's template or upstream revision, or a new commit of that revision, changes every variant of the set", () => {
    const all = {
      variants: ['default/nginx-edge-01-nginx', 'default/nginx-edge-02-nginx', 'default/nginx-edge-03-nginx'],
      repositories: ['edge-01', 'edge-02', 'edge-03'],
    }
    expect(scope(before, state({ team: 'another-team' }).state)).toEqual(all)
    expect(scope(before, state({ revision: 2 }).state)).toEqual(all)
    expect(scope(before, state({}, undefined, [revision(1, 'moved'), revision(2)]).state)).toEqual(all)
    expect(scope(before, state({ deletionPolicy: 'orphan' }).state)).toEqual(all)
  })

  test('a variant that now fails to plan is affected, in the repository it names', () => {
    const standalone = (revision: number) =>
      `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata: {name: standalone, namespace: default}\nspec: {upstream: {repo: blueprints, package: nginx, revision: ${revision}}, downstream: {repo: edge-01, package: standalone}}\n`
    const planned = state({ extra: { 'standalone.yaml': standalone(1) } }).state
    const failing = state({ extra: { 'standalone.yaml': standalone(7) } }).state
    expect(failing.paths.get('default/standalone')).toBe('edge-01/standalone')
    expect(scope(planned, failing)).toEqual({ variants: ['default/standalone'], repositories: ['edge-01'] })
    // A target whose repository is gone fails with no variant: its variant is gone, where its package is.
    const noRepository = state(
      {},
      (files) =>
        (files['repositories.yaml'] = files['repositories.yaml']!.replace('name: edge-02', 'name: edge-02-renamed')),
    ).state
    expect(scope(before, noRepository)).toEqual({
      variants: ['default/nginx-edge-02-nginx'],
      repositories: ['edge-02'],
    })
  })

  test('the packages the affected variants had, and whether one declared something to the dependency check', () => {
    const removed = state({ clusters: threeClusters.slice(0, 2) }).state
    const entry = (dependencies?: string[]) => ({
      scope: 'injectors' as const,
      inputs: '',
      files: '',
      warnings: [],
      ...(dependencies ? { dependencies } : {}),
    })
    expect(affectedScope(before, removed, { records: { 'edge-03/nginx': entry() } })).toEqual({
      variants: ['default/nginx-edge-03-nginx'],
      repositories: ['edge-03'],
      packages: ['edge-03/nginx'],
      declared: false,
    })
    expect(
      affectedScope(before, removed, { records: { 'edge-03/nginx': entry(['kind: PackageManifest']) } }).declared,
    ).toBe(true)
    // Not recorded: it may have.
    expect(affectedScope(before, removed, { records: {} }).declared).toBe(true)
    // A new variant had no package: nothing to read, nothing declared.
    const added = state({ clusters: [...threeClusters, { name: 'edge-04', region: 'us-east1' }] }).state
    expect(affectedScope(before, added, { records: {} })).toMatchObject({ packages: [], declared: false })
  })

  test('variants that read the whole fleet are always affected, if planned before or after', () => {
    expect(scope(before, before, ['default/nginx-edge-01-nginx', 'default/nowhere'])).toEqual({
      variants: ['default/nginx-edge-01-nginx'],
      repositories: ['edge-01'],
    })
  })

  test('the variants that read the whole fleet: recorded so, or rendered but not recorded (kpt ran their pipeline)', () => {
    const { plan } = state()
    const entry = (scope: 'fleet' | 'injectors') => ({ scope, inputs: '', files: '', warnings: [] })
    const records = { 'edge-01/nginx': entry('fleet'), 'edge-02/nginx': entry('injectors') }
    expect(
      fleetWideKeys(
        plan,
        records,
        new Set(['default/nginx-edge-01-nginx', 'default/nginx-edge-02-nginx', 'default/nginx-edge-03-nginx']),
      ),
    ).toEqual(['default/nginx-edge-01-nginx', 'default/nginx-edge-03-nginx'])
    // Not rendered (failed, or never): not recorded for that reason.
    expect(fleetWideKeys(plan, records, new Set())).toEqual(['default/nginx-edge-01-nginx'])
  })
})
