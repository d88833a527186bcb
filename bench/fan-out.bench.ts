/**
 * fan-out of one PackageVariantSet over 10,000 WorkloadClusters with four CEL
 * expressions per target, in-process on a parsed ResourceList (as the
 * orchestrator runs it), against the same fan-out with static templates.
 * A second case adds parsing and printing the whole list (the bin's work).
 */
import { ResourceList, runFunction } from '../functions/krm/index.js'
import type { KubeObject } from '../functions/krm/index.js'
import { fanOut, fanOutFunction } from '../functions/fan-out/index.js'
import type { Benchmark } from './harness.js'

const targets = 10_000

function fleet(template: string, selector = objectSelector): string {
  const items: string[] = [
    `- apiVersion: porch.kpt.dev/v1alpha1
  kind: PackageRevision
  metadata: {name: blueprints.nginx.v1, namespace: default, labels: {tier: base}}
  spec: {repository: blueprints, packageName: nginx, revision: 1, workspaceName: v1}`,
  ]
  for (let i = 0; i < targets; i++) {
    items.push(`- apiVersion: config.porch.kpt.dev/v1alpha1
  kind: Repository
  metadata:
    name: edge-c${i}
    namespace: default
    labels:
      role: edge
      region: region-${i % 7}
    annotations:
      config.kubernetes.io/path: 'repos/edge-c${i}.yaml'
      internal.config.kubernetes.io/path: 'repos/edge-c${i}.yaml'
  spec:
    type: git`)
    items.push(`- apiVersion: infra.nephio.org/v1alpha1
  kind: WorkloadCluster
  metadata:
    name: c${i}
    namespace: default
    labels:
      nephio.org/site: site-${i}
      nephio.org/region: region-${i % 7}
    annotations:
      config.kubernetes.io/path: 'clusters/c${i}.yaml'
      internal.config.kubernetes.io/path: 'clusters/c${i}.yaml'
  spec:
    clusterName: c${i}`)
  }
  return `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
${items.join('\n')}
functionConfig:
  apiVersion: config.porch.kpt.dev/v1alpha2
  kind: PackageVariantSet
  metadata: {name: nginx, namespace: default}
  spec:
    upstream: {repo: blueprints, package: nginx, revision: 1}
    targets:
${selector}
      template:
${template}
`
}

const objectSelector = `    - objectSelector:
        apiVersion: infra.nephio.org/v1alpha1
        kind: WorkloadCluster
        matchExpressions: [{key: nephio.org/site, operator: Exists}]`

/** The baseline selects the 10,000 Repositories instead, so it also yields 10,000 distinct PackageVariants without CEL. */
const repositorySelector = `    - repositorySelector:
        matchLabels: {role: edge}`

const staticTemplate = `        packageContext:
          data: {region: region-0, site: static, repo-region: region-0}
        injectors:
        - {kind: WorkloadCluster, name: c0}`

/** A parsed list whose items can be restored after each run (fan-out only appends PackageVariants). */
function prepared(template: string, selector = objectSelector): { rl: ResourceList; items: KubeObject[] } {
  const rl = ResourceList.parse(fleet(template, selector))
  return { rl, items: [...rl.items] }
}

function runOnce(input: unknown): void {
  const { rl, items } = input as { rl: ResourceList; items: KubeObject[] }
  rl.items = [...items]
  rl.results.items.length = 0
  fanOut(rl, { sources: [] })
  const created = rl.items.length - items.length
  if (rl.results.hasErrors() || created !== targets)
    throw new Error(`fan-out created ${created}: ${rl.results.items[0]?.message}`)
}

export const benchmarks: Benchmark[] = [
  {
    name: `fan-out, 1 PackageVariantSet x ${targets} targets, 4 CEL expressions each, in-process`,
    goal: { maxMs: 1000 },
    setup: () => ({ cel: prepared(siteTemplate()), plain: prepared(staticTemplate, repositorySelector) }),
    run: (input) => runOnce((input as { cel: unknown }).cel),
    baseline: {
      name: 'same fan-out, static template (no CEL)',
      run: (input) => runOnce((input as { plain: unknown }).plain),
    },
    iterations: 5,
  },
  {
    name: `fan-out, ${targets} targets, as the bin: parse + fan-out + print`,
    setup: () => fleet(siteTemplate()),
    run: (input) => {
      const out = runFunction(fanOutFunction, input as string)
      if (out.exitCode !== 0) throw new Error(out.stderr.join('\n'))
    },
    baseline: {
      name: 'parse + print the same list (no fan-out)',
      run: (input) => ResourceList.parse(input as string).toString(),
    },
    iterations: 3,
  },
  {
    name: `fan-out re-run over the ${targets} PackageVariants it wrote (nothing changes), as the bin`,
    setup: () => {
      const first = runFunction(fanOutFunction, fleet(siteTemplate()))
      if (first.exitCode !== 0) throw new Error(first.stderr.join('\n'))
      return first.output.replace(/\nresults:\n[\s\S]*$/, '\n')
    },
    run: (input) => {
      const out = runFunction(fanOutFunction, input as string)
      if (out.exitCode !== 0 || !out.output.includes(`0 created, 0 updated, ${targets} unchanged`))
        throw new Error('re-run changed the fleet')
    },
    baseline: {
      name: 'parse + print the same list (no fan-out)',
      run: (input) => ResourceList.parse(input as string).toString(),
    },
    iterations: 3,
  },
]

/** Four expressions per target (standard CEL only): downstream repo and package, one data value, one injector name. */
function siteTemplate(): string {
  return `        downstream:
          repoExpr: "'edge-' + target.name"
          packageExpr: "packageDefault + '-' + target.labels['nephio.org/region']"
        packageContext:
          dataExprs:
          - {key: region, valueExpr: "target.labels['nephio.org/region']"}
        injectors:
        - {kind: WorkloadCluster, nameExpr: target.name}`
}
