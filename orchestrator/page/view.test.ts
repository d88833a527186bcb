import type { PageVariant } from './types.js'
import {
  buildMatrix,
  cellState,
  cellText,
  countStates,
  defaultColumns,
  failureGroups,
  filterVariants,
  labelOptions,
  layoutGraph,
  noFilter,
  rowWindow,
  searchIndex,
} from './view.js'

function v(repo: string, pkg: string, state: PageVariant['state'], fields: Partial<PageVariant> = {}): PageVariant {
  return {
    repo,
    package: pkg,
    subject: `PackageVariant default/${repo}-${pkg}`,
    state,
    labels: {},
    injected: [],
    reasons: [],
    warnings: [],
    conflicts: [],
    conditions: [],
    dependencyPlan: [],
    upstream: 'blueprints/nginx v2',
    ...fields,
  }
}

const fleet = [
  v('edge-01', 'nginx', 'updated', { set: 'default/nginx', labels: { region: 'us-east1' } }),
  v('edge-01', 'redis', 'failed', {
    set: 'default/redis',
    upstream: 'blueprints/redis v1',
    labels: { region: 'us-east1' },
    reasons: [{ code: 'FunctionFailed', message: 'exit 1' }],
  }),
  v('edge-02', 'nginx', 'conflicts', { set: 'default/nginx', labels: { region: 'eu-west1' } }),
  v('core-01', 'nginx', 'unchanged', { set: 'default/nginx', labels: { region: 'eu-west1', tier: 'core' } }),
  v('', '', 'failed', {
    subject: 'PackageVariantSet default/broken target WorkloadCluster "x"',
    reasons: [
      { code: 'UnexpectedError', message: 'a' },
      { code: 'FunctionFailed', message: 'b' },
    ],
  }),
]
const index = searchIndex(fleet)
const kept = (filter: Partial<typeof noFilter>) => filterVariants(fleet, index, { ...noFilter, ...filter })

describe('filterVariants', () => {
  it('keeps everything without a filter', () => expect(kept({})).toEqual([0, 1, 2, 3, 4]))
  it('by state', () => expect(kept({ states: new Set(['failed', 'conflicts'] as const) })).toEqual([1, 2, 4]))
  it('by repository, exact or by prefix', () => {
    expect(kept({ repo: 'edge-01' })).toEqual([0, 1])
    expect(kept({ repo: 'edge-0' })).toEqual([])
    expect(kept({ repo: 'edge-*' })).toEqual([0, 1, 2])
  })
  it('by failure code, which the search finds too; the failures grouped by code, the most frequent first', () => {
    expect(kept({ failure: 'FunctionFailed' })).toEqual([1, 4])
    expect(kept({ failure: 'UnexpectedError' })).toEqual([4])
    expect(kept({ text: 'unexpectederror' })).toEqual([4])
    expect(failureGroups(fleet)).toEqual([
      { code: 'FunctionFailed', count: 2 },
      { code: 'UnexpectedError', count: 1 },
    ])
  })
  it('by label, its key alone or key=value', () => {
    expect(kept({ label: 'region=eu-west1' })).toEqual([2, 3])
    expect(kept({ label: 'tier' })).toEqual([3])
    expect(kept({ label: 'constructor' })).toEqual([])
  })
  it('by every word of the search, anywhere, case-insensitively', () => {
    expect(kept({ text: 'NGINX edge' })).toEqual([0, 2])
    expect(kept({ text: 'broken' })).toEqual([4])
    expect(kept({ text: 'tier=core' })).toEqual([3])
    const edited = [
      v('edge-01', 'nginx', 'behind', { localEdits: 'edited' }),
      v('edge-02', 'nginx', 'current', { localEdits: 'none' }),
    ]
    expect(filterVariants(edited, searchIndex(edited), { ...noFilter, text: 'edited' })).toEqual([0])
  })
  it('by all of them at once', () =>
    expect(kept({ text: 'nginx', repo: 'edge-*', states: new Set(['conflicts'] as const) })).toEqual([2]))
})

