import { ResourceList, runFunction } from '../krm/index.js'
import { source } from '../../test/support/source.js'
import { fanOutFunction } from './index.js'
import {
  clusterTargets,
  expectFailedSet,
  fleet,
  pvsWith,
  repo,
  resourceList,
  run,
  variants,
} from './fan-out.fixtures.js'

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
      '- objectSelector: {apiVersion: infra.nephio.org/v1alpha1, kind: WorkloadCluster, matchLabels: {region: us-east1}}\n  template: {downstream: {repoExpr: "\'edge-zz\'"}}\n',
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
      'spec.targets[0].repositorySelector',
    ],
  ])("%s: error result, nothing changed but the set's status", (_, targets, message, field) => {
    const input = resourceList(pvsWith(targets), ...fleet)
    const out = run(input)
    expect(out.exitCode).toBe(1)
    expect(out.results[0]).toMatchObject({
      severity: 'error',
      field: { path: field },
      tags: { reason: 'UnexpectedError' },
    })
    expect(out.results[0]!['message']).toContain(message)
    expectFailedSet(input, out.items, 'UnexpectedError', message)
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
    expectFailedSet(input, out.items, 'UnexpectedError', 'invalid PackageVariant name "nginx-edge-c2-network/upf"')
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
})
