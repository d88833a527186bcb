import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { git } from '../../git/git.js'
import { textFile } from '../../package/files.js'
import { openRepository } from './repository.js'
import type { RepositorySnapshot } from './repository.js'
import { publishDrafts, writeDrafts } from './write.js'
import type { DraftChange } from './write.js'

const committer = { name: 'test', email: 'test@example.com', time: 1_750_000_000 }
const change = (pkg: string, text = `name: ${pkg}\n`): DraftChange => ({
  package: pkg,
  files: new Map([
    ['Kptfile', textFile(`kind: Kptfile\nmetadata: {name: ${pkg}}\n`)],
    ['sub/cm.yaml', textFile(text)],
  ]),
  message: (workspace) =>
    `Create ${pkg}\n\nkpt:${JSON.stringify({ package: pkg, workspaceName: workspace, revision: '' })}\n`,
})

describe('writeDrafts', () => {
  let dir: string
  let remote: string
  const open = async (): Promise<RepositorySnapshot> => {
    const { snapshot, lock } = await openRepository(
      { name: 'edge', url: remote, branch: 'main', directory: '' },
      { base: dir, cacheDir: join(dir, 'cache'), lockTimeoutMs: 1000 },
    )
    lock.release()
    return snapshot
  }
  const remoteGit = (...args: string[]) => git(args, { cwd: remote })

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kpt-variants-write-'))
    remote = join(dir, 'edge.git')
    await git(['init', '-q', '--bare', '-b', 'main', remote], { cwd: dir })
  })
  afterEach(() => rmSync(dir, { recursive: true, force: true }))

  test('publishes some changes straight onto the branch and drafts the others on top, in one push', async () => {
    const snapshot = await open()
    const written = await writeDrafts(snapshot, [change('a'), change('b')], committer, ['a'])
    expect(written).toMatchObject({ ok: true, published: [{ package: 'a', ok: true, revision: 1, tag: 'a/v1' }] })
    expect(await remoteGit('for-each-ref', '--format=%(refname)')).toBe(
      'refs/heads/drafts/b/packagevariant-1\nrefs/heads/main\nrefs/tags/a/v1',
    )
    expect(await remoteGit('ls-tree', '-r', '--name-only', 'main')).toBe('a/Kptfile\na/sub/cm.yaml')
    expect(await remoteGit('log', '--format=%s', 'main')).toBe('Publish a v1')
    // The draft is made on the new head: it changes b alone.
    expect(await remoteGit('rev-parse', 'drafts/b/packagevariant-1~1')).toBe(await remoteGit('rev-parse', 'main'))
    expect(await remoteGit('log', '-1', '--format=%ct', 'a/v1')).toBe('1750000000')
    expect(snapshot.published['a']).toEqual([
      { revision: 1, tag: 'a/v1', commit: await remoteGit('rev-parse', 'a/v1'), time: 1_750_000_000 },
    ])

    // A later run publishes b's open draft, and a new revision of a.
    const later = await open()
    expect(later.published['a']![0]!.time).toBe(1_750_000_000)
    const again = await writeDrafts(later, [change('a', 'name: a2\n')], committer, ['b', 'a'])
    expect(again).toMatchObject({
      ok: true,
      published: [
        { package: 'b', revision: 1 },
        { package: 'a', revision: 2, tag: 'a/v2' },
      ],
    })
    expect(await remoteGit('for-each-ref', '--format=%(refname)', 'refs/heads/')).toBe('refs/heads/main')
    expect(await remoteGit('show', 'a/v2:a/sub/cm.yaml')).toBe('name: a2')
  })

  test('into a big directory: packages go in as trees written first, a commit and a tag each within the budget', async () => {
    const names = Array.from({ length: 80 }, (_, i) => `p${String(i).padStart(2, '0')}`)
    const snapshot = await open()
    // One draft opened beforehand, published from its branch along with 79 new ones.
    await writeDrafts(snapshot, [change('p00', 'from a draft\n')], committer)
    const written = await writeDrafts(
      snapshot,
      names.slice(1).map((n) => change(n)),
      committer,
      names,
    )
    expect(written.ok && written.published.filter((o) => o.ok).length).toBe(80)
    expect((await remoteGit('ls-tree', '-r', '--name-only', 'main')).split('\n')).toHaveLength(160)
    expect(await remoteGit('show', 'p00/v1:p00/sub/cm.yaml')).toBe('from a draft')
    expect(await remoteGit('show', 'p79/v1:p79/sub/cm.yaml')).toBe('name: p79')
    // 80 packages into a directory of 80 is within the budget: a commit each, each tag at the commit of its package.
    expect(await remoteGit('rev-list', '--count', 'main')).toBe('80')
    expect(await remoteGit('log', '-1', '--format=%s', 'p41/v1')).toBe('Publish p41 v1')
  })

  test('a draft made before its published package changed is not published; the others are', async () => {
    const snapshot = await open()
    await writeDrafts(snapshot, [change('a'), change('b')], committer, ['a'])
    // b gets published by someone who did not see its draft: the draft was made from a branch without b.
    const other = await open()
    other.drafts = {}
    await writeDrafts(other, [change('b', 'by hand\n')], committer, ['b'])
    const { outcomes, rejected } = await publishDrafts(await open(), ['b', 'missing'], committer)
    expect(rejected).toBeUndefined()
    expect(outcomes).toEqual([
      { package: 'missing', ok: false, reason: 'no open draft' },
      {
        package: 'b',
        ok: false,
        reason: expect.stringMatching(
          /^the published package changed after draft drafts\/b\/packagevariant-1 was made/,
        ),
      },
    ])
  })
})
