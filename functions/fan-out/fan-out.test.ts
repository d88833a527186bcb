import { parse, stringify } from 'yaml'
import { ResourceList, runFunction } from '../krm/index.js'
import { source } from '../../test/support/source.js'
import { runFanOut } from './fan-out.js'
import { fanOutFunction } from './index.js'

const indent = (text: string, n: number) => text.replace(/^(?=.)/gm, ' '.repeat(n))

/** A ResourceList with the set both as functionConfig and as an item (as `kpt fn eval --fn-config` in the dir gives). */
function resourceList(pvs: string, ...items: string[]): string {
  const all = [pvs, ...items].map((i) => `-${indent(i, 2).slice(1)}`).join('\n')
  return `apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n${all}\nfunctionConfig:\n${indent(pvs, 2)}`
}

const repo = (name: string, labels = '{}', ns = 'default') => source`
  apiVersion: config.porch.kpt.dev/v1alpha1
  kind: Repository
  metadata:
    name: ${name}
    namespace: ${ns}
    labels: ${labels}
    annotations:
      internal.config.kubernetes.io/path: repos/${name}.yaml
  spec: {type: git}
`
const upstream = source`
  apiVersion: porch.kpt.dev/v1alpha1
  kind: PackageRevision
  metadata:
    name: blueprints.nginx.v1
    namespace: default
    labels: {tier: base}
  spec: {repository: blueprints, packageName: nginx, revision: 1, workspaceName: v1}
`
const cluster = (name: string, region: string) => source`
  apiVersion: infra.nephio.org/v1alpha1
  kind: WorkloadCluster
  metadata:
    name: ${name}
    namespace: default
    labels: {region: ${region}}
    annotations:
      internal.config.kubernetes.io/path: clusters/${name}.yaml
  spec: {clusterName: ${name}}
`
const pvsWith = (targets: string) => source`
  apiVersion: config.porch.kpt.dev/v1alpha2
  kind: PackageVariantSet
  metadata:
    name: nginx
    namespace: default
    annotations:
      internal.config.kubernetes.io/path: sets/pvs.yaml
  spec:
    upstream: {repo: blueprints, package: nginx, revision: 1}
    targets:
${indent(targets, 4)}
`

const clusterTargets = source`
  - objectSelector:
      apiVersion: infra.nephio.org/v1alpha1
      kind: WorkloadCluster
      matchExpressions: [{key: region, operator: In, values: [us-east1, eu-west1]}]
    template:
      downstream:
        repoExpr: "'edge-' + target.name"
        packageExpr: "packageDefault + '-' + target.labels.region"
      packageContext:
        dataExprs:
        - {key: region, valueExpr: target.labels.region}
        - {key: upstream-tier, valueExpr: upstream.labels.tier}
      injectors:
      - {kind: WorkloadCluster, nameExpr: target.name}
`
const fleet = [
  repo('blueprints'),
  repo('edge-c1'),
  repo('edge-c2'),
  upstream,
  cluster('c1', 'us-east1'),
  cluster('c2', 'eu-west1'),
  cluster('c3', 'ap-south1'),
]

function run(input: string) {
  const out = runFunction(fanOutFunction, input)
  const parsed = parse(out.output) as { items: Record<string, any>[]; results?: Record<string, any>[] }
  return { ...out, items: parsed.items, results: parsed.results ?? [] }
}
const variants = (items: Record<string, any>[]) => items.filter((i) => i['kind'] === 'PackageVariant')

