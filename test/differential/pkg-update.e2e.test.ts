/**
 * Differential test: the orchestrator's 3-way merge (`updatePackage`) gives
 * what `kpt pkg update` (strategy resource-merge) writes, for a downstream made
 * by `kpt pkg get --for-deployment` and then edited locally, updated from
 * upstream tag pkg/v1 to pkg/v2.
 *
 * Compared: the set of file paths; every YAML file (and Kptfile) semantically,
 * document by document as JavaScript values (formatting aside: kpt
 * re-serializes every local file and re-encodes the Kptfile from its struct,
 * while we keep the downstream's bytes and layout, on purpose); the comments
 * of every resource file, in order; every other file byte for byte, with its
 * mode. Where kpt is clearly wrong we differ on purpose: `knownDifferences`
 * asserts both results.
 *
 * The packages exercise the rows of the outcome table of kpt's field merge
 * (`.scratch/kpt-pkg-spec.md` B2.1), the per-resource decisions (B1.6), the
 * non-KRM file sync (B1.8), the Kptfile merge (B1.7) and a local subpackage.
 * Each case is named in a comment where it is set up (`[case]`); the
 * packages and the comparison are in `pkg-update/`; pkg-update-strategies
 * compares the other update strategies on the same packages.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import { updatePackage } from '../../orchestrator/merge/update.js'
import type { UpdateResult } from '../../orchestrator/merge/update.js'
import { readPackageDirectory } from '../../orchestrator/package/directory.js'
import { gitPackageFiles } from '../../orchestrator/package/files.js'
import type { PackageFiles } from '../../orchestrator/package/files.js'
import { GitSource } from '../../orchestrator/upstream/git-source.js'
import { comments, comparable, knownDifferences } from './pkg-update/compare.js'
import { editLocally, expectedConflicts } from './pkg-update/downstream.js'
import { createUpstream } from './pkg-update/upstream-v2.js'

describe('updatePackage = kpt pkg update (resource-merge)', () => {
  let work: string
  let kpt: PackageFiles
  let ours: UpdateResult

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'kpt-variants-diff-update-'))
    const repo = join(work, 'upstream')
    await createUpstream(repo)

    const url = `file://${repo}`
    const ds = join(work, 'edge')
    await execa('kpt', ['pkg', 'get', `${url}.git/pkg@v1`, ds, '--for-deployment'], { cwd: work })
    editLocally(ds)
    const local = readPackageDirectory(ds)!
    await execa('kpt', ['pkg', 'update', 'edge@v2'], { cwd: work })
    kpt = readPackageDirectory(ds)!

    const gitSource = await GitSource.open(url, work, { scratch: work })
    const tags = await gitSource.tags()
    const [c1, c2] = [tags.get('pkg/v1')!, tags.get('pkg/v2')!]
    ours = updatePackage({
      origin: gitPackageFiles(await gitSource.readDirectory(c1, 'pkg')),
      updated: gitPackageFiles(await gitSource.readDirectory(c2, 'pkg')),
      local,
      onConflict: 'upstream',
      // What kpt records: the ref as typed, and the package tag it resolved to.
      upstream: { repo: url, directory: '/pkg', ref: 'v2' },
      upstreamLock: { repo: url, directory: '/pkg', ref: 'pkg/v2', commit: c2 },
    })
  }, 60_000)
  afterAll(() => rmSync(work, { recursive: true, force: true }))

  test('the merge succeeds and reports as conflicts the fields both sides changed', () => {
    expect(ours.errors).toEqual([])
    expect(ours.ok).toBe(true)
    expect(ours.conflicts.map((c) => [c.file, c.field]).sort()).toEqual(expectedConflicts)
    expect(ours.conflicts.every((c) => c.resolution === 'upstream')).toBe(true)
  })

  test('the same files', () => {
    const paths = (files: PackageFiles) => [...files.keys()].filter((path) => !(path in knownDifferences))
    expect(paths(ours.files)).toEqual(paths(kpt))
  })

  test('every file the same: YAML documents as values, other files byte for byte', () => {
    for (const [path, file] of kpt) {
      if (path in knownDifferences) continue
      expect({ path, value: comparable(path, ours.files.get(path)) }).toEqual({ path, value: comparable(path, file) })
    }
  })

  test('the same comments in every resource file', () => {
    for (const [path, file] of kpt) {
      if (path in knownDifferences || !/\.ya?ml$/.test(path)) continue
      expect({ path, comments: comments(ours.files.get(path)!) }).toEqual({ path, comments: comments(file) })
    }
  })

  test.each(Object.keys(knownDifferences))('known difference (kpt bug): %s', (path) => {
    const { kpt: theirs, ours: mine } = knownDifferences[path]!
    expect(comparable(path, kpt.get(path))).toEqual(theirs)
    expect(comparable(path, ours.files.get(path))).toEqual(mine)
  })
})
