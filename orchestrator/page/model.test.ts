import { gunzipSync } from 'node:zlib'
import type { VariantReport } from '../report/report.js'
import { fleetPageHtml } from './html.js'
import { dependenciesFromVariants, modelFromReport, modelFromStatus, reportState } from './model.js'

function variant(path: string, fields: Partial<VariantReport> = {}): VariantReport {
  return {
    subject: `PackageVariant default/${path.replace('/', '-')}`,
    path,
    status: 'updated',
    upstream: 'blueprints/nginx v2',
    reasons: [],
    warnings: [],
    conflicts: [],
    ...fields,
  }
}

const conflict = {
  file: 'd.yaml',
  resource: 'Deployment web/nginx',
  field: 'spec.replicas',
  local: '5',
  upstream: '3',
  origin: '2',
  resolution: 'upstream' as const,
}

describe('the version a variant follows', () => {
  it('is on the page from a render and from status alike: the version, its constraint, the newest beyond it', () => {
    const upstreamVersion = { constraint: '^1', version: 'v1.1.0', newest: 'v2.0.0' }
    const fromReport = modelFromReport(
      {
        dryRun: false,
        problems: [],
        variants: [variant('edge-01/nginx', { upstreamVersion }), variant('edge-02/nginx')],
      },
      't',
    )
    expect(fromReport.variants.map((v) => [v.follows, v.newest])).toEqual([
      ['v1.1.0 by "^1"', 'v2.0.0'],
      [undefined, undefined],
    ])
    const fromStatus = modelFromStatus(
      {
        variants: [
          { variant: 'default/a', package: 'edge-01/nginx', upstreamVersion: { constraint: '^1', version: 'v2.0.0' } },
        ],
      },
      't',
    )
    expect(fromStatus.variants[0]).toMatchObject({ follows: 'v2.0.0 by "^1"' })
    expect(fromStatus.variants[0]).not.toHaveProperty('newest')
  })
})

