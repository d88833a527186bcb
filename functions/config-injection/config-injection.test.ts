import { parseValue } from '../krm/yaml/index.js'
import { findKptfile, parseObjects, ResourceList, runFunction } from '../krm/index.js'
import { configInjectionFunction } from './index.js'
import { indent, source } from '../../test/support/source.js'

const kptfile = source`
  apiVersion: kpt.dev/v1
  kind: Kptfile
  metadata:
    name: pkg
    annotations:
      internal.config.kubernetes.io/path: Kptfile
`

function pv(injectors: string, namespace = 'prod'): string {
  return `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: pv\n  namespace: ${namespace}\nspec:\n  injectors:${injectors.startsWith('[') ? ` ${injectors}` : `\n  ${indent(injectors, '  ')}`}\n`
}

/** Runs config-injection over the documents of `items` (separated by `---`). */
function run(items: string, config: string, cluster = '') {
  const docs = items.split(/^---\n/m).map((d) => `- ${indent(d, '  ')}`)
  const input = `apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n${docs.join('\n')}\nfunctionConfig:\n  ${indent(config, '  ')}\n`
  const out = runFunction(configInjectionFunction, input, {
    sources: cluster ? parseObjects(cluster, 'cluster.yaml') : [],
  })
  const rl = ResourceList.parse(out.output)
  const found = findKptfile(rl.items)
  return {
    exitCode: out.exitCode,
    items: rl.items.filter((i) => i.kind !== 'Kptfile').map((i) => i.toYaml()),
    kptfile: found.ok ? (found.kptfile.object.toJS() as { status?: unknown; info?: unknown }) : undefined,
    results: (parseValue(out.output) as { results?: unknown[] }).results ?? [],
  }
}

const endpoints = source`
  apiVersion: v1
  kind: ConfigMap
  metadata:
    name: endpoints
    annotations:
      kpt.dev/config-injection: required
      internal.config.kubernetes.io/path: endpoints.yaml
  data:
    # the regional API
    api: https://api.example.com # placeholder
    stale: x
`

const cluster = source`
  apiVersion: v1
  kind: ConfigMap
  metadata: {name: us-east1-endpoints, namespace: prod}
  data: {api: 'https://api.us-east1.example.com', metrics: 'https://m.us-east1.example.com'}
  ---
  apiVersion: v1
  kind: ConfigMap
  metadata: {name: eu-endpoints, namespace: prod}
  data: {api: 'https://api.eu.example.com'}
  ---
  apiVersion: v1
  kind: ConfigMap
  metadata: {name: eu-endpoints, namespace: staging}
  data: {api: 'https://api.staging.example.com'}
  ---
  apiVersion: example.com/v1
  kind: Team
  metadata: {name: platform, namespace: prod}
  spec: {owner: alice}
  ---
  apiVersion: example.com/v1
  kind: Team
  metadata: {name: nospec, namespace: prod}
  status: {x: 1}
`

const team = (annotation: string, name = 'team') => source`
  apiVersion: example.com/v1
  kind: Team
  metadata:
    name: ${name}
    annotations:
      kpt.dev/config-injection: ${annotation}
      internal.config.kubernetes.io/path: team.yaml
  spec:
    owner: nobody
`

