import { parseObjects } from '../../functions/krm/index.js'
import { source } from '../../test/support/source.js'
import { buildFleet } from '../fleet/fleet.js'
import { inShard, planFleet, withoutUnavailable } from './plan.js'
import type { RevisionIndex } from './plan.js'
import { packageRevisionObject } from '../upstream/revisions.js'
import { nginxRevision as revision, repositories } from '../../test/support/unit-fleet.js'

const repos = repositories('edge-01', 'edge-02')
const clusters = ['edge-01', 'edge-02', 'Edge_03']
  .map(
    (name) =>
      `apiVersion: infra.nephio.org/v1alpha1\nkind: WorkloadCluster\nmetadata: {name: ${name}, namespace: default, labels: {site: edge}}\n`,
  )
  .join('---\n')
const set = source`
  apiVersion: config.porch.kpt.dev/v1alpha2
  kind: PackageVariantSet
  metadata: {name: nginx, namespace: default}
  spec:
    upstream: {repo: blueprints, package: nginx, revision: 2}
    targets:
    - objectSelector: {apiVersion: infra.nephio.org/v1alpha1, kind: WorkloadCluster, matchLabels: {site: edge}}
      template: {downstream: {repoExpr: target.name}}
`
const pv = (name: string, spec: string) =>
  `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata: {name: ${name}, namespace: default}\nspec: ${spec}\n`

const revisions: RevisionIndex = new Map([['default|blueprints|nginx', [revision(1), revision(2)]]])
const revisionObjects = [...revisions.values()].flat().map(packageRevisionObject)

function plan(...files: string[]) {
  const objects = files.flatMap((text, i) => parseObjects(text, `f${i}.yaml`))
  return planFleet(buildFleet({ root: '/fleet', objects, problems: [], digest: '' }), {
    revisions,
    objects: revisionObjects,
    problems: new Map(),
  })
}

describe('planFleet', () => {
  test("keeps each set variant's target object: the selected object, or the downstream Repository of a repositories target", () => {
    const byRepos = set
      .replace('name: nginx, namespace', 'name: listed, namespace')
      .replace(/targets:[\s\S]*$/, 'targets:\n    - repositories: [{name: edge-02, packageNames: [web]}]\n')
    const result = plan(repos, clusters.replace('Edge_03', 'edge-03'), set, byRepos)
    expect(result.variants.map((v) => [v.key, v.target && `${v.target.kind} ${v.target.name}`])).toEqual([
      ['default/nginx-edge-01-nginx', 'WorkloadCluster edge-01'],
      ['default/nginx-edge-02-nginx', 'WorkloadCluster edge-02'],
      ['default/listed-edge-02-web', 'Repository edge-02'],
    ])
    expect(
      plan(
        repos,
        pv(
          'solo',
          '{upstream: {repo: blueprints, package: nginx, revision: 1}, downstream: {repo: edge-01, package: solo}}',
        ),
      ).variants[0]!.target,
    ).toBeUndefined()
  })

  test('expands a set with the fan-out transform and resolves each variant', () => {
    const result = plan(repos, clusters.replace('Edge_03', 'edge-02x'), set)
    expect(
      result.variants.map((v) => [v.key, v.set, `${v.downstream.repo}/${v.downstream.package}`, v.upstream.ref]),
    ).toEqual([
      ['default/nginx-edge-01-nginx', 'default/nginx', 'edge-01/nginx', 'nginx/v2'],
      ['default/nginx-edge-02-nginx', 'default/nginx', 'edge-02/nginx', 'nginx/v2'],
    ])
    expect(result.failures).toEqual([
      {
        subject: 'PackageVariantSet default/nginx target WorkloadCluster "edge-02x"',
        set: 'default/nginx',
        downstreamRepo: 'edge-02x',
        message: 'repository "edge-02x" could not be loaded',
        code: 'UnexpectedError',
        target: expect.objectContaining({ name: 'edge-02x', kind: 'WorkloadCluster' }),
      },
    ])
    // Only the missing repository's packages could be that target's: the set's other packages may still go.
    expect([...result.incompleteSets]).toEqual([])
  })

  test('a target whose PackageVariant cannot be named fails alone, keeping only the package it names', () => {
    const result = plan(repos, repos.split('---')[1]!.replace(/edge-01/g, 'Edge_03'), clusters, set)
    expect(result.variants).toHaveLength(2)
    expect(result.failures).toEqual([
      expect.objectContaining({
        subject: 'PackageVariantSet default/nginx target WorkloadCluster "Edge_03"',
        set: 'default/nginx',
        downstream: 'Edge_03/nginx',
        message: expect.stringContaining('invalid PackageVariant name "nginx-Edge_03-nginx"'),
      }),
    ])
    expect([...result.incompleteSets]).toEqual([])
  })

  test('standalone PackageVariants: Porch validation, names, repositories, revisions, one downstream each', () => {
    const result = plan(
      repos,
      pv(
        'ok',
        '{upstream: {repo: blueprints, package: nginx, workspaceName: v1}, downstream: {repo: edge-01, package: web}}',
      ),
      pv(
        'invalid',
        '{upstream: {repo: blueprints}, downstream: {repo: edge-01, package: a}, adoptionPolicy: sometimes}',
      ),
      pv(
        'bad-name',
        '{upstream: {repo: blueprints, package: nginx, revision: 1}, downstream: {repo: edge-01, package: ../up}}',
      ),
      pv(
        'no-revision',
        '{upstream: {repo: blueprints, package: nginx, revision: 7}, downstream: {repo: edge-02, package: web}}',
      ),
      pv(
        'twin',
        '{upstream: {repo: blueprints, package: nginx, revision: 1}, downstream: {repo: edge-01, package: web}}',
      ),
      pv(
        'nowhere',
        '{upstream: {repo: blueprints, package: nginx, revision: 1}, downstream: {repo: edge-09, package: web}}',
      ),
    )
    expect(result.variants.map((v) => [v.key, v.upstream.ref])).toEqual([['default/ok', 'nginx/v1']])
    expect(result.failures.map((f) => [f.subject, f.message])).toEqual([
      [
        'PackageVariant default/invalid',
        'missing required field spec.upstream.package; spec.adoptionPolicy field can only be "adoptNone" or "adoptExisting"',
      ],
      [
        'PackageVariant default/bad-name',
        expect.stringMatching(/^invalid downstream package name "\.\.\/up": "\.\." a lowercase RFC 1123 label/),
      ],
      [
        'PackageVariant default/no-revision',
        'could not find upstream package revision &v1alpha1.Upstream{Repo:"blueprints", Package:"nginx", Revision:7, WorkspaceName:""}',
      ],
      ['PackageVariant default/twin', 'PackageVariant default/ok renders the same downstream package edge-01/web'],
      [
        'PackageVariant default/nowhere',
        'downstream repository "edge-09" not found: no Repository of that name in the fleet',
      ],
    ])
  })

  test('shards split the variants into disjoint, stable parts', () => {
    const keys = Array.from({ length: 200 }, (_, i) => `default/pv-${i}`)
    const parts = [0, 1, 2].map((index) => keys.filter((k) => inShard(k, { index, count: 3 })))
    expect(parts.flat().sort()).toEqual([...keys].sort())
    expect(parts.every((p) => p.length > 40)).toBe(true)
    expect(keys.filter((k) => inShard(k, { index: 1, count: 3 }))).toEqual(parts[1])
  })
})