describe('modelFromReport', () => {
  it('keeps every field of the report a page shows, with the state and the conditions render --cluster would write', () => {
    const model = modelFromReport(
      {
        dryRun: true,
        problems: ['clusters.yaml: not YAML'],
        variants: [
          variant('edge-01/nginx', {
            set: 'default/nginx',
            labels: { region: 'us-east1' },
            injected: ['ConfigMap e <- us-east1-endpoints'],
            diff: '--- a\n+++ b\n',
          }),
          variant('edge-02/nginx', {
            status: 'failed',
            reasons: [
              {
                code: 'DependencyUnresolved',
                message: 'dependency nginx -> cert-manager in repository edge-02: missing',
              },
            ],
          }),
        ],
      },
      'title',
    )
    expect(model).toMatchObject({
      source: 'render',
      title: 'title',
      dryRun: true,
      problems: ['clusters.yaml: not YAML'],
    })
    expect(model.variants[0]).toEqual({
      repo: 'edge-01',
      package: 'nginx',
      subject: 'PackageVariant default/edge-01-nginx',
      set: 'default/nginx',
      state: 'updated',
      labels: { region: 'us-east1' },
      upstream: 'blueprints/nginx v2',
      injected: ['ConfigMap e <- us-east1-endpoints'],
      reasons: [],
      warnings: [],
      conflicts: [],
      conditions: [
        { type: 'Stalled', status: 'False', reason: 'Valid', message: 'all validation checks passed' },
        {
          type: 'Ready',
          status: 'True',
          reason: 'NoErrors',
          message: 'successfully ensured downstream package variant',
        },
      ],
      dependencyPlan: [],
      diff: '--- a\n+++ b\n',
    })
    expect(model.variants[1]).toMatchObject({
      state: 'failed',
      dependencyPlan: ['dependency nginx -> cert-manager in repository edge-02: missing'],
    })
    expect(model.variants[1]!.conditions[1]).toMatchObject({ type: 'Ready', status: 'False', reason: 'Error' })
  })

  it('classifies: failure, conflicts, a rollout hold, a tag, a draft, then what the render did', () => {
    expect(reportState(variant('a/b', { status: 'failed', conflicts: [conflict] }))).toBe('failed')
    expect(reportState(variant('a/b', { conflicts: [conflict], draft: 'drafts/b/x' }))).toBe('conflicts')
    expect(reportState({ ...variant('a/b', { draft: 'drafts/b/x' }), heldBy: 'canary' })).toBe('held')
    expect(reportState(variant('a/b', { draft: 'drafts/b/x', published: 'b/v2' }))).toBe('published')
    expect(reportState(variant('a/b', { draft: 'drafts/b/x' }))).toBe('draft')
    expect(reportState(variant('a/b', { status: 'orphaned' }))).toBe('orphaned')
  })

  it('a package not ready is its own state, with the gates in its detail and conditions; published anyway, it is published', () => {
    const notReady = 'not ready: config.injection.ConfigMap.region-endpoints False: no resource matched'
    const model = modelFromReport(
      {
        dryRun: false,
        problems: [],
        variants: [variant('edge-01/nginx', { draft: 'drafts/nginx/packagevariant-1', held: notReady, notReady })],
      },
      't',
    )
    expect(model.variants[0]).toMatchObject({ state: 'not-ready', notReady })
    expect(model.variants[0]!.conditions[1]).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'NotReady',
      message: notReady,
    })
    expect(reportState(variant('a/b', { published: 'b/v1', notReady }))).toBe('published')
    const status = modelFromStatus({ variants: [{ variant: 'default/x', package: 'edge-01/nginx', notReady }] }, 't')
    expect(status.variants[0]).toMatchObject({ state: 'not-ready', notReady })
  })

  it('takes the dependency graph from the report when it has one, else the packages of each repository', () => {
    const repositories = [
      {
        name: 'edge-01',
        packages: [
          {
            name: 'nginx',
            version: 'v2.0.0',
            installedAsDependency: false,
            requires: [{ name: 'cert-manager', range: '>= v1.13.0' }],
          },
        ],
      },
    ]
    expect(
      modelFromReport(
        { dryRun: false, problems: [], variants: [variant('edge-01/nginx')], dependencies: repositories },
        't',
      ).repositories,
    ).toBe(repositories)
    const model = modelFromReport(
      {
        dryRun: false,
        problems: [],
        variants: [
          variant('edge-02/nginx'),
          variant('edge-01/web'),
          variant('edge-01/nginx'),
          variant('edge-01/old', { status: 'deleted' }),
        ],
      },
      't',
    )
    expect(dependenciesFromVariants(model.variants)).toEqual([
      {
        name: 'edge-01',
        packages: [
          { name: 'web', version: 'v2', installedAsDependency: false, requires: [] },
          { name: 'nginx', version: 'v2', installedAsDependency: false, requires: [] },
        ],
      },
      { name: 'edge-02', packages: [{ name: 'nginx', version: 'v2', installedAsDependency: false, requires: [] }] },
    ])
  })
})

