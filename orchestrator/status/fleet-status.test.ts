import { fleetStatus, formatStatus } from './fleet-status.js'
import type { OutputState, StoredState } from './fleet-status.js'
import { nginxRevision as revision } from '../../test/support/unit-fleet.js'

const variant = (cluster: string, n = 2) => ({
  key: `default/nginx-${cluster}`,
  downstream: { repo: cluster, package: 'nginx' },
  upstream: revision(n),
})
const lock = (n: number) => ({ repo: '../repos/blueprints', directory: '/nginx', ref: `nginx/v${n}`, commit: `c${n}` })

const plan = {
  variants: [variant('edge-02'), variant('edge-01'), variant('edge-03')],
  failures: [
    {
      subject: 'PackageVariant default/broken',
      code: 'UpstreamNotFound' as const,
      message: 'could not find upstream package revision',
      downstream: 'edge-03/broken',
    },
  ],
}

function output(
  kind: OutputState['output'],
  packages: Record<string, StoredState>,
  dependencies: Record<string, StoredState> = {},
): OutputState {
  return {
    output: kind,
    packages: new Map(Object.entries(packages)),
    dependencies: new Map(Object.entries(dependencies)),
    repositories: [],
  }
}

describe('fleetStatus', () => {
  test('--out: each package against the wanted revision, its local edits, the dependencies a render installed, the last failures', () => {
    const status = fleetStatus(
      plan,
      output(
        'directory',
        {
          'edge-01/nginx': { record: { lock: lock(2) }, edits: { state: 'none' } },
          'edge-02/nginx': { record: { lock: lock(1) }, edits: { state: 'edited' } },
        },
        {
          'edge-01/cert-manager': {
            record: { installedAsDependency: true, lock: { ...lock(2), ref: 'cert-manager/v2' } },
            manifest: { name: 'cert-manager', version: 'v1.14.4' },
            edits: { state: 'unknown', reason: 'no record' },
          },
        },
      ),
      {
        'PackageVariant default/nginx-edge-02': {
          time: '2026-01-01T00:00:00Z',
          reasons: [
            { code: 'MergeConflict', message: '3-way merge failed' },
            { code: 'MergeConflict', message: 'conflict' },
          ],
        },
      },
    )
    expect(status).toMatchObject({ kind: 'FleetStatus', output: 'directory', repositories: [] })
    expect(status.variants).toEqual([
      {
        variant: 'Dependency edge-01/cert-manager',
        package: 'edge-01/cert-manager',
        renderedUpstream: 'cert-manager/v2',
        state: 'installed',
        dependency: { name: 'cert-manager', version: 'v1.14.4' },
        localEdits: 'unknown',
        localEditsReason: 'no record',
      },
      {
        variant: 'default/nginx-edge-01',
        package: 'edge-01/nginx',
        upstream: 'blueprints/nginx v2 (nginx/v2)',
        renderedUpstream: 'nginx/v2',
        state: 'current',
        localEdits: 'none',
      },
      {
        variant: 'default/nginx-edge-02',
        package: 'edge-02/nginx',
        upstream: 'blueprints/nginx v2 (nginx/v2)',
        renderedUpstream: 'nginx/v1',
        state: 'behind',
        localEdits: 'edited',
        lastFailure: '2026-01-01T00:00:00Z: 3-way merge failed; conflict',
        failures: [
          { code: 'MergeConflict', message: '3-way merge failed' },
          { code: 'MergeConflict', message: 'conflict' },
        ],
      },
      {
        variant: 'default/broken',
        package: 'edge-03/broken',
        lastFailure: 'could not find upstream package revision',
        failures: [{ code: 'UpstreamNotFound', message: 'could not find upstream package revision' }],
      },
      {
        variant: 'default/nginx-edge-03',
        package: 'edge-03/nginx',
        upstream: 'blueprints/nginx v2 (nginx/v2)',
        state: 'unrendered',
      },
    ])
    expect(formatStatus(status)).toBe(
      [
        'PACKAGE               VARIANT                          EDITS    UPSTREAM',
        'edge-01/cert-manager  Dependency edge-01/cert-manager  unknown  installed: cert-manager v1.14.4 (cert-manager/v2)',
        'edge-01/nginx         default/nginx-edge-01            none     current: blueprints/nginx v2 (nginx/v2)',
        'edge-02/nginx         default/nginx-edge-02            edited   behind: nginx/v1 -> blueprints/nginx v2 (nginx/v2)',
        'edge-03/broken        default/broken                   -        -',
        'edge-03/nginx         default/nginx-edge-03            -        unrendered: blueprints/nginx v2 (nginx/v2)',
        '',
        'Last failures:',
        '  edge-02/nginx: 2026-01-01T00:00:00Z: 3-way merge failed; conflict [MergeConflict]',
        '  edge-03/broken: could not find upstream package revision [UpstreamNotFound]',
        '',
        'Local edits unknown:',
        '  1 package(s): no record',
        '',
      ].join('\n'),
    )
  })

  test('--git: the published revision and the upstream it came from, the open draft; a dependency only drafted is unpublished', () => {
    const status = fleetStatus(
      { variants: [variant('edge-01'), variant('edge-02')], failures: [] },
      output(
        'git',
        {
          'edge-01/nginx': {
            record: { lock: lock(1) },
            published: 'nginx/v1',
            draft: 'drafts/nginx/packagevariant-2',
            edits: { state: 'edited', reason: '1 commit(s) on main changed it since nginx/v1' },
          },
          'edge-02/nginx': { draft: 'drafts/nginx/packagevariant-1' },
        },
        {
          'edge-02/cert-manager': {
            draft: 'drafts/cert-manager/packagevariant-1',
            manifest: { name: 'cert-manager', version: 'v1.14.4' },
          },
        },
      ),
      {},
    )
    expect(status.variants).toEqual([
      {
        variant: 'default/nginx-edge-01',
        package: 'edge-01/nginx',
        upstream: 'blueprints/nginx v2 (nginx/v2)',
        published: 'nginx/v1',
        draft: 'drafts/nginx/packagevariant-2',
        publishedUpstream: 'nginx/v1',
        state: 'behind',
        localEdits: 'edited',
        localEditsReason: '1 commit(s) on main changed it since nginx/v1',
      },
      {
        variant: 'Dependency edge-02/cert-manager',
        package: 'edge-02/cert-manager',
        draft: 'drafts/cert-manager/packagevariant-1',
        state: 'unpublished',
        dependency: { name: 'cert-manager', version: 'v1.14.4' },
      },
      {
        variant: 'default/nginx-edge-02',
        package: 'edge-02/nginx',
        upstream: 'blueprints/nginx v2 (nginx/v2)',
        draft: 'drafts/nginx/packagevariant-1',
        state: 'unpublished',
      },
    ])
    expect(formatStatus(status).split('\n').slice(0, 4)).toEqual([
      'PACKAGE               VARIANT                          PUBLISHED  DRAFT                                 EDITS   UPSTREAM',
      'edge-01/nginx         default/nginx-edge-01            nginx/v1   drafts/nginx/packagevariant-2         edited  behind: nginx/v1 -> blueprints/nginx v2 (nginx/v2)',
      'edge-02/cert-manager  Dependency edge-02/cert-manager  -          drafts/cert-manager/packagevariant-1  -       unpublished: cert-manager v1.14.4',
      'edge-02/nginx         default/nginx-edge-02            -          drafts/nginx/packagevariant-1         -       unpublished: blueprints/nginx v2 (nginx/v2)',
    ])
  })

  test('a package whose Kptfile records no upstream is behind, from none', () => {
    const status = fleetStatus(
      { variants: [variant('edge-01')], failures: [] },
      output('directory', { 'edge-01/nginx': { record: {} } }),
      {},
    )
    expect(status.variants[0]).toMatchObject({ state: 'behind', renderedUpstream: 'none' })
  })
})
