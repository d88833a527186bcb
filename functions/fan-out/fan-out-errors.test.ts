/** fan-out on bad or partial input: validation errors, a missing upstream, collisions, foreign namespaces, isolated failures. */

import { ResourceList, runFunction } from '../krm/index.js'
import { source } from '../../test/support/source.js'
import { runFanOut } from './fan-out.js'
import { fanOutFunction } from './index.js'
import { cluster, fleet, pvsWith, repo, resourceList, run, upstream, variants } from './fan-out.fixtures.js'

describe('fan-out', () => {
  test('validation errors are combined as Porch does and set Stalled on the set', () => {
    const rl = ResourceList.parse(
      resourceList(pvsWith('- template: {}\n').replace('revision: 1', 'revision: 0'), ...fleet),
    )
    runFanOut(rl, { sources: [] })
    expect(rl.results.items).toEqual([
      expect.objectContaining({
        severity: 'error',
        message:
          'either spec.upstream.revision or spec.upstream.workspaceName must be specified; spec.targets[0] must specify one of `repositories`, `repositorySelector`, or `objectSelector`',
        tags: { reason: 'ValidationError' },
      }),
    ])
    expect(rl.items[0]!.get(['status', 'conditions'])).toEqual([
      expect.objectContaining({ type: 'Stalled', status: 'True', reason: 'ValidationError' }),
      expect.objectContaining({ type: 'Ready', status: 'False', reason: 'ValidationError' }),
    ])
  })

  test('the upstream PackageRevision is required, and may come from --sources', () => {
    const withoutUpstream = resourceList(
      pvsWith('- repositories: [{name: edge-c1}]\n'),
      ...fleet.filter((f) => f !== upstream),
    )
    const missing = run(withoutUpstream)
    expect(missing.results[0]).toMatchObject({
      message: "could not find upstream package revision 'nginx/1' in repo 'blueprints'",
      tags: { reason: 'UpstreamNotFound' },
    })
    const rl = ResourceList.parse(withoutUpstream)
    const sources = ResourceList.parse(resourceList(upstream)).items
    runFanOut(rl, { sources })
    expect(rl.results.hasErrors()).toBe(false)
    expect(rl.items.filter((i) => i.kind === 'PackageVariant')).toHaveLength(1)
  })

  test('identifier collisions are a warning; the last target wins at the first position', () => {
    const targets = source`
      - repositories: [{name: edge-c1, packageNames: [a-b]}]
        template: {labels: {from: first}}
      - repositories: [{name: edge-c1-a, packageNames: [b]}]
        template: {labels: {from: second}}
    `
    const { items, results } = run(resourceList(pvsWith(targets), ...fleet, repo('edge-c1-a')))
    const pvs = variants(items)
    expect(pvs).toHaveLength(1)
    expect(pvs[0]!['metadata']['name']).toBe('nginx-edge-c1-a-b')
    expect(pvs[0]!['spec']['labels']).toEqual({ from: 'second' })
    expect(results[0]).toMatchObject({ severity: 'warning' })
    expect(results[0]!['message']).toContain('both map to PackageVariant identifier "nginx-edge-c1-a-b"')
  })

  test('objects of another namespace are not targets; objects without a namespace are', () => {
    const targets = '- repositorySelector: {matchLabels: {edge: "yes"}}\n'
    const { items } = run(
      resourceList(
        pvsWith(targets),
        ...fleet,
        repo('edge-x', '{edge: "yes"}', 'other'),
        repo('edge-y', '{edge: "yes"}', '""'),
      ),
    )
    expect(variants(items).map((p) => p['spec']['downstream']['repo'])).toEqual(['edge-y'])
  })

  test('isolateTargets: a target that cannot render or be named fails alone; the others are reconciled', () => {
    const targets = source`
      - objectSelector: {apiVersion: infra.nephio.org/v1alpha1, kind: WorkloadCluster}
        template:
          downstream: {repoExpr: "'edge-' + target.name"}
          packageContext: {data: {tier: base}, dataExprs: [{key: zone, valueExpr: target.labels.zone}]}
    `
    const zoned = (name: string) =>
      cluster(name, 'us-east1').replace('labels: {region: us-east1}', 'labels: {region: us-east1, zone: a}')
    const input = resourceList(
      pvsWith(targets),
      repo('blueprints'),
      repo('edge-c1'),
      repo('edge-c2'),
      repo('edge-C4'),
      upstream,
      zoned('c1'),
      cluster('c2', 'eu-west1'),
      zoned('C4'),
    )
    const strict = ResourceList.parse(input)
    runFanOut(strict, { sources: [] })
    expect(strict.items.filter((i) => i.kind === 'PackageVariant')).toHaveLength(0)

    const rl = ResourceList.parse(input)
    runFanOut(rl, { sources: [] }, { isolateTargets: true })
    expect(rl.items.filter((i) => i.kind === 'PackageVariant').map((i) => i.name)).toEqual(['nginx-edge-c1-nginx'])
    expect(rl.results.items.filter((r) => r.severity === 'error')).toEqual([
      expect.objectContaining({
        field: { path: 'spec.targets[0].template.packageContext.dataExprs[0].valueExpr' },
        tags: expect.objectContaining({ target: 'WorkloadCluster "c2"' }),
      }),
      expect.objectContaining({
        field: { path: 'spec.targets[0]' },
        tags: expect.objectContaining({ target: 'WorkloadCluster "C4"' }),
      }),
    ])
    expect(rl.results.items.find((r) => r.tags?.['target'] === 'WorkloadCluster "C4"')!.message).toContain(
      'invalid PackageVariant name "nginx-edge-C4-nginx"',
    )
  })

  test('wrong functionConfig kind', () => {
    const out = runFunction(
      fanOutFunction,
      'apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}\n',
    )
    expect(out.exitCode).toBe(1)
    expect(out.output).toContain(
      'unsupported functionConfig ConfigMap.v1: expected PackageVariantSet.config.porch.kpt.dev/v1alpha2',
    )
  })
})