describe('modelFromStatus', () => {
  it('maps the status rows: a last failure, an open draft, behind, published, never published', () => {
    const model = modelFromStatus(
      {
        variants: [
          {
            variant: 'default/a',
            package: 'edge-01/a',
            state: 'current',
            published: 'a/v2',
            lastFailure: '2026-01-01T00:00:00Z: boom',
            failures: [{ code: 'FunctionFailed', message: 'boom' }],
          },
          { variant: 'default/b', package: 'edge-01/b', state: 'behind', published: 'b/v1', draft: 'drafts/b/v2' },
          {
            variant: 'default/c',
            package: 'edge-01/c',
            state: 'behind',
            published: 'c/v1',
            publishedUpstream: 'nginx/v1',
            upstream: 'blueprints/nginx v2 (nginx/v2)',
          },
          { variant: 'default/d', package: 'edge-02/d', state: 'current', published: 'd/v3' },
          { variant: 'default/e', package: 'edge-02/e', state: 'unpublished' },
        ],
      },
      'status',
    )
    expect(model.variants.map((v) => v.state)).toEqual(['failed', 'draft', 'behind', 'published', 'unpublished'])
    expect(model.variants[0]).toMatchObject({
      repo: 'edge-01',
      package: 'a',
      reasons: [{ code: 'FunctionFailed', message: 'boom' }],
      conditions: [{ type: 'Ready', status: 'False' }],
    })
    expect(model.variants[2]).toMatchObject({
      previousUpstream: 'nginx/v1',
      upstream: 'blueprints/nginx v2 (nginx/v2)',
    })
    expect(model.repositories.map((r) => r.name)).toEqual(['edge-01', 'edge-02'])
  })

  it('maps the rows of an output directory: behind, edited, current, not rendered; a dependency installed; the graphs as read', () => {
    const repositories = [
      {
        name: 'edge-01',
        packages: [{ name: 'cert-manager', version: 'v1.14.4', installedAsDependency: true, requires: [] }],
      },
    ]
    const model = modelFromStatus(
      {
        output: 'directory',
        variants: [
          {
            variant: 'default/a',
            package: 'edge-01/a',
            state: 'behind',
            renderedUpstream: 'nginx/v1',
            upstream: 'blueprints/nginx v2 (nginx/v2)',
            localEdits: 'edited',
          },
          {
            variant: 'default/b',
            package: 'edge-01/b',
            state: 'current',
            renderedUpstream: 'nginx/v2',
            localEdits: 'edited',
          },
          {
            variant: 'default/c',
            package: 'edge-01/c',
            state: 'current',
            renderedUpstream: 'nginx/v2',
            localEdits: 'unknown',
            localEditsReason: 'no record',
          },
          { variant: 'default/d', package: 'edge-02/d', state: 'unrendered' },
          {
            variant: 'Dependency edge-01/cert-manager',
            package: 'edge-01/cert-manager',
            state: 'installed',
            renderedUpstream: 'cert-manager/v2',
            dependency: { name: 'cert-manager', version: 'v1.14.4' },
          },
        ],
        repositories,
      },
      'status',
    )
    expect(model.variants.map((v) => v.state)).toEqual(['behind', 'edited', 'current', 'unrendered', 'installed'])
    expect(model.variants[0]).toMatchObject({
      previousUpstream: 'nginx/v1',
      rendered: 'nginx/v1',
      localEdits: 'edited',
    })
    expect(model.variants[2]).toMatchObject({ rendered: 'nginx/v2', localEdits: 'unknown: no record' })
    expect(model.variants[2]!.previousUpstream).toBeUndefined()
    expect(model.variants[4]).toMatchObject({
      subject: 'Dependency edge-01/cert-manager',
      version: 'v1.14.4',
      rendered: 'cert-manager/v2',
    })
    expect(model.repositories).toBe(repositories)
  })
})

describe('fleetPageHtml', () => {
  const assets = { script: 'window.started = "</script>"', css: 'body{}</style>' }
  const model = modelFromReport(
    {
      dryRun: true,
      problems: [],
      variants: [
        variant('edge-01/nginx', { diff: 'one </script><!--' }),
        variant('edge-02/nginx'),
        variant('edge-03/nginx', { diff: 'three' }),
      ],
    },
    'fleet <b>',
  )

  function embedded(html: string, id: string): any {
    const match = new RegExp(`<script id="${id}" type="application/json">(.*?)</script>`).exec(html)
    return JSON.parse(match![1]!)
  }

  it('embeds the model once as JSON, the diffs as gzip chunks, and nothing that could end a script or style early', () => {
    const html = fleetPageHtml(model, assets)
    expect(html).toContain('<title>fleet &lt;b&gt;</title>')
    expect(html.match(/<\/script>/g)).toHaveLength(3)
    expect(html.match(/<\/style>/g)).toHaveLength(1)
    expect(html).not.toMatch(/<(link|img|iframe)\b|src=|href=|https?:/)
    const page = embedded(html, 'fleet-model')
    expect(page.variants.map((v: any) => [v.repo, v.diffRef, v.diff])).toEqual([
      ['edge-01', 0, undefined],
      ['edge-02', undefined, undefined],
      ['edge-03', 1, undefined],
    ])
    const { chunkSize, chunks } = embedded(html, 'fleet-diffs')
    expect(chunkSize).toBe(64)
    expect(JSON.parse(gunzipSync(Buffer.from(chunks[0], 'base64')).toString('utf8'))).toEqual([
      'one </script><!--',
      'three',
    ])
  })
})
