import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRepo, git, writeTree } from '../../test/support/git-repo.js'
import type { RepositorySnapshot } from '../output/git/repository.js'
import type { StoredPackage } from '../output/output.js'
import { textFile } from '../package/files.js'
import { filesDigest } from '../run/memo.js'
import type { MemoEntry } from '../run/memo.js'
import { directoryEdits, gitEdits } from './local-edits.js'

const rendered: StoredPackage = {
  published: new Map([
    ['Kptfile', textFile('kind: Kptfile\n')],
    ['deployment.yaml', textFile('replicas: 2\n')],
  ]),
}
const entry = (extra: Partial<MemoEntry> = {}): MemoEntry => ({
  scope: 'injectors',
  inputs: 'i',
  files: filesDigest(rendered),
  warnings: [],
  ...extra,
})

describe('directoryEdits: the package against the record of the render that left it', () => {
  test('the files the render left: none; any other byte, file or mode: edited', () => {
    expect(directoryEdits(entry(), undefined, rendered)).toEqual({ state: 'none' })
    const edited = new Map(rendered.published)
    edited.set('deployment.yaml', textFile('replicas: 5\n'))
    const added = new Map(rendered.published)
    added.set('notes.txt', textFile(''))
    const executable = new Map(rendered.published)
    executable.set('deployment.yaml', textFile('replicas: 2\n', true))
    for (const published of [edited, added, executable])
      expect(directoryEdits(entry(), undefined, { published })).toEqual({ state: 'edited' })
  })

  test('the metadata digest the record took still matches: none, without the contents; another one: the contents decide', () => {
    const edited = { published: new Map([['Kptfile', textFile('kind: Kptfile\n')]]) }
    expect(directoryEdits(entry({ stat: 's1' }), 's1', edited)).toEqual({ state: 'none' })
    expect(directoryEdits(entry({ stat: 's1' }), 's2', edited)).toEqual({ state: 'edited' })
    expect(directoryEdits(entry({ stat: 's1' }), undefined, rendered)).toEqual({ state: 'none' })
  })

  test('no record, or the record of a render that was not written: unknown, and why', () => {
    expect(directoryEdits(undefined, undefined, rendered)).toEqual({
      state: 'unknown',
      reason: 'the cache holds no record of its last render',
    })
    expect(directoryEdits(entry({ held: true }), undefined, rendered)).toEqual({
      state: 'unknown',
      reason: 'its last render was not written (its dependencies could not be met)',
    })
  })
})

describe('gitEdits: the package on the branch against its latest tag', () => {
  let dir: string
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'kpt-variants-edits-'))))
  afterEach(() => rmSync(dir, { recursive: true, force: true }))

  test('unchanged since its tag (other packages changed): none; changed by commits since: edited, with how many; never tagged: unknown', async () => {
    const repo = join(dir, 'edge-01')
    await createRepo(repo, [
      ['nginx/v1', { 'pkgs/nginx/Kptfile': 'kind: Kptfile\n', 'pkgs/nginx/deployment.yaml': 'replicas: 2\n' }],
      ['web/v1', { 'pkgs/web/Kptfile': 'kind: Kptfile\n' }],
      ['nginx/v2', { 'pkgs/nginx/deployment.yaml': 'replicas: 3\n' }],
    ])
    for (const [path, text] of [
      ['pkgs/web/deployment.yaml', 'replicas: 1\n'],
      ['pkgs/hand/Kptfile', 'kind: Kptfile\n'],
      ['pkgs/web/deployment.yaml', 'replicas: 4\n'],
    ] as const) {
      writeTree(repo, { [path]: text })
      await git(repo, 'add', '-A')
      await git(repo, 'commit', '-qm', `edit ${path}`)
    }
    const tagged = async (tag: string) => ({
      revision: Number(tag.slice(-1)),
      tag,
      commit: await git(repo, 'rev-parse', tag),
      time: 0,
    })
    const snapshot: RepositorySnapshot = {
      name: 'edge-01',
      source: repo,
      clone: repo,
      branch: 'main',
      directory: 'pkgs',
      head: await git(repo, 'rev-parse', 'main'),
      drafts: {},
      published: { nginx: [await tagged('nginx/v1'), await tagged('nginx/v2')], web: [await tagged('web/v1')] },
    }
    expect(await gitEdits(snapshot, ['nginx', 'web', 'hand'])).toEqual(
      new Map([
        ['hand', { state: 'unknown', reason: 'no published revision (tag) of it to compare the package on main with' }],
        ['nginx', { state: 'none' }],
        ['web', { state: 'edited', reason: '2 commit(s) on main changed it since web/v1' }],
      ]),
    )
  })
})
