/** Upstreams chosen by version: the choice itself, and sets and PackageVariants that follow a constraint through the plan. */
import { parseObjects } from '../../functions/krm/index.js'
import { source } from '../../test/support/source.js'
import { buildFleet } from '../fleet/fleet.js'
import { packageRevisionObject } from '../upstream/revisions.js'
import type { RevisionVersion } from '../upstream/revisions.js'
import { followedUpstreams } from './follow-versions.js'
import { planFleet } from './plan.js'
import { chooseVersion } from './upstream-version.js'
import { nginxRevision as revision } from '../../test/support/unit-fleet.js'

/** nginx/v1 = v1.0.0, v2 = v1.4.0, v3 = v2.0.0-rc.1 (needs Kubernetes >=1.29), v4 = v2.0.0, v5 declares nothing. */
const declared = new Map<number, RevisionVersion>([
  [1, { version: 'v1.0.0' }],
  [2, { version: 'v1.4.0' }],
  [3, { version: 'v2.0.0-rc.1', kubernetesVersion: '>=1.29' }],
  [4, { version: 'v2.0.0', kubernetesVersion: '>=1.29' }],
])
const revisions = [1, 2, 3, 4, 5].map((n) => revision(n))

const choose = (constraint: string, more: Partial<Parameters<typeof chooseVersion>[0]> = {}) =>
  chooseVersion({
    upstream: 'blueprints/nginx',
    constraint,
    revisions,
    versions: declared,
    prereleases: 'Exclude',
    ...more,
  })

describe('chooseVersion', () => {
  test('the highest satisfying version, and the newest beyond the constraint', () => {
    const chosen = choose('>=1.0.0 <2.0.0')
    expect(chosen).toMatchObject({
      ok: true,
      revision: { revision: 2 },
      version: { constraint: '>=1.0.0 <2.0.0', version: 'v1.4.0', newest: 'v2.0.0' },
    })
    expect(choose('^2')).toMatchObject({ ok: true, revision: { revision: 4 }, version: { version: 'v2.0.0' } })
    expect((choose('^2') as { version: object }).version).not.toHaveProperty('newest')
  })

  test('prereleases only as the policy admits them (or a constraint that names one)', () => {
    expect(choose('>=2.0.0-0 <2.0.0')).toMatchObject({ ok: true, version: { version: 'v2.0.0-rc.1' } })
    const rcOnly = new Map(declared)
    rcOnly.delete(4)
    expect(choose('>=1.5.0', { versions: rcOnly }).ok).toBe(false)
    expect(choose('>=1.5.0', { versions: rcOnly, prereleases: 'Include' })).toMatchObject({
      version: { version: 'v2.0.0-rc.1' },
    })
    expect(choose('>=1.5.0', { versions: rcOnly, prereleases: { identifiers: ['rc'] } })).toMatchObject({
      version: { version: 'v2.0.0-rc.1' },
    })
  })

  test('none satisfying: the versions seen, those without a version, and the funnel', () => {
    const none = choose('>=3.0.0')
    expect(none).toEqual({
      ok: false,
      code: 'UpstreamNotFound',
      message:
        'no published version of blueprints/nginx satisfies ">=3.0.0": seen v1.0.0 (nginx/v1), v1.4.0 (nginx/v2), v2.0.0-rc.1 (nginx/v3), v2.0.0 (nginx/v4); without a PackageManifest version: nginx/v5 (all=4 -> after-prereleases-filter=3 -> after-constraints-filter=0)',
    })
    expect(choose('newest')).toEqual({
      ok: false,
      code: 'ValidationError',
      message: 'annotation kpt-variants.dev/upstream-version: improper constraint: newest',
    })
  })

  test('a cluster whose Kubernetes a version does not run on keeps the one before, with a warning; unknown: not filtered', () => {
    const old = { version: '1.28.4', source: 'WorkloadCluster edge-05 (label kpt-variants.dev/kubernetes-version)' }
    expect(choose('>=1.0.0', { cluster: old })).toMatchObject({
      ok: true,
      version: { version: 'v1.4.0', newest: 'v2.0.0' },
      warnings: [
        'upstream blueprints/nginx: v2.0.0 (nginx/v4) needs another Kubernetes version than WorkloadCluster edge-05 (label kpt-variants.dev/kubernetes-version) runs (1.28.4); following v1.4.0',
      ],
    })
    expect(choose('^2', { cluster: old })).toMatchObject({
      ok: false,
      message: expect.stringContaining(
        '(all=4 -> after-prereleases-filter=3 -> after-constraints-filter=1 -> after-kubernetes-filter=0 (WorkloadCluster edge-05 (label kpt-variants.dev/kubernetes-version) runs 1.28.4))',
      ),
    })
    expect(choose('^2', { cluster: { source: 'x' } })).toMatchObject({ ok: true, version: { version: 'v2.0.0' } })
  })
})

