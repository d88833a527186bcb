import { nextWorkspace } from './write.js'
import { draftDeclaration, draftMessage } from './messages.js'

describe('draft commit messages', () => {
  test('name the PackageVariant, the upstream revisions, injected objects, conflicts, and carry the kpt: annotation', () => {
    const message = draftMessage(
      {
        subject: 'PackageVariant default/nginx-edge-01-nginx',
        path: 'edge-01/nginx',
        status: 'updated',
        upstream: 'blueprints/nginx v2',
        previousUpstream: 'nginx/v1 (0123456789ab)',
        injected: ['ConfigMap region-endpoints <- us-east1-endpoints'],
        reasons: [],
        warnings: [],
        conflicts: [
          {
            file: 'deployment.yaml',
            resource: 'Deployment web/nginx',
            field: 'spec.replicas',
            origin: '2',
            local: '5',
            upstream: '3',
            resolution: 'upstream',
          },
        ],
      },
      'nginx',
      'packagevariant-2',
    )
    expect(message).toBe(
      [
        'Update nginx from nginx/v1 (0123456789ab) to blueprints/nginx v2',
        '',
        'PackageVariant: default/nginx-edge-01-nginx',
        'Upstream: blueprints/nginx v2 (was nginx/v1 (0123456789ab))',
        'Injected: ConfigMap region-endpoints <- us-east1-endpoints',
        'Conflict: deployment.yaml Deployment web/nginx spec.replicas: downstream 5, upstream 3: took upstream',
        '',
        'kpt:{"package":"nginx","workspaceName":"packagevariant-2","revision":""}',
        '',
      ].join('\n'),
    )
  })
})

describe('nextWorkspace', () => {
  test("is Porch's packagevariant-<N>, one past the highest in use", () => {
    expect(nextWorkspace([])).toBe('packagevariant-1')
    expect(nextWorkspace(['v1', 'packagevariant-3', 'packagevariant-10', 'packagevariant-x'])).toBe('packagevariant-11')
  })
})

describe('what a draft declares in its trailers', () => {
  test("the revision's labels and annotations, the package's name and what it needs, its owner, read back as written", () => {
    const message = draftMessage(
      {
        subject: 'PackageVariant default/web',
        path: 'edge-01/web',
        status: 'created',
        upstream: 'blueprints/web v1',
        reasons: [],
        warnings: [],
        conflicts: [],
        revisionLabels: { tier: 'canary', 'example.com/team': 'web' },
        revisionAnnotations: { note: 'two lines:\nand "quotes"', plain: 'a/b:c' },
        manifest: { name: 'web', version: 'v1.0.0', requires: ['cert-manager'] },
      },
      'web',
      'packagevariant-1',
    )
    expect(message).toContain('Label: tier=canary\nLabel: example.com/team=web\n')
    expect(message).toContain('Annotation: note="two lines:\\nand \\"quotes\\""\nAnnotation: plain=a/b:c\n')
    expect(draftDeclaration(`tree 0\n\n${message}`)).toEqual({
      name: 'web',
      requires: ['cert-manager'],
      labels: { tier: 'canary', 'example.com/team': 'web' },
      annotations: { note: 'two lines:\nand "quotes"', plain: 'a/b:c' },
      owner: 'default/web',
      removes: false,
      orphans: false,
    })
  })

  test("a set's PackageVariant names its set, and a removal says whether it deletes or orphans", () => {
    const report = {
      subject: 'PackageVariant default/nginx-edge-01-nginx',
      path: 'edge-01/nginx',
      set: 'default/nginx',
      status: 'orphaned' as const,
      reasons: [],
      warnings: [],
      conflicts: [],
    }
    const message = draftMessage(report, 'nginx', 'packagevariant-2')
    expect(message).toContain('PackageVariant: default/nginx-edge-01-nginx\nPackageVariantSet: default/nginx\n')
    expect(draftDeclaration(`tree 0\n\n${message}`)).toMatchObject({
      owner: 'default/nginx-edge-01-nginx',
      set: 'default/nginx',
      removes: true,
      orphans: true,
    })
  })

  test('a draft that removes its package says so, with the PackageVariant that no longer wants it', () => {
    const report = {
      subject: 'PackageVariant default/web',
      path: 'edge-01/web',
      status: 'deleted' as const,
      reasons: [],
      warnings: [],
      conflicts: [],
    }
    expect(draftDeclaration(`tree 0\n\n${draftMessage(report, 'web', 'packagevariant-2')}`)).toMatchObject({
      owner: 'default/web',
      removes: true,
    })
  })
})
