import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  catFileBatch,
  diffTrees,
  git,
  GitError,
  listRefs,
  listTree,
  pushAtomic,
  resolveObjects,
  updateRefs,
} from './git.js'

/** The timeout of a test that pushes hundreds of refs: about a second alone, several times that beside CI's image builds. */
const manyRefs = 60_000
const env = {
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@example.com',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@example.com',
}

describe('git plumbing', () => {
  let dir: string
  let remote: string
  let work: string
  const commit = async (files: Record<string, string>, message: string) => {
    for (const [path, text] of Object.entries(files)) {
      await git(['rm', '-q', '--ignore-unmatch', '-r', '--', path], { cwd: work, env })
      if (text !== '') writeFileSync(join(work, path), text)
    }
    await git(['add', '-A'], { cwd: work })
    await git(['commit', '-q', '--allow-empty', '-m', message], { cwd: work, env })
    return git(['rev-parse', 'HEAD'], { cwd: work })
  }

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kpt-variants-git-'))
    remote = join(dir, 'remote.git')
    work = join(dir, 'work')
    await git(['init', '-q', '--bare', '-b', 'main', remote], { cwd: dir })
    await git(['clone', '-q', remote, work], { cwd: dir })
  })
  afterEach(() => rmSync(dir, { recursive: true, force: true }))
  /** Pushes `refs` as new refs at `oid` (each leased as absent). */
  const pushNew = (refs: readonly string[], oid: string) =>
    pushAtomic(
      work,
      'origin',
      refs.map((ref) => ({ ref, oid, expect: '' })),
    )

  test("a failing command throws GitError with git's own first line", async () => {
    await expect(git(['rev-parse', '--verify', 'nope'], { cwd: work })).rejects.toThrow(GitError)
    await expect(git(['rev-parse', '--verify', 'nope'], { cwd: work })).rejects.toThrow(
      'git rev-parse --verify nope: Needed a single revision',
    )
  })

  test('diffTrees diffs many pairs in one process, against the empty tree without a base', async () => {
    const a = await commit({ x: '1\n', y: '2\n' }, 'a')
    const b = await commit({ x: '3\n', y: '', z: '4\n' }, 'b')
    const same = await commit({}, 'same')
    const changes = await diffTrees(work, [[b, a], [a], [same, b]])
    expect(changes.get(b)!.map((c) => `${c.status} ${c.path} ${c.mode}`)).toEqual([
      'M x 100644',
      'D y 000000',
      'A z 100644',
    ])
    expect(changes.get(a)!.map((c) => `${c.status} ${c.path}`)).toEqual(['A x', 'A y'])
    expect(changes.get(same)).toBeUndefined()
    const [blob] = await catFileBatch(work, [changes.get(b)![2]!.oid])
    expect(blob).toMatchObject({ type: 'blob', content: Buffer.from('4\n') })
    expect((await listTree(work, b, '')).map((e) => e.path)).toEqual(['x', 'z'])
  })

  test('resolveObjects names the object of each name in one process, undefined where there is none', async () => {
    mkdirSync(join(work, 'pkg'))
    const a = await commit({ 'pkg/x': '1\n' }, 'a')
    const [tree, blob, missing, bad] = await resolveObjects(work, [`${a}:pkg`, `${a}:pkg/x`, `${a}:nope`, 'not-a-ref'])
    expect(tree).toBe(await git(['rev-parse', `${a}:pkg`], { cwd: work }))
    expect(blob).toBe(await git(['hash-object', join(work, 'pkg', 'x')], { cwd: work }))
    expect([missing, bad]).toEqual([undefined, undefined])
    expect(await resolveObjects(work, [])).toEqual([])
  })

  test('updateRefs applies all commands or none; listRefs reads them back', async () => {
    const a = await commit({ x: '1\n' }, 'a')
    await updateRefs(work, [`update refs/heads/one ${a}`, `update refs/tags/t ${a}`])
    expect(await listRefs(work, ['refs/heads/one', 'refs/tags/'])).toEqual(
      new Map([
        ['refs/heads/one', a],
        ['refs/tags/t', a],
      ]),
    )
    await expect(
      updateRefs(work, [`delete refs/heads/one`, `update refs/heads/two ${a} ${'0'.repeat(39)}1`]),
    ).rejects.toThrow(GitError)
    expect((await listRefs(work, ['refs/heads/'])).has('refs/heads/one')).toBe(true)
  })

  test('pushAtomic with mirror sets the pushed refs here too once the remote took them, a few or many', async () => {
    const a = await commit({ x: '1\n' }, 'a')
    const url = await git(['remote', 'get-url', 'origin'], { cwd: work })
    await pushAtomic(work, 'origin', [{ ref: 'refs/heads/gone', oid: a, expect: '' }])
    await git(['update-ref', 'refs/heads/gone', a], { cwd: work })
    const few = [
      { ref: 'refs/heads/x', oid: a, expect: '' },
      { ref: 'refs/tags/x/v1', oid: a, expect: '' },
      { ref: 'refs/heads/gone', expect: a },
    ]
    expect(await pushAtomic(work, 'origin', few, { url, mirror: true })).toEqual({ ok: true })
    const local = await listRefs(work, ['refs/heads/', 'refs/tags/'])
    expect([local.get('refs/heads/x'), local.get('refs/tags/x/v1'), local.has('refs/heads/gone')]).toEqual([
      a,
      a,
      false,
    ])
    const many = Array.from({ length: 70 }, (_, i) => ({ ref: `refs/tags/m/v${i + 1}`, oid: a, expect: '' }))
    expect(await pushAtomic(work, 'origin', many, { url, mirror: true })).toEqual({ ok: true })
    expect((await listRefs(work, ['refs/tags/m/'])).size).toBe(70)
    // A refused push sets nothing here.
    expect(
      await pushAtomic(work, 'origin', [{ ref: 'refs/heads/y', oid: a, expect: a }], { url, mirror: true }),
    ).toMatchObject({ ok: false })
    expect((await listRefs(work, ['refs/heads/y'])).size).toBe(0)
    expect((await listRefs(work, ['refs/kpt-variants/'])).size).toBe(0)
  })

  test('pushAtomic pushes all refs or none, and refuses to overwrite a ref that moved since it was fetched', async () => {
    const a = await commit({ x: '1\n' }, 'a')
    expect(
      await pushAtomic(work, 'origin', [
        { ref: 'refs/heads/main', oid: a, expect: '' },
        { ref: 'refs/tags/v1', oid: a, expect: '' },
      ]),
    ).toEqual({ ok: true })
    expect(await listRefs(remote, ['refs/'])).toEqual(
      new Map([
        ['refs/heads/main', a],
        ['refs/tags/v1', a],
      ]),
    )

    // Someone else pushes main; our lease (main at a) is stale now.
    const other = join(dir, 'other')
    await git(['clone', '-q', remote, other], { cwd: dir })
    writeFileSync(join(other, 'x'), 'theirs\n')
    await git(['commit', '-qam', 'theirs'], { cwd: other, env })
    await git(['push', '-q', 'origin', 'main'], { cwd: other })
    const theirs = await git(['rev-parse', 'HEAD'], { cwd: other })
    const b = await commit({ x: '2\n' }, 'b')
    const refused = await pushAtomic(work, 'origin', [
      { ref: 'refs/heads/main', oid: b, expect: a },
      { ref: 'refs/heads/drafts/x/ws', oid: b, expect: '' },
    ])
    expect(refused).toEqual({
      ok: false,
      reason: 'refs/heads/main [rejected] (stale info); refs/heads/drafts/x/ws [rejected] (atomic push failed)',
    })
    // Atomic: the draft branch did not go either, and their main is intact.
    expect(await listRefs(remote, ['refs/heads/'])).toEqual(new Map([['refs/heads/main', theirs]]))

    // A ref expected not to exist that someone else created is theirs too.
    await git(['push', '-q', 'origin', 'HEAD:refs/heads/drafts/y/ws'], { cwd: other })
    const taken = await pushAtomic(work, 'origin', [{ ref: 'refs/heads/drafts/y/ws', oid: b, expect: '' }])
    expect(taken).toEqual({ ok: false, reason: 'refs/heads/drafts/y/ws [rejected] (stale info)' })
    expect((await listRefs(remote, ['refs/heads/drafts/'])).get('refs/heads/drafts/y/ws')).toBe(theirs)

    // Deleting needs the lease too.
    expect(await pushAtomic(work, 'origin', [{ ref: 'refs/tags/v1', expect: a }])).toEqual({ ok: true })
    expect((await listRefs(remote, ['refs/tags/'])).size).toBe(0)
    // The refs a push goes through are gone, whatever its outcome.
    expect((await listRefs(work, ['refs/kpt-variants/'])).size).toBe(0)
  })

  test(
    'pushAtomic pushes many refs at once, creating, moving and deleting them under their leases',
    async () => {
      const a = await commit({ x: '1\n' }, 'a')
      const b = await commit({ x: '2\n' }, 'b')
      const names = Array.from({ length: 300 }, (_, i) => `refs/heads/drafts/p${i}/ws`)
      expect(await pushNew(names, a)).toEqual({ ok: true })
      // A third moved, a third deleted, a third kept; and one new.
      const updates = names.flatMap((ref, i) =>
        i % 3 === 0 ? [{ ref, oid: b, expect: a }] : i % 3 === 1 ? [{ ref, expect: a }] : [],
      )
      expect(
        await pushAtomic(work, 'origin', [...updates, { ref: 'refs/heads/drafts/new/ws', oid: b, expect: '' }]),
      ).toEqual({ ok: true })
      const expected = new Map(
        names.flatMap((ref, i): [string, string][] => (i % 3 === 0 ? [[ref, b]] : i % 3 === 2 ? [[ref, a]] : [])),
      )
      expected.set('refs/heads/drafts/new/ws', b)
      expect(await listRefs(remote, ['refs/heads/drafts/'])).toEqual(expected)
    },
    manyRefs,
  )

  describe('many deletions at once (a pruning push)', () => {
    // Enough deletions for a pruning push (pushAtomic's pruneFrom).
    const drafts = Array.from({ length: 260 }, (_, i) => `refs/heads/drafts/p${i}/ws`)
    let a: string
    let other: string
    beforeEach(async () => {
      a = await commit({ x: '1\n' }, 'a')
      expect(await pushNew([...drafts, 'refs/heads/main', 'refs/heads/feature', 'refs/tags/v1'], a)).toEqual({
        ok: true,
      })
      other = join(dir, 'other')
      await git(['clone', '-q', remote, other], { cwd: dir })
    }, manyRefs)

    test(
      'delete only the refs named, leaving every other branch and tag of the remote as it is',
      async () => {
        // Someone pushes a branch of a commit this repository has never seen: its ref cannot be mirrored here.
        writeFileSync(join(other, 'x'), 'theirs\n')
        await git(['commit', '-qam', 'theirs'], { cwd: other, env })
        await git(['push', '-q', 'origin', 'HEAD:refs/heads/theirs'], { cwd: other })
        const theirs = await git(['rev-parse', 'HEAD'], { cwd: other })
        const b = await commit({ x: '2\n' }, 'b')
        const updates = [
          ...drafts.map((ref) => ({ ref, expect: a })),
          { ref: 'refs/heads/main', oid: b, expect: a },
          { ref: 'refs/tags/v2', oid: b, expect: '' },
        ]
        expect(await pushAtomic(work, 'origin', updates)).toEqual({ ok: true })
        const expected = new Map([
          ['refs/heads/feature', a],
          ['refs/heads/main', b],
          ['refs/heads/theirs', theirs],
          ['refs/tags/v1', a],
          ['refs/tags/v2', b],
        ])
        expect(await listRefs(remote, ['refs/'])).toEqual(expected)
        // Again with every commit of the remote known here, as a synced clone knows them.
        await git(['fetch', '-q', 'origin', 'refs/heads/theirs'], { cwd: work })
        const more = Array.from({ length: 260 }, (_, i) => `refs/heads/more/p${i}`)
        expect(await pushNew(more, a)).toEqual({ ok: true })
        expect(
          await pushAtomic(
            work,
            'origin',
            more.map((ref) => ({ ref, expect: a })),
          ),
        ).toEqual({ ok: true })
        expect(await listRefs(remote, ['refs/'])).toEqual(expected)
        expect((await listRefs(work, ['refs/kpt-variants/'])).size).toBe(0)
      },
      manyRefs,
    )

    test(
      'a deleted ref someone moved refuses the push, and nothing is deleted',
      async () => {
        await git(['commit', '-q', '--allow-empty', '-m', 'moved'], { cwd: other, env })
        await git(['push', '-q', '-f', 'origin', `HEAD:${drafts[7]}`], { cwd: other })
        const refused = await pushAtomic(
          work,
          'origin',
          drafts.map((ref) => ({ ref, expect: a })),
        )
        expect(refused.ok).toBe(false)
        expect(!refused.ok && refused.reason.split('; ').filter((r) => r.includes('(stale info)'))).toEqual([
          `${drafts[7]} [rejected] (stale info)`,
        ])
        expect([...(await listRefs(remote, ['refs/heads/drafts/'])).keys()].sort()).toEqual([...drafts].sort())
      },
      manyRefs,
    )

    test(
      'a ref to delete that someone deleted already refuses the push, as its lease says',
      async () => {
        await git(['push', '-q', 'origin', `:${drafts[3]}`], { cwd: other })
        const refused = await pushAtomic(
          work,
          'origin',
          drafts.map((ref) => ({ ref, expect: a })),
        )
        expect(refused).toEqual({ ok: false, reason: expect.stringContaining(drafts[3]!) })
        expect((await listRefs(remote, ['refs/heads/drafts/'])).size).toBe(drafts.length - 1)
      },
      manyRefs,
    )
  })
})
