/** `kpt-variants deps`, pure: the graph of a repository, its tree, why a package is there, whether it can go, what is outdated. */
import type { Dependency } from '../../functions/api/dependencies.js'
import { canDelete, explain, findHeld, formatOutdated, formatTree, outdated, repositoryGraph } from './deps.js'
import type { HeldPackage } from './deps.js'

const needs = (name: string, version = ''): Dependency => ({ type: 'Package', name, version, optional: false })
const api = (kind: string): Dependency => ({
  type: 'GVK',
  gvk: { apiVersion: 'monitoring.coreos.com/v1', kind },
  optional: false,
})

/** edge-05: nginx (its variant's) needs cert-manager >=1.13.0 and ServiceMonitor; cert-manager and prometheus-operator installed for it; an old one nothing needs. */
const held: HeldPackage[] = [
  {
    path: 'edge-05/nginx',
    name: 'nginx',
    version: 'v2.0.0',
    held: 'variant',
    owner: 'default/nginx-edge-05-nginx',
    dependencies: [needs('cert-manager', '>=1.13.0'), api('ServiceMonitor')],
    provides: [],
  },
  {
    path: 'edge-05/cert-manager',
    name: 'cert-manager',
    version: 'v1.14.4',
    held: 'dependency',
    dependencies: [],
    provides: [],
  },
  {
    path: 'edge-05/prometheus-operator',
    name: 'prometheus-operator',
    version: 'v0.70.0',
    held: 'dependency',
    dependencies: [needs('cert-manager', '^1')],
    provides: [{ apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor' }],
  },
  {
    path: 'edge-05/old-agent',
    name: 'old-agent',
    version: 'v0.1.0',
    held: 'dependency',
    dependencies: [],
    provides: [],
  },
]
const graph = repositoryGraph('edge-05', held)

describe('deps', () => {
  test('the tree: packages nothing needs on top, what each needs below, each in full once', () => {
    expect(formatTree(graph, 'its published branch')).toBe(
      [
        'edge-05 (its published branch)',
        '├─┬ nginx v2.0.0  [the package of PackageVariant default/nginx-edge-05-nginx]',
        '│ ├── cert-manager v1.14.4 (>=1.13.0)  [installed as a dependency]',
        '│ └─┬ prometheus-operator v0.70.0  [installed as a dependency]',
        '│   └── cert-manager v1.14.4 (^1) (see above)',
        '└── old-agent v0.1.0  [installed as a dependency, and nothing needs it: the next render removes it]',
        '',
      ].join('\n'),
    )
  })

  test('a missing or out-of-range dependency is marked', () => {
    const broken = repositoryGraph('edge-05', [
      { ...held[0]!, dependencies: [needs('cert-manager', '>=2'), needs('istio')] },
      held[1]!,
    ])
    const tree = formatTree(broken, 'x')
    expect(tree).toContain('├── cert-manager v1.14.4 (>=2) INVALID: outside the range  [installed as a dependency]')
    expect(tree).toContain('└── istio * MISSING')
  })

  test('--why: every chain of dependants up to a package nothing needs', () => {
    expect(explain(graph, findHeld(graph, 'cert-manager')!)).toBe(
      [
        'cert-manager v1.14.4 (edge-05/cert-manager): installed as a dependency',
        '  needed by nginx v2.0.0 (>=1.13.0): the package of PackageVariant default/nginx-edge-05-nginx',
        '  needed by prometheus-operator v0.70.0 (^1)',
        '    needed by nginx v2.0.0 (monitoring.coreos.com/v1/ServiceMonitor): the package of PackageVariant default/nginx-edge-05-nginx',
        '',
      ].join('\n'),
    )
    expect(explain(graph, findHeld(graph, 'old-agent')!)).toContain('  nothing in the repository needs it')
  })

  test('--can-delete: not while something needs it that nothing else would serve; a variant’s own package says whose it is', () => {
    expect(canDelete(graph, findHeld(graph, 'cert-manager')!)).toEqual({
      ok: false,
      blocking: [
        'nginx v2.0.0 (edge-05/nginx) needs cert-manager >=1.13.0',
        'prometheus-operator v0.70.0 (edge-05/prometheus-operator) needs cert-manager ^1',
      ],
      notes: [],
    })
    expect(canDelete(graph, findHeld(graph, 'old-agent')!)).toEqual({ ok: true, blocking: [], notes: [] })
    // Another package serving the same API: the API dependency does not block.
    const twice = repositoryGraph('edge-05', [
      ...held,
      { ...held[2]!, path: 'edge-05/prom-fork', name: 'prom-fork', dependencies: [] },
    ])
    expect(canDelete(twice, findHeld(twice, 'prometheus-operator')!).ok).toBe(true)
    expect(canDelete(graph, findHeld(graph, 'nginx')!).notes).toEqual([
      "it is the package of PackageVariant default/nginx-edge-05-nginx: delete that PackageVariant (or its set's target), or the next render puts it back",
    ])
  })

  test('--outdated: below the newest its constraints allow, or the newest published; pins and variants constrain too', () => {
    const versions = new Map([
      ['cert-manager', ['v1.12.3', 'v1.14.4', 'v1.15.0', 'v2.0.0', 'v2.1.0-rc.1']],
      ['nginx', ['v1.0.0', 'v2.0.0', 'v3.0.0']],
      ['old-agent', ['v0.1.0']],
    ])
    const rows = outdated(
      graph,
      versions,
      new Map([['nginx', [{ range: '^2', by: 'its PackageVariant follows "^2"' }]]]),
      'Exclude',
    )
    expect(rows.map((r) => [r.package, r.current, r.wanted, r.latest, r.constrainedBy])).toEqual([
      ['cert-manager', 'v1.14.4', 'v1.15.0', 'v2.0.0', ['nginx >=1.13.0', 'prometheus-operator ^1']],
      ['nginx', 'v2.0.0', 'v2.0.0', 'v3.0.0', ['its PackageVariant follows "^2"']],
    ])
    expect(formatOutdated(rows).split('\n')[0]).toBe(
      'REPOSITORY  PACKAGE       CURRENT  WANTED   LATEST  HELD        CONSTRAINED BY',
    )
    expect(outdated(graph, versions, new Map(), 'Include').find((r) => r.package === 'cert-manager')?.latest).toBe(
      'v2.1.0-rc.1',
    )
    expect(formatOutdated([])).toBe('Every package is at the newest version published.\n')
  })
})
