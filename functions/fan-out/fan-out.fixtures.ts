/** The fleet and helpers the fan-out tests share: Repositories, clusters, a PackageVariantSet, a run of the function. */
import { parseValue } from '../krm/yaml/index.js'
import { runFunction } from '../krm/index.js'
import { source } from '../../test/support/source.js'
import { fanOutFunction } from './index.js'

export const indent = (text: string, n: number) => text.replace(/^(?=.)/gm, ' '.repeat(n))

/** A ResourceList with the set both as functionConfig and as an item (as `kpt fn eval --fn-config` in the dir gives). */
export function resourceList(pvs: string, ...items: string[]): string {
  const all = [pvs, ...items].map((i) => `-${indent(i, 2).slice(1)}`).join('\n')
  return `apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n${all}\nfunctionConfig:\n${indent(pvs, 2)}`
}

export const repo = (name: string, labels = '{}', ns = 'default') => source`
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
export const upstream = source`
  apiVersion: porch.kpt.dev/v1alpha1
  kind: PackageRevision
  metadata:
    name: blueprints.nginx.v1
    namespace: default
    labels: {tier: base}
  spec: {repository: blueprints, packageName: nginx, revision: 1, workspaceName: v1}
`
export const cluster = (name: string, region: string) => source`
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
export const pvsWith = (targets: string) => source`
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

export const clusterTargets = source`
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
export const fleet = [
  repo('blueprints'),
  repo('edge-c1'),
  repo('edge-c2'),
  upstream,
  cluster('c1', 'us-east1'),
  cluster('c2', 'eu-west1'),
  cluster('c3', 'ap-south1'),
]

export function run(input: string) {
  const out = runFunction(fanOutFunction, input)
  const parsed = parseValue(out.output) as { items: Record<string, any>[]; results?: Record<string, any>[] }
  return { ...out, items: parsed.items, results: parsed.results ?? [] }
}
export const variants = (items: Record<string, any>[]) => items.filter((i) => i['kind'] === 'PackageVariant')

/**
 * A failed run's items are the input's but for the set's `status` (Porch writes it before returning the error):
 * checks both, and that the conditions carry `reason` and `message`.
 */
export function expectFailedSet(input: string, items: Record<string, any>[], reason: string, message: string) {
  const expected = (parseValue(input) as { items: Record<string, any>[] }).items
  const isSet = (i: Record<string, any>) => i['kind'] === 'PackageVariantSet'
  const { status, ...set } = items.find(isSet)!
  expect(set).toEqual(expected.find(isSet))
  expect(items.filter((i) => !isSet(i))).toEqual(expected.filter((i) => !isSet(i)))
  expect(status).toEqual({
    conditions: [
      { type: 'Stalled', status: 'True', reason, message: expect.stringContaining(message) },
      { type: 'Ready', status: 'False', reason, message: expect.stringContaining(message) },
    ],
  })
}