const repos = source`
  apiVersion: config.porch.kpt.dev/v1alpha1
  kind: Repository
  metadata: {name: blueprints, namespace: default}
  spec: {git: {repo: ../repos/blueprints}}
  ---
  apiVersion: config.porch.kpt.dev/v1alpha1
  kind: Repository
  metadata: {name: edge-01, namespace: default, labels: {kpt-variants.dev/kubernetes-version: "1.28.1"}}
  spec: {deployment: true, git: {repo: ../repos/edge-01}}
  ---
  apiVersion: config.porch.kpt.dev/v1alpha1
  kind: Repository
  metadata: {name: edge-02, namespace: default, labels: {canary: "yes"}}
  spec: {deployment: true, git: {repo: ../repos/edge-02}}
`
const set = (annotation: string, upstream = '', targets = '    - repositories: [{name: edge-01}, {name: edge-02}]\n') =>
  source`
  apiVersion: config.porch.kpt.dev/v1alpha2
  kind: PackageVariantSet
  metadata: {name: nginx, namespace: default${annotation}}
  spec:
    upstream: {repo: blueprints, package: nginx${upstream}}
    targets:
` + targets

function plan(...files: string[]) {
  const objects = files.flatMap((text, i) => parseObjects(text, `f${i}.yaml`))
  const fleet = buildFleet({ root: '/fleet', objects, problems: [], digest: '' })
  return {
    followed: followedUpstreams(fleet).map((f) => `${f.repo.name}/${f.package}`),
    plan: planFleet(fleet, {
      revisions: new Map([['default|blueprints|nginx', revisions]]),
      objects: revisions.map(packageRevisionObject),
      problems: new Map(),
      versions: new Map([['default|blueprints|nginx', declared]]),
    }),
  }
}

const annotated = (constraint: string) => `, annotations: {kpt-variants.dev/upstream-version: "${constraint}"}`

describe('a set or PackageVariant that follows a version', () => {
  test('a set renders each target at the highest version its cluster runs, and reports the version', () => {
    const { followed, plan: p } = plan(repos, set(annotated('>=1.0.0')))
    expect(followed).toEqual(['blueprints/nginx'])
    expect(p.failures).toEqual([])
    expect(p.variants.map((v) => [v.downstream.repo, v.upstream.ref, v.version])).toEqual([
      ['edge-01', 'nginx/v2', { constraint: '>=1.0.0', version: 'v1.4.0', newest: 'v2.0.0' }],
      ['edge-02', 'nginx/v4', { constraint: '>=1.0.0', version: 'v2.0.0' }],
    ])
    // The PackageVariant says the revision it renders.
    expect(p.variants[0]!.pv.spec.upstream).toEqual({ repo: 'blueprints', package: 'nginx', revision: 2 })
  })

  test("a target's template overrides the set's constraint", () => {
    const targets =
      '    - repositories: [{name: edge-01}]\n    - repositories: [{name: edge-02}]\n      template: {annotations: {kpt-variants.dev/upstream-version: "~1.0"}}\n'
    const { plan: p } = plan(repos, set(annotated('^1'), '', targets))
    expect(p.variants.map((v) => [v.downstream.repo, v.version?.version])).toEqual([
      ['edge-01', 'v1.4.0'],
      ['edge-02', 'v1.0.0'],
    ])
  })

  test('a revision beside the constraint is an error naming both fields; none satisfying fails the set with the versions seen', () => {
    const both = plan(repos, set(annotated('^1'), ', revision: 2')).plan
    expect(both.variants).toEqual([])
    expect(both.failures).toMatchObject([
      {
        subject: 'PackageVariantSet default/nginx',
        code: 'ValidationError',
        message:
          'metadata.annotations[kpt-variants.dev/upstream-version] chooses the upstream by version, and spec.upstream.revision by revision: give one',
      },
    ])
    expect(both.incompleteSets.has('default/nginx')).toBe(true)
    const none = plan(repos, set(annotated('>=9'))).plan
    expect(none.failures).toMatchObject([
      {
        code: 'UpstreamNotFound',
        message: expect.stringMatching(
          /^metadata.annotations\[kpt-variants.dev\/upstream-version\]: no published version of blueprints\/nginx satisfies ">=9"/,
        ),
      },
    ])
  })

  test('a PackageVariant: by its own annotation; with a revision too it fails; without any, as before', () => {
    const pv = (name: string, annotation: string, upstream: string) => source`
      apiVersion: config.porch.kpt.dev/v1alpha1
      kind: PackageVariant
      metadata: {name: ${name}, namespace: default${annotation}}
      spec: {upstream: {repo: blueprints, package: nginx${upstream}}, downstream: {repo: edge-02, package: ${name}}}
    `
    const { followed, plan: p } = plan(
      repos,
      pv('a', annotated('<2.0.0'), ''),
      pv('b', annotated('<2.0.0'), ', workspaceName: v1'),
      pv('c', '', ', revision: 1'),
    )
    expect(followed).toEqual(['blueprints/nginx'])
    expect(p.variants.map((v) => [v.key, v.upstream.ref, v.version?.version])).toEqual([
      ['default/a', 'nginx/v2', 'v1.4.0'],
      ['default/c', 'nginx/v1', undefined],
    ])
    expect(p.failures.map((f) => [f.subject, f.message])).toEqual([
      [
        'PackageVariant default/b',
        'metadata.annotations[kpt-variants.dev/upstream-version] chooses the upstream by version, and spec.upstream.workspaceName by revision: give one',
      ],
    ])
  })

  test('a fleet without the annotation reads no versions and plans as before', () => {
    const { followed, plan: p } = plan(repos, set('', ', revision: 1'))
    expect(followed).toEqual([])
    expect(p.variants.map((v) => [v.upstream.ref, v.version])).toEqual([
      ['nginx/v1', undefined],
      ['nginx/v1', undefined],
    ])
  })
})