describe('the failure codes of a plan', () => {
  const codes = (p: ReturnType<typeof plan>) => p.failures.map((f) => [f.subject, f.code])

  test('invalid, duplicate, a repository or an upstream revision not found: each its code', () => {
    const result = plan(
      repos,
      pv('invalid', '{upstream: {repo: blueprints}, downstream: {repo: edge-01, package: a}}'),
      pv('one', '{upstream: {repo: blueprints, package: nginx, revision: 1}, downstream: {repo: edge-01, package: b}}'),
      pv('two', '{upstream: {repo: blueprints, package: nginx, revision: 1}, downstream: {repo: edge-01, package: b}}'),
      pv(
        'nowhere',
        '{upstream: {repo: blueprints, package: nginx, revision: 1}, downstream: {repo: edge-09, package: c}}',
      ),
      pv(
        'no-repo',
        '{upstream: {repo: missing, package: nginx, revision: 1}, downstream: {repo: edge-01, package: d}}',
      ),
      pv(
        'no-rev',
        '{upstream: {repo: blueprints, package: nginx, revision: 7}, downstream: {repo: edge-01, package: e}}',
      ),
    )
    expect(codes(result)).toEqual([
      ['PackageVariant default/invalid', 'ValidationError'],
      ['PackageVariant default/two', 'DuplicateVariant'],
      ['PackageVariant default/nowhere', 'RepositoryNotFound'],
      ['PackageVariant default/no-repo', 'UpstreamNotFound'],
      ['PackageVariant default/no-rev', 'UpstreamNotFound'],
    ])
  })

  test("a set's kind not served: NoMatchingTargets; a downstream repository that cannot be opened: DownstreamUnavailable", () => {
    const objects = [repos, set].flatMap((text, i) => parseObjects(text, `f${i}.yaml`))
    const served = buildFleet({ root: '/fleet', objects, problems: [], digest: '' }, 'default', { servedKinds: [] })
    const unserved = planFleet(served, { revisions, objects: revisionObjects, problems: new Map() })
    expect(codes(unserved)).toEqual([['PackageVariantSet default/nginx', 'NoMatchingTargets']])
    const planned = plan(
      repos,
      pv('one', '{upstream: {repo: blueprints, package: nginx, revision: 1}, downstream: {repo: edge-01, package: b}}'),
    )
    expect(codes(withoutUnavailable(planned, { 'edge-01': 'cannot fetch' }))).toEqual([
      ['PackageVariant default/one', 'DownstreamUnavailable'],
      ['Repository edge-01', 'DownstreamUnavailable'],
    ])
  })
})
