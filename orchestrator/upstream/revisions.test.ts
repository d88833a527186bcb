import {
  packageRevisionName,
  packageRevisionObject,
  parseNamedRevisionTags,
  parseRevisionTags,
  revisionLabel,
  revisionsOf,
  workspaceFromMessage,
} from './revisions.js'

describe('published revisions from git tags', () => {
  test('only <package dir>/v<N> tags inside the repository directory are revisions', () => {
    const tags = [
      'v1.0.0',
      'nginx/v1',
      'nginx/v2',
      'nginx/v02',
      'nginx/draft',
      'blueprints/redis/v3',
      'other/x/v1',
      'nginx/v10',
    ]
    expect(parseRevisionTags(tags, '').map((t) => [t.directory, t.revision])).toEqual([
      ['blueprints/redis', 3],
      ['nginx', 1],
      ['nginx', 2],
      ['nginx', 10],
      ['other/x', 1],
    ])
    expect(parseRevisionTags(tags, 'blueprints').map((t) => t.tag)).toEqual(['blueprints/redis/v3'])
  })

  test("the workspace is the one Porch's kpt: annotation records for that package, else vN", () => {
    const message =
      'Approve\n\nkpt:{"package":"other","workspaceName":"x"}\nkpt:{"package":"blueprints/redis","workspaceName":"ws-7"}\nkpt:{broken\n'
    expect(workspaceFromMessage(message, 'blueprints/redis')).toBe('ws-7')
    expect(workspaceFromMessage(message, 'nginx')).toBeUndefined()
    const tags = parseRevisionTags(['blueprints/redis/v3', 'blueprints/redis/v4'], 'blueprints')
    const commits = new Map([
      ['blueprints/redis/v3', 'c3'],
      ['blueprints/redis/v4', 'c4'],
    ])
    const revisions = revisionsOf(
      { name: 'catalog', namespace: 'default', directory: 'blueprints' },
      tags,
      commits,
      [true, true],
      [message, ''],
    )
    expect(revisions).toEqual([
      {
        kind: 'published',
        repository: 'catalog',
        namespace: 'default',
        packageName: 'redis',
        revision: 3,
        workspaceName: 'ws-7',
        ref: 'blueprints/redis/v3',
        commit: 'c3',
        directory: 'blueprints/redis',
      },
      {
        kind: 'published',
        repository: 'catalog',
        namespace: 'default',
        packageName: 'redis',
        revision: 4,
        workspaceName: 'v4',
        ref: 'blueprints/redis/v4',
        commit: 'c4',
        directory: 'blueprints/redis',
      },
    ])
  })

  test('a tagged directory without a Kptfile is not a package', () => {
    const tags = parseRevisionTags(['docs/v1'], '')
    expect(
      revisionsOf({ name: 'r', namespace: '', directory: '' }, tags, new Map([['docs/v1', 'c']]), [false], ['']),
    ).toEqual([])
  })

  test('the PackageRevision object is what Porch lists', () => {
    expect(packageRevisionName('blueprints', 'network/upf', 'v2')).toBe('blueprints.network.upf.v2')
    const object = packageRevisionObject({
      kind: 'published',
      repository: 'blueprints',
      namespace: 'default',
      packageName: 'nginx',
      revision: 2,
      workspaceName: 'v2',
      ref: 'nginx/v2',
      commit: 'c',
      directory: 'nginx',
    })
    expect(object.toJS()).toEqual({
      apiVersion: 'porch.kpt.dev/v1alpha1',
      kind: 'PackageRevision',
      metadata: { name: 'blueprints.nginx.v2', namespace: 'default' },
      spec: {
        packageName: 'nginx',
        repository: 'blueprints',
        revision: 2,
        workspaceName: 'v2',
        lifecycle: 'Published',
      },
    })
  })

  test("older Porch's named revisions are the other <package dir>/<name> tags; reports label each kind", () => {
    const tags = ['v1.0.0', 'nginx/v1', 'nginx/v4.0.0', 'oai/nrf/r2', 'nginx/v02', 'other/x']
    expect(parseNamedRevisionTags(tags, '').map((t) => [t.directory, t.name])).toEqual([
      ['nginx', 'v02'],
      ['nginx', 'v4.0.0'],
      ['oai/nrf', 'r2'],
      ['other', 'x'],
    ])
    expect(parseNamedRevisionTags(tags, 'oai').map((t) => t.tag)).toEqual(['oai/nrf/r2'])
    const base = { revision: -1, workspaceName: 'main', ref: 'main', commit: '0123456789abcdef' }
    expect(revisionLabel({ ...base, kind: 'placeholder' })).toBe('main@0123456789ab')
    expect(revisionLabel({ ...base, kind: 'named', workspaceName: 'r2', ref: 'oai/nrf/r2' })).toBe('r2')
    expect(revisionLabel({ ...base, kind: 'published', revision: 3 })).toBe('v3')
  })
})
