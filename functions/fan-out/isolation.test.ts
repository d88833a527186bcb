/**
 * Isolation: a PackageVariantSet reads and reconciles only objects of its own
 * namespace, and its CEL expressions see only the name, namespace, labels and
 * annotations of an object.
 */
import { parseValue } from '../krm/yaml/index.js'
import { parseObjects, runFunction } from '../krm/index.js'
import { source } from '../../test/support/source.js'
import { fanOutFunction } from './index.js'

const indent = (text: string, n: number) => text.replace(/^(?=.)/gm, ' '.repeat(n))

const pvs = (targets: string) => source`
  apiVersion: config.porch.kpt.dev/v1alpha2
  kind: PackageVariantSet
  metadata:
    name: nginx
    namespace: team-a
    annotations:
      internal.config.kubernetes.io/path: pvs.yaml
  spec:
    upstream: {repo: blueprints, package: nginx, revision: 1}
    targets:
${indent(targets, 4)}
`
const upstream = (namespace: string) => source`
  apiVersion: porch.kpt.dev/v1alpha1
  kind: PackageRevision
  metadata: {name: blueprints.nginx.v1, namespace: ${namespace}}
  spec: {repository: blueprints, packageName: nginx, revision: 1, workspaceName: v1}
`
const repo = (name: string, namespace: string) => source`
  apiVersion: config.porch.kpt.dev/v1alpha1
  kind: Repository
  metadata:
    name: ${name}
    namespace: ${namespace}
    labels: {edge: "yes"}
    annotations: {owner: ${namespace}}
  spec:
    type: git
    git: {repo: "https://example.com/${name}.git", secretRef: {name: ${namespace}-token}}
`
/** A PackageVariant of another team's set of the same name: same label, same downstream. */
const foreignVariant = (downstream: string) => source`
  apiVersion: config.porch.kpt.dev/v1alpha1
  kind: PackageVariant
  metadata:
    name: nginx-${downstream}-nginx
    namespace: team-b
    labels: {config.porch.kpt.dev/packagevariantset: nginx}
    annotations:
      internal.config.kubernetes.io/path: team-b/${downstream}.yaml
  spec:
    upstream: {repo: blueprints, package: nginx, revision: 7}
    downstream: {repo: ${downstream}, package: nginx}
`

function run(set: string, items: string[], sources = '') {
  const all = [set, ...items].map((i) => `-${indent(i, 2).slice(1)}`).join('\n')
  const input = `apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n${all}\nfunctionConfig:\n${indent(set, 2)}`
  const out = runFunction(fanOutFunction, input, { sources: sources ? parseObjects(sources, 'cluster.yaml') : [] })
  const parsed = parseValue(out.output) as {
    items: Record<string, any>[]
    results?: { severity: string; message: string }[]
  }
  return { ...out, items: parsed.items, results: parsed.results ?? [] }
}

const selectEdges = '- repositorySelector: {matchLabels: {edge: "yes"}}\n'

describe('fan-out isolation', () => {
  test('set reconciliation never updates or deletes a PackageVariant of another namespace', () => {
    // `edge-1` is still desired (the foreign one would be updated), `gone` is not (it would be deleted).
    const foreign = [foreignVariant('edge-1'), foreignVariant('gone')]
    const { items, exitCode, output } = run(pvs(selectEdges), [
      upstream('team-a'),
      repo('edge-1', 'team-a'),
      ...foreign,
    ])
    expect(exitCode).toBe(0)
    const variants = items.filter((i) => i['kind'] === 'PackageVariant')
    expect(variants.map((v) => `${v['metadata']['namespace']}/${v['metadata']['name']}`)).toEqual([
      'team-b/nginx-edge-1-nginx',
      'team-b/nginx-gone-nginx',
      'team-a/nginx-edge-1-nginx',
    ])
    // The other team's objects are printed back byte for byte.
    for (const text of foreign) expect(output).toContain(`-${indent(text, 2).slice(1)}`)
  })

  test('targets, Repositories and the upstream of another namespace are not read, from items or --sources', () => {
    const others = [repo('edge-b', 'team-b'), upstream('team-b')]
    const fromItems = run(pvs(selectEdges), [repo('edge-1', 'team-a'), ...others])
    expect(fromItems.exitCode).toBe(1)
    expect(fromItems.results.map((r) => r.message)).toContainEqual(
      expect.stringContaining("could not find upstream package revision 'nginx/1'"),
    )
    const fromSources = run(pvs(selectEdges), [upstream('team-a'), repo('edge-1', 'team-a')], others.join('---\n'))
    expect(fromSources.exitCode).toBe(0)
    const downstreams = fromSources.items
      .filter((i) => i['kind'] === 'PackageVariant')
      .map((v) => v['spec']['downstream']['repo'])
    expect(downstreams).toEqual(['edge-1'])
  })

  const celTarget = (expr: string) =>
    `- repositorySelector: {matchLabels: {edge: "yes"}}\n  template:\n    annotationExprs:\n    - {key: x, valueExpr: ${JSON.stringify(expr)}}\n`

  test('CEL reads the name, namespace, labels and annotations of an object', () => {
    const expr =
      "repository.name + '|' + repository.namespace + '|' + repository.labels.edge + '|' + repository.annotations.owner + '|' + upstream.name"
    const { items, exitCode } = run(pvs(celTarget(expr)), [upstream('team-a'), repo('edge-1', 'team-a')])
    expect(exitCode).toBe(0)
    const variant = items.find((i) => i['kind'] === 'PackageVariant')!
    expect(variant['spec']['annotations']).toEqual({ x: 'edge-1|team-a|yes|team-a|blueprints.nginx.v1' })
  })

  test.each([
    'repository.spec.git.secretRef.name',
    'repository.spec',
    'repository.metadata.name',
    'repository.apiVersion',
    'repository.kind',
    'repository.status',
    'upstream.spec.repository',
    'target.spec',
  ])('CEL cannot read `%s`', (expr) => {
    const { exitCode, results, output } = run(pvs(celTarget(expr)), [upstream('team-a'), repo('edge-1', 'team-a')])
    expect(exitCode).toBe(1)
    expect(results.filter((r) => r.severity === 'error').map((r) => r.message)).toContainEqual(
      expect.stringMatching(/no such key/),
    )
    expect(output).not.toContain('team-a-token\n')
  })
})