describe('config-injection', () => {
  test('replaces data of a core ConfigMap, keeping comments of kept keys, and records condition and gate', () => {
    const out = run(`${kptfile}---\n${endpoints}`, pv('- name: us-east1-endpoints'), cluster)
    expect(out.exitCode).toBe(0)
    expect(out.items[0]).toBe(source`
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: endpoints
        annotations:
          kpt.dev/config-injection: required
          internal.config.kubernetes.io/path: endpoints.yaml
          kpt.dev/injected-resource: us-east1-endpoints
          kpt.dev/injected-resource-name: us-east1-endpoints
      data:
        # the regional API
        api: https://api.us-east1.example.com # placeholder
        metrics: https://m.us-east1.example.com
    `)
    expect(out.kptfile).toMatchObject({
      info: { readinessGates: [{ conditionType: 'config.injection.ConfigMap.endpoints' }] },
      status: {
        conditions: [
          {
            type: 'config.injection.ConfigMap.endpoints',
            status: 'True',
            reason: 'ConfigInjected',
            message: 'injected resource "us-east1-endpoints" from cluster',
          },
        ],
      },
    })
  })

  test.each([
    ['no injectors defined', team('optional'), pv('[]'), 'no injectors defined'],
    [
      'no candidates of that type in the namespace',
      endpoints,
      pv('- name: eu-endpoints', 'dev'),
      'no in-cluster resources of type v1.ConfigMap',
    ],
    [
      'no injector matches',
      endpoints,
      pv('- name: missing'),
      'no resource matched any injection selector for this injection point',
    ],
    [
      'a kind mismatch skips the injector',
      team('optional'),
      pv('- {kind: ConfigMap, name: platform}'),
      'no resource matched any injection selector for this injection point',
    ],
    [
      'the selected object has no spec',
      team('optional'),
      pv('- name: nospec\n- name: platform'),
      'field "spec" not found in resource "nospec"',
    ],
  ])('not injected: %s', (_, point, config, message) => {
    const out = run(`${kptfile}---\n${point}`, config, cluster)
    expect(out.exitCode).toBe(0)
    expect(out.items[0]).toBe(point)
    expect(out.kptfile).toMatchObject({
      status: { conditions: [{ status: 'False', reason: 'NoResourceSelected', message }] },
    })
    expect(Boolean(out.kptfile?.info)).toBe(point.includes('required'))
  })

  test('the first applicable injector wins; group "" means the core group only', () => {
    const out = run(
      `${kptfile}---\n${team('optional')}`,
      pv(
        '- {group: "", name: platform}\n- {group: example.com, version: v1, kind: Team, name: platform}\n- name: nospec',
      ),
      cluster,
    )
    expect(out.items[0]).toContain('owner: alice')
    expect(out.items[0]).toContain('kpt.dev/injected-resource: platform')
    expect(out.kptfile).toMatchObject({ status: { conditions: [{ reason: 'ConfigInjected' }] } })
    expect(out.kptfile?.info).toBeUndefined()
  })

  test('keeps existing conditions and gates, sorted', () => {
    const withStatus = `${kptfile}info:\n  readinessGates:\n  - conditionType: z.gate\n  - conditionType: a.gate\nstatus:\n  conditions:\n  - type: z.other\n    status: "True"\n`
    const first = run(`${withStatus}---\n${endpoints}`, pv('- name: eu-endpoints'), cluster)
    expect(first.kptfile).toMatchObject({
      info: {
        readinessGates: [
          { conditionType: 'a.gate' },
          { conditionType: 'config.injection.ConfigMap.endpoints' },
          { conditionType: 'z.gate' },
        ],
      },
      status: { conditions: [{ type: 'config.injection.ConfigMap.endpoints' }, { type: 'z.other' }] },
    })
  })

  test.each([
    [
      'an invalid annotation value',
      `${kptfile}---\n${team('Required')}`,
      pv('- name: platform'),
      [
        {
          message:
            'errors in injection points: team.yaml: Team/team has invalid "kpt.dev/config-injection" annotation value of "Required"',
          field: { path: 'metadata.annotations.kpt.dev/config-injection' },
          resourceRef: { kind: 'Team', name: 'team' },
        },
      ],
    ],
    [
      'duplicate condition types',
      `${kptfile}---\n${team('optional')}---\n${team('required').replace('team.yaml', 'b.yaml')}---\n${team('required').replace('team.yaml', 'c.yaml')}`,
      pv('- name: platform'),
      [
        {
          message:
            'errors in injection points: duplicate injection conditionType "config.injection.Team.team" (team.yaml and b.yaml)',
        },
        {
          message:
            'errors in injection points: duplicate injection conditionType "config.injection.Team.team" (b.yaml and c.yaml)',
        },
      ],
    ],
    [
      'an injector without a name',
      `${kptfile}---\n${team('optional')}`,
      pv('- kind: Team\n- name: ""'),
      [
        {
          message: 'spec.injectors[0].name must not be empty',
          field: { path: 'spec.injectors[0].name' },
          resourceRef: { kind: 'PackageVariant' },
        },
        { message: 'spec.injectors[1].name must not be empty' },
      ],
    ],
    ['no Kptfile', team('optional'), pv('- name: platform'), [{ message: '"Kptfile" not found in the package' }]],
  ])('fails on %s, leaving the package unchanged', (_, items, config, results) => {
    const out = run(items, config, cluster)
    expect(out.exitCode).toBe(1)
    expect(out.results).toMatchObject(results.map((r) => ({ severity: 'error', ...r })))
    expect(out.items.join('')).not.toContain('injected-resource')
  })
})
