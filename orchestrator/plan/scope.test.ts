import { parseObjects } from '../../functions/krm/index.js'
import { source } from '../../test/support/source.js'
import { buildFleet } from '../fleet/fleet.js'
import { textFile } from '../package/files.js'
import type { PackageFiles } from '../package/files.js'
import { packageRevisionObject } from '../upstream/revisions.js'
import { abandonment } from './abandoned.js'
import { planFleet } from './plan.js'
import { leavesDependencies, scopedAbandonment, scopedPlan, scopedRepositories } from './scope.js'
import { nginxRevision, repositories } from '../../test/support/unit-fleet.js'

const fleetText =
  repositories('edge-01', 'edge-02') +
  source`
  ---
  apiVersion: config.porch.kpt.dev/v1alpha1
  kind: PackageVariant
  metadata: {name: a, namespace: default}
  spec: {upstream: {repo: blueprints, package: nginx, revision: 1}, downstream: {repo: edge-01, package: a}}
  ---
  apiVersion: config.porch.kpt.dev/v1alpha1
  kind: PackageVariant
  metadata: {name: b, namespace: default}
  spec: {upstream: {repo: blueprints, package: nginx, revision: 1}, downstream: {repo: edge-02, package: b}}
  ---
  apiVersion: config.porch.kpt.dev/v1alpha1
  kind: PackageVariant
  metadata: {name: missing, namespace: default}
  spec: {upstream: {repo: blueprints, package: nginx, revision: 9}, downstream: {repo: edge-02, package: missing}}
  ---
  apiVersion: config.porch.kpt.dev/v1alpha2
  kind: PackageVariantSet
  metadata: {name: broken, namespace: default}
  spec: {upstream: {repo: nowhere, package: nginx, revision: 1}}
`
const revision = nginxRevision(1)
const fleet = buildFleet({ root: '/fleet', objects: parseObjects(fleetText, 'fleet.yaml'), problems: [], digest: '' })
const plan = planFleet(fleet, {
  revisions: new Map([['default|blueprints|nginx', [revision]]]),
  objects: [packageRevisionObject(revision)],
  problems: new Map(),
})

/** A package whose root Kptfile names its owner. */
const ownedBy = (owner: string): PackageFiles =>
  new Map([
    [
      'Kptfile',
      textFile(
        `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\n  annotations:\n    kpt-variants.dev/package-variant: ${owner}\n`,
      ),
    ],
  ])

describe('a scoped render', () => {
  test('plans every variant as a full render does, then keeps the variants in scope and the failures of no variant', () => {
    expect(plan.variants.map((v) => v.key)).toEqual(['default/a', 'default/b'])
    const scoped = scopedPlan(plan, {
      variants: ['default/b', 'default/gone'],
      repositories: ['edge-02'],
      packages: [],
      declared: false,
    })
    expect(scoped.variants.map((v) => v.key)).toEqual(['default/b'])
    // The failing variant is out of scope; the set's failure belongs to no variant and stays (it keeps the set's packages).
    expect(scoped.failures.map((f) => f.subject)).toEqual(['PackageVariantSet default/broken'])
    expect(
      scopedPlan(plan, { variants: ['default/missing'], repositories: [], packages: [], declared: false }).failures.map(
        (f) => f.subject,
      ),
    ).toEqual(['PackageVariantSet default/broken', 'PackageVariant default/missing'])
  })

  test('opens only the deployment repositories in scope', () => {
    expect(
      scopedRepositories(fleet, {
        variants: [],
        repositories: ['edge-02'],
        packages: [],
        declared: false,
      }).repositories.map((r) => r.name),
    ).toEqual(['edge-02'])
    expect(fleet.repositories.map((r) => r.name)).toEqual(['blueprints', 'edge-01', 'edge-02'])
  })

  test('removes only packages whose owner is in scope', () => {
    const full = abandonment(plan, fleet, { dryRun: false, variants: [], problems: [] })!
    // Both are gone from the plan: a full render removes both, a scoped one only the one in scope.
    expect(full.entry('edge-01/gone', ownedBy('default/gone'))?.status).toBe('deleted')
    expect(full.entry('edge-01/other', ownedBy('default/other'))?.status).toBe('deleted')
    const scoped = scopedAbandonment(full, {
      variants: ['default/gone'],
      repositories: ['edge-01'],
      packages: [],
      declared: false,
    })!
    expect(scoped.entry('edge-01/gone', ownedBy('default/gone'))?.status).toBe('deleted')
    expect(scoped.entry('edge-01/other', ownedBy('default/other'))).toBeUndefined()
    expect(scoped.claimed('edge-01/a')).toBe(full.claimed('edge-01/a'))
    expect(scopedAbandonment(full, undefined)).toBe(full)
    expect(
      scopedAbandonment(undefined, { variants: [], repositories: [], packages: [], declared: false }),
    ).toBeUndefined()
  })

  test('leaves the dependency plans alone when none of its packages declared or declares anything', () => {
    const scope = { variants: ['default/a'], repositories: ['edge-01'], packages: ['edge-01/a'], declared: false }
    expect(leavesDependencies(scope, [{ dependencies: [] }])).toBe(true)
    expect(leavesDependencies(scope, [{ dependencies: ['a PackageManifest'] }])).toBe(false)
    expect(leavesDependencies({ ...scope, declared: true }, [{ dependencies: [] }])).toBe(false)
  })
})