describe('fan-out', () => {
  test('one PackageVariant per selected object, each bound to its own target (kpt#3985)', () => {
    const { exitCode, items } = run(resourceList(pvsWith(clusterTargets), ...fleet))
    expect(exitCode).toBe(0)
    const pvs = variants(items)
    expect(pvs.map((p) => p['metadata']['name'])).toEqual([
      'nginx-edge-c1-nginx-us-east1',
      'nginx-edge-c2-nginx-eu-west1',
    ])
    expect(pvs[1]).toEqual({
      apiVersion: 'config.porch.kpt.dev/v1alpha1',
      kind: 'PackageVariant',
      metadata: {
        name: 'nginx-edge-c2-nginx-eu-west1',
        namespace: 'default',
        labels: { 'config.porch.kpt.dev/packagevariantset': 'nginx' },
        ownerReferences: [
          { apiVersion: 'config.porch.kpt.dev/v1alpha2', kind: 'PackageVariantSet', name: 'nginx', controller: true },
        ],
        finalizers: ['config.porch.kpt.dev/packagevariants'],
        annotations: {
          'internal.config.kubernetes.io/path': 'sets/nginx-edge-c2-nginx-eu-west1.yaml',
          'config.kubernetes.io/path': 'sets/nginx-edge-c2-nginx-eu-west1.yaml',
          'internal.config.kubernetes.io/index': '0',
          'config.kubernetes.io/index': '0',
        },
      },
      spec: {
        upstream: { repo: 'blueprints', package: 'nginx', revision: 1 },
        downstream: { repo: 'edge-c2', package: 'nginx-eu-west1' },
        packageContext: { data: { region: 'eu-west1', 'upstream-tier': 'base' } },
        injectors: [{ kind: 'WorkloadCluster', name: 'c2' }],
      },
    })
    const set = items.find((i) => i['kind'] === 'PackageVariantSet')!
    expect(set['status']['conditions']).toEqual([
      { type: 'Stalled', status: 'False', reason: 'Valid', message: 'all validation checks passed' },
      { type: 'Ready', status: 'True', reason: 'Reconciled', message: 'package variants successfully reconciled' },
    ])
  })

  test('a second run changes nothing', () => {
    const first = runFunction(fanOutFunction, resourceList(pvsWith(clusterTargets), ...fleet))
    const rl = ResourceList.parse(first.output)
    const again = runFunction(fanOutFunction, rl.toString())
    const strip = (text: string) => text.replace(/\nresults:[\s\S]*$/, '')
    expect(strip(again.output)).toBe(strip(first.output))
    expect(again.output).toContain('0 created, 0 updated, 2 unchanged, 0 deleted')
  })

  test('existing PackageVariants: spec updated with metadata kept, stale ones deleted, other sets untouched', () => {
    const existing = (name: string, set: string, repoName: string, spec = '') => source`
      apiVersion: config.porch.kpt.dev/v1alpha1
      kind: PackageVariant
      metadata:
        name: ${name}
        namespace: default
        labels: {config.porch.kpt.dev/packagevariantset: ${set}}
        annotations: {note: keep-me}
      spec:
        upstream: {repo: blueprints, package: nginx, revision: 0}
        downstream: {repo: ${repoName}, package: nginx}${spec}
    `
    const targets = '- repositories: [{name: edge-c1}, {name: edge-c2}]\n  template: {labels: {a: b}}\n'
    const { items, exitCode, results } = run(
      resourceList(
        pvsWith(targets),
        ...fleet,
        existing('old-hash-name', 'nginx', 'edge-c1'),
        existing('nginx-gone-nginx', 'nginx', 'gone'),
        existing('other-set-pv', 'other', 'edge-c2'),
      ),
    )
    expect(exitCode).toBe(0)
    const pvs = variants(items)
    expect(pvs.map((p) => p['metadata']['name'])).toEqual(['old-hash-name', 'other-set-pv', 'nginx-edge-c2-nginx'])
    expect(pvs[0]!['metadata']['annotations']).toEqual({ note: 'keep-me' })
    expect(pvs[0]!['spec']).toEqual({
      upstream: { repo: 'blueprints', package: 'nginx', revision: 1 },
      downstream: { repo: 'edge-c1', package: 'nginx' },
      labels: { a: 'b' },
    })
    expect(pvs[1]!['spec']['upstream']['revision']).toBe(0)
    expect(results.at(-1)!['message']).toBe(
      'PackageVariantSet "nginx": 2 PackageVariant(s): 1 created, 1 updated, 0 unchanged, 1 deleted',
    )
  })

  test('with a uid, the label and owner reference carry it, and only uid-labelled PackageVariants belong to the set', () => {
    const stale = source`
      apiVersion: config.porch.kpt.dev/v1alpha1
      kind: PackageVariant
      metadata: {name: by-name, namespace: default, labels: {config.porch.kpt.dev/packagevariantset: nginx}}
      spec: {downstream: {repo: x, package: y}}
    `
    const { items } = run(
      resourceList(
        pvsWith('- repositories: [{name: edge-c1}]\n').replace(
          'namespace: default',
          'namespace: default\n  uid: 1234-abcd',
        ),
        ...fleet,
        stale,
      ),
    )
    const pvs = variants(items)
    expect(pvs.map((p) => p['metadata']['name'])).toEqual(['by-name', 'nginx-edge-c1-nginx'])
    expect(pvs[1]!['metadata']['labels']).toEqual({ 'config.porch.kpt.dev/packagevariantset': '1234-abcd' })
    expect(pvs[1]!['metadata']['ownerReferences'][0]['uid']).toBe('1234-abcd')
  })

  test.each([
    [
      'a CEL error names the field, Porch-style',
      clusterTargets.replace("packageDefault + '-' + target.labels.region", 'target.labels.zone'),
      'template.downstream.packageExpr: no such key: zone',
      'spec.targets[0].template.downstream.packageExpr',
    ],
    [
      'a missing Repository',
      '- repositories: [{name: edge-zz}]\n  template: {}\n',
      'repository "edge-zz" could not be loaded',
      'spec.targets[0].template.downstream',
    ],
    [
      'an invalid generated name is an error, not a later API failure',
      '- repositories: [{name: edge-c1, packageNames: [Nginx]}]\n',
      'invalid PackageVariant name "nginx-edge-c1-Nginx": metadata.name: Invalid value: "nginx-edge-c1-Nginx": a lowercase RFC 1123 subdomain',
      'spec.targets[0]',
    ],
    [
      'a bad label selector',
      '- repositorySelector: {matchExpressions: [{key: a, operator: in, values: [b]}]}\n',
      '"in" is not a valid label selector operator',
      'spec.targets',
    ],
  ])('%s: error result, nothing changed', (_, targets, message, field) => {
    const input = resourceList(pvsWith(targets), ...fleet)
    const out = run(input)
    expect(out.exitCode).toBe(1)
    expect(out.results[0]).toMatchObject({
      severity: 'error',
      field: { path: field },
      tags: { reason: 'UnexpectedError' },
    })
    expect(out.results[0]!['message']).toContain(message)
    expect(out.items).toEqual((parse(input) as { items: unknown[] }).items)
  })

  test('nested package paths are not sanitised: every invalid name is an error result on its target, nothing written', () => {
    const targets = source`
      - repositories: [{name: edge-c1, packageNames: [nginx]}]
      - repositories: [{name: edge-c2, packageNames: [network/upf, network/smf]}]
    `
    const input = resourceList(pvsWith(targets), ...fleet)
    const out = run(input)
    expect(out.exitCode).toBe(1)
    const ref = {
      apiVersion: 'config.porch.kpt.dev/v1alpha2',
      kind: 'PackageVariantSet',
      name: 'nginx',
      namespace: 'default',
    }
    expect(out.results).toEqual(
      ['network/upf', 'network/smf'].map((pkg) => ({
        severity: 'error',
        message: expect.stringMatching(
          new RegExp(
            `^invalid PackageVariant name "nginx-edge-c2-${pkg}": metadata.name: Invalid value: "nginx-edge-c2-${pkg}": a lowercase RFC 1123 subdomain must consist of`,
          ),
        ),
        resourceRef: ref,
        field: { path: 'spec.targets[1]' },
        file: { path: 'sets/pvs.yaml' },
        tags: {
          reason: 'UnexpectedError',
          target: `repository "edge-c2" package "${pkg}"`,
          downstream: `edge-c2/${pkg}`,
        },
      })),
    )
    expect(out.items).toEqual((parse(input) as { items: unknown[] }).items)
  })

  test("a nested package path past the cut of a long name gives a valid hashed name and a file in the set's directory", () => {
    const longRepo = 'edge-' + 'r'.repeat(50)
    const { exitCode, items } = run(
      resourceList(
        pvsWith(`- repositories: [{name: ${longRepo}, packageNames: [network/upf]}]\n`),
        ...fleet,
        repo(longRepo),
      ),
    )
    expect(exitCode).toBe(0)
    const [pv] = variants(items)
    const name = pv!['metadata']['name'] as string
    expect(name).toMatch(/^nginx-edge-r+-[0-9a-f]{8}$/)
    expect(name).toHaveLength(63)
    expect(pv!['spec']['downstream']).toEqual({ repo: longRepo, package: 'network/upf' })
    expect(pv!['metadata']['annotations']['internal.config.kubernetes.io/path']).toBe(`sets/${name}.yaml`)
  })

  describe('kpt fn render of a fleet with a subpackage (items carry package-path; paths are per package)', () => {
    type Obj = Record<string, any>
    const at = (packagePath: string, path: string, text: string, index = 0): Obj => {
      const o = parse(text) as Obj
      o['metadata']['annotations'] = {
        ...o['metadata']['annotations'],
        'internal.config.kubernetes.io/package-path': packagePath,
        'internal.config.kubernetes.io/path': path,
        'internal.config.kubernetes.io/index': String(index),
      }
      return o
    }
    const member = (name: string, repoName: string, revision: number) => source`
      apiVersion: config.porch.kpt.dev/v1alpha1
      kind: PackageVariant
      metadata:
        name: ${name}
        namespace: default
        labels: {config.porch.kpt.dev/packagevariantset: nginx}
      spec:
        upstream: {repo: blueprints, package: nginx, revision: ${revision}}
        downstream: {repo: ${repoName}, package: nginx}
    `
    const configMap = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, namespace: default}\ndata: {a: b}\n'
    const targets = '- repositories: [{name: edge-c1}, {name: edge-c2}]\n'
    const bare = (text: string) => {
      const o = parse(text) as Obj
      delete o['metadata']['annotations']
      return stringify(o)
    }
    const rootSet = at('/fleet', 'sets/pvs.yaml', bare(pvsWith(targets)))
    /** Subpackage items first, as kpt passes them; the set as functionConfig with its own annotations (configPath). */
    const renderInput = (subpackageItems: Obj[], rootItems: Obj[] = []) =>
      stringify(
        {
          apiVersion: 'config.kubernetes.io/v1',
          kind: 'ResourceList',
          items: [
            ...subpackageItems,
            rootSet,
            ...[repo('blueprints'), repo('edge-c1'), repo('edge-c2'), upstream].map((r, i) =>
              at('/fleet', `fleet-${i}.yaml`, bare(r)),
            ),
            ...rootItems,
          ],
          functionConfig: rootSet,
        },
        { aliasDuplicateObjects: false },
      )
    const annotations = (o: Obj) => o['metadata']['annotations'] as Record<string, string>

    test('members in the subpackage are updated in place or deleted; new PackageVariants go next to the root set', () => {
      const input = renderInput([
        at('/fleet/edge', 'sets/pvs.yaml', bare(pvsWith('- repositories: [{name: edge-zz}]\n'))),
        at('/fleet/edge', 'nginx-edge-c1-nginx.yaml', member('nginx-edge-c1-nginx', 'edge-c1', 0)),
        at('/fleet/edge', 'gone.yaml', member('nginx-gone-nginx', 'gone', 0)),
        at('/fleet/edge', 'sets/nginx-edge-c2-nginx.yaml', configMap),
      ])
      const { exitCode, items, results } = run(input)
      expect(exitCode).toBe(0)
      const pvs = variants(items)
      expect(
        pvs.map((p) => [
          p['metadata']['name'],
          annotations(p)['internal.config.kubernetes.io/package-path'],
          annotations(p)['internal.config.kubernetes.io/path'],
          annotations(p)['internal.config.kubernetes.io/index'],
        ]),
      ).toEqual([
        ['nginx-edge-c1-nginx', '/fleet/edge', 'nginx-edge-c1-nginx.yaml', '0'],
        // no package-path: kpt assigns the package whose pipeline runs; index 0, as the subpackage's file of that path is another file
        ['nginx-edge-c2-nginx', undefined, 'sets/nginx-edge-c2-nginx.yaml', '0'],
      ])
      expect(pvs[0]!['spec']['upstream']['revision']).toBe(1)
      expect(results.at(-1)!['message']).toBe(
        'PackageVariantSet "nginx": 2 PackageVariant(s): 1 created, 1 updated, 0 unchanged, 1 deleted',
      )
      const sets = items.filter((i) => i['kind'] === 'PackageVariantSet')
      expect(
        sets.map((s) => [
          annotations(s)['internal.config.kubernetes.io/package-path'],
          s['status']?.['conditions']?.[1]?.['reason'],
        ]),
      ).toEqual([
        ['/fleet/edge', undefined],
        ['/fleet', 'Reconciled'],
      ])
    })

    test('a second render changes nothing', () => {
      const first = runFunction(
        fanOutFunction,
        renderInput([at('/fleet/edge', 'nginx-edge-c1-nginx.yaml', member('nginx-edge-c1-nginx', 'edge-c1', 0))]),
      )
      const again = runFunction(fanOutFunction, first.output)
      const strip = (text: string) => text.replace(/\nresults:[\s\S]*$/, '')
      expect(strip(again.output)).toBe(strip(first.output))
      expect(again.output).toContain('0 created, 0 updated, 2 unchanged, 0 deleted')
    })

    test('a new PackageVariant appends to a root file of its name, not to a subpackage file of the same path', () => {
      const input = renderInput(
        [
          at('/fleet/edge', 'sets/nginx-edge-c1-nginx.yaml', configMap),
          at('/fleet/edge', 'sets/nginx-edge-c1-nginx.yaml', configMap.replace('other', 'other2'), 1),
        ],
        [at('/fleet', 'sets/nginx-edge-c2-nginx.yaml', configMap)],
      )
      const pvs = variants(run(input).items)
      expect(
        pvs.map((p) => [
          annotations(p)['internal.config.kubernetes.io/path'],
          annotations(p)['internal.config.kubernetes.io/index'],
        ]),
      ).toEqual([
        ['sets/nginx-edge-c1-nginx.yaml', '0'],
        ['sets/nginx-edge-c2-nginx.yaml', '1'],
      ])
    })
  })

  test("with several items of the set's name, the functionConfig's path picks the set's file", () => {
    const targets = '- repositories: [{name: edge-c1}]\n'
    const copy = pvsWith(targets).replace('path: sets/pvs.yaml', 'path: copy/pvs.yaml')
    const fc = pvsWith(targets)
    const all = [copy, fc, ...fleet].map((i) => `-${indent(i, 2).slice(1)}`).join('\n')
    const { items } = run(
      `apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n${all}\nfunctionConfig:\n${indent(fc, 2)}`,
    )
    expect(variants(items)[0]!['metadata']['annotations']['internal.config.kubernetes.io/path']).toBe(
      'sets/nginx-edge-c1-nginx.yaml',
    )
    const sets = items.filter((i) => i['kind'] === 'PackageVariantSet')
    expect(sets.map((s) => s['status'] === undefined)).toEqual([true, false])
  })

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
