/**
 * PackageVariantSets from Porch's documentation (the reconciliation page's
 * unrolling example) and unit tests (the long-name case of render_test.go)
 * produce the PackageVariants Porch would create (docs/upstream-behaviour.md, "Porch's PackageVariantSet controller").
 */
import fc from 'fast-check'
import { parseValue } from '../krm/yaml/index.js'
import { ResourceList, runFunction } from '../krm/index.js'
import { source } from '../../test/support/source.js'
import { runFanOut } from './fan-out.js'
import { fanOutFunction } from './index.js'

const repository = (name: string, labels: Record<string, string> = {}) => ({
  apiVersion: 'config.porch.kpt.dev/v1alpha1',
  kind: 'Repository',
  metadata: { name, namespace: 'porch-demo', labels },
  spec: { type: 'git' },
})
const upstreamRevision = {
  apiVersion: 'porch.kpt.dev/v1alpha1',
  kind: 'PackageRevision',
  metadata: { name: 'blueprints.my-package.v1', namespace: 'porch-demo' },
  spec: { repository: 'blueprints', packageName: 'my-package', revision: 1, workspaceName: 'v1' },
}

function list(pvs: string, items: object[]): string {
  return JSON.stringify({
    apiVersion: 'config.kubernetes.io/v1',
    kind: 'ResourceList',
    items,
    functionConfig: parseValue(pvs),
  })
}

const porchPv = (name: string, repo: string, pkg: string, extra: object = {}) => ({
  apiVersion: 'config.porch.kpt.dev/v1alpha1',
  kind: 'PackageVariant',
  metadata: {
    name,
    namespace: 'porch-demo',
    labels: { 'config.porch.kpt.dev/packagevariantset': 'a1b2-c3d4' },
    ownerReferences: [
      {
        apiVersion: 'config.porch.kpt.dev/v1alpha2',
        kind: 'PackageVariantSet',
        name: 'my-pvs',
        uid: 'a1b2-c3d4',
        controller: true,
      },
    ],
    finalizers: ['config.porch.kpt.dev/packagevariants'],
  },
  spec: {
    upstream: { repo: 'blueprints', package: 'my-package', revision: 1 },
    downstream: { repo, package: pkg },
    ...extra,
  },
})

function variants(output: string): object[] {
  return (parseValue(output) as { items: Record<string, any>[] }).items
    .filter((i) => i['kind'] === 'PackageVariant')
    .map((i) => {
      delete i['metadata']['annotations'] // kpt's path annotations, not part of the object Porch creates
      return i
    })
}

// The Repositories are in the list: unlike Porch, a `repositories` entry naming no Repository fails the set
// (NoMatchingTargets, README "Differences from Porch"); in Porch the PackageVariants would fail instead.
test("the docs' repositories example unrolls to repo-1/pkg-a, repo-1/pkg-b, repo-2/pkg-c", () => {
  const pvs = source`
    apiVersion: config.porch.kpt.dev/v1alpha2
    kind: PackageVariantSet
    metadata: {name: my-pvs, namespace: porch-demo, uid: a1b2-c3d4}
    spec:
      upstream: {repo: blueprints, package: my-package, revision: 1}
      targets:
      - repositories:
        - {name: repo-1, packageNames: [pkg-a, pkg-b]}
        - {name: repo-2, packageNames: [pkg-c]}
  `
  const out = runFunction(fanOutFunction, list(pvs, [upstreamRevision, repository('repo-1'), repository('repo-2')]))
  expect(out.exitCode).toBe(0)
  expect(variants(out.output)).toEqual([
    porchPv('my-pvs-repo-1-pkg-a', 'repo-1', 'pkg-a'),
    porchPv('my-pvs-repo-1-pkg-b', 'repo-1', 'pkg-b'),
    porchPv('my-pvs-repo-2-pkg-c', 'repo-2', 'pkg-c'),
  ])
})

test("the docs' template examples, with Porch's long-name case", () => {
  const longPkg = 'supersupersuperloooooooooooooooooooooooooooooooooooooooooooooooooongpkgname'
  const pvs = source`
    apiVersion: config.porch.kpt.dev/v1alpha2
    kind: PackageVariantSet
    metadata: {name: my-pvs, namespace: porch-demo, uid: a1b2-c3d4}
    spec:
      upstream: {repo: blueprints, package: my-package, revision: 1}
      targets:
      - repositorySelector: {matchLabels: {env: prod}}
        template:
          downstream: {packageExpr: "'${longPkg}'"}
          labelExprs: [{keyExpr: "'cluster'", valueExpr: "repository.name"}]
          packageContext:
            dataExprs: [{keyExpr: "'region'", valueExpr: "repository.labels.region"}]
          pipeline:
            mutators:
            - image: gcr.io/kpt-fn/set-namespace:v0.4.1
              configMap: {namespace: default}
              configMapExprs: [{keyExpr: "'namespace'", valueExpr: "repository.labels.ns"}]
  `
  const items = [
    upstreamRevision,
    repository('dnrepo4', { env: 'prod', region: 'us-east1', ns: 'edge' }),
    repository('dev', { env: 'dev' }),
  ]
  const out = runFunction(fanOutFunction, list(pvs, items))
  expect(out.exitCode).toBe(0)
  expect(variants(out.output)).toEqual([
    porchPv('my-pvs-dnrepo4-supersupersuperlooooooooooooooooooooooo-bec36506', 'dnrepo4', longPkg, {
      labels: { cluster: 'dnrepo4' },
      packageContext: { data: { region: 'us-east1' } },
      pipeline: { mutators: [{ image: 'gcr.io/kpt-fn/set-namespace:v0.4.1', configMap: { namespace: 'edge' } }] },
    }),
  ])
})

test('property: a repositorySelector picks exactly the Repositories whose labels match', () => {
  const value = fc.constantFrom('a', 'b', 'c')
  const labels = fc.record({ env: value, tier: value }, { requiredKeys: [] })
  fc.assert(
    fc.property(fc.array(labels, { maxLength: 8 }), labels, (repoLabels, selector) => {
      const repos = repoLabels.map((l, i) => repository(`r${i}`, l as Record<string, string>))
      const pvs = `{apiVersion: config.porch.kpt.dev/v1alpha2, kind: PackageVariantSet, metadata: {name: s, namespace: porch-demo}, spec: {upstream: {repo: blueprints, package: my-package, revision: 1}, targets: [{repositorySelector: {matchLabels: ${JSON.stringify(selector)}}}]}}`
      const rl = ResourceList.parse(list(pvs, [upstreamRevision, ...repos]))
      runFanOut(rl, { sources: [] })
      const selected = rl.items
        .filter((i) => i.kind === 'PackageVariant')
        .map((i) => i.get(['spec', 'downstream', 'repo']))
      const expected = repos
        .filter((r) => Object.entries(selector).every(([k, v]) => r.metadata.labels[k] === v))
        .map((r) => r.metadata.name)
      expect(selected).toEqual(expected)
    }),
    { numRuns: 50 },
  )
})