describe('the matrix', () => {
  it('has a row per repository and a column per package, the fullest first', () => {
    const m = buildMatrix(fleet, [0, 1, 2, 3, 4], 'package')
    expect(m.columns).toEqual(['nginx', '(no package)', 'redis'])
    expect(m.rows.map((r) => [r.repo, r.cells])).toEqual([
      ['(no repository)', [[], [4], []]],
      ['core-01', [[3], [], []]],
      ['edge-01', [[0], [], [1]]],
      ['edge-02', [[2], [], []]],
    ])
  })
  it('or a column per PackageVariantSet', () =>
    expect(buildMatrix(fleet, [0, 1, 2, 3], 'set').columns).toEqual(['default/nginx', 'default/redis']))
  it('only of the kept variants', () =>
    expect(buildMatrix(fleet, [1], 'package').rows).toEqual([{ repo: 'edge-01', cells: [[1]] }]))
  it('chooses sets as columns only when packages would be too many', () => {
    expect(defaultColumns(fleet)).toBe('package')
    const many = Array.from({ length: 40 }, (_, i) => v(`r${i}`, `pkg-${i}`, 'created', { set: 'default/all' }))
    expect(defaultColumns(many)).toBe('set')
  })
  it('shows the most urgent state of a cell, and its revision or how many variants it holds', () => {
    expect(cellState(fleet, [0, 2, 3])).toBe('conflicts')
    expect(cellState(fleet, [])).toBeUndefined()
    expect(cellText(fleet, [0])).toBe('updated v2')
    expect(cellText([v('a', 'b', 'published', { published: 'b/v3' })], [0])).toBe('published v3')
    // status --out: the revision the package holds, not the one it should.
    expect(cellText([v('a', 'b', 'behind', { rendered: 'nginx/v1' })], [0])).toBe('behind v1')
    expect(cellText(fleet, [0, 3])).toBe('2 variants')
  })
  it('counts states and lists labels', () => {
    expect(countStates(fleet, [0, 1, 2, 4])).toMatchObject({ failed: 2, conflicts: 1, updated: 1, unchanged: 0 })
    expect(labelOptions(fleet)).toEqual(['region=eu-west1', 'region=us-east1', 'tier=core'])
  })
})

describe('rowWindow', () => {
  it('is the rows in view and the overscan around them, within the rows there are', () => {
    expect(rowWindow(0, 280, 28, 10_000, 10)).toEqual({ start: 0, end: 20 })
    expect(rowWindow(28 * 5000, 280, 28, 10_000, 10)).toEqual({ start: 4990, end: 5020 })
    expect(rowWindow(28 * 9995, 280, 28, 10_000, 10)).toEqual({ start: 9985, end: 10_000 })
    expect(rowWindow(0, 280, 28, 0)).toEqual({ start: 0, end: 0 })
  })
})

describe('layoutGraph', () => {
  it('puts a package right of what it requires, and draws a requirement nothing meets as missing', () => {
    const layout = layoutGraph({
      name: 'edge-01',
      packages: [
        {
          name: 'nginx',
          version: 'v2.0.0',
          installedAsDependency: false,
          requires: [{ name: 'cert-manager', range: '>= v1.13.0' }],
        },
        {
          name: 'cert-manager',
          version: 'v1.14.4',
          installedAsDependency: true,
          requires: [{ name: 'crds', range: '*' }],
        },
        { name: 'loop-a', installedAsDependency: false, requires: [{ name: 'loop-b', range: '1' }] },
        { name: 'loop-b', installedAsDependency: false, requires: [{ name: 'loop-a', range: '1' }] },
      ],
    })
    const node = (name: string) => layout.nodes.find((n) => n.name === name)!
    expect(node('crds')).toMatchObject({ missing: true, x: 10 })
    expect(node('cert-manager')).toMatchObject({
      label: 'cert-manager v1.14.4',
      installedAsDependency: true,
      missing: false,
    })
    expect(node('cert-manager').x).toBeGreaterThan(node('crds').x)
    expect(node('nginx').x).toBeGreaterThan(node('cert-manager').x)
    // A cycle is cut where it closes: both ends are placed.
    expect(node('loop-a').x).not.toBe(node('loop-b').x)
    const edge = layout.edges.find((e) => e.from === 'nginx')!
    expect(edge).toMatchObject({ to: 'cert-manager', range: '>= v1.13.0', x1: node('nginx').x })
    for (const n of layout.nodes) expect(n.x + 170).toBeLessThanOrEqual(layout.width)
  })
})
