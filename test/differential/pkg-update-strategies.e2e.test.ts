/**
 * Differential test beside pkg-update.e2e.test.ts, on the same packages: the
 * strategies a downstream Kptfile may name (`upstream.updateStrategy`),
 * against the real `kpt pkg update` with the same strategy, the strategy
 * written into the downstream Kptfile before updating.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import { updatePackage } from '../../orchestrator/merge/update.js'
import { readPackageDirectory } from '../../orchestrator/package/directory.js'
import { gitPackageFiles } from '../../orchestrator/package/files.js'
import type { PackageFile, PackageFiles } from '../../orchestrator/package/files.js'
import { GitSource } from '../../orchestrator/upstream/git-source.js'
import { comments, comparable, knownDifferences } from './pkg-update/compare.js'
import { editLocally } from './pkg-update/downstream.js'
import { createUpstream } from './pkg-update/upstream-v2.js'

describe('updatePackage = kpt pkg update, with the Kptfile strategy', () => {
  let work: string
  let url: string
  let commits: { c1: string; c2: string }
  let gitSource: GitSource

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'kpt-variants-diff-strategy-'))
    const repo = join(work, 'upstream')
    await createUpstream(repo)
    url = `file://${repo}`
    gitSource = await GitSource.open(url, work, { scratch: work })
    const tags = await gitSource.tags()
    commits = { c1: tags.get('pkg/v1')!, c2: tags.get('pkg/v2')! }
  }, 60_000)
  afterAll(() => rmSync(work, { recursive: true, force: true }))

  /** A downstream got from pkg/v1 (edited locally or not), its Kptfile set to `strategy`, updated to v2 by kpt and by us. */
  async function updateBoth(name: string, strategy: string, options: { forDeployment: boolean; edit: boolean }) {
    const ds = join(work, name)
    await execa(
      'kpt',
      ['pkg', 'get', `${url}.git/pkg@v1`, ds, ...(options.forDeployment ? ['--for-deployment'] : [])],
      { cwd: work },
    )
    if (options.edit) editLocally(ds)
    const kptfilePath = join(ds, 'Kptfile')
    writeFileSync(
      kptfilePath,
      readFileSync(kptfilePath, 'utf8').replace('updateStrategy: resource-merge', `updateStrategy: ${strategy}`),
    )
    const local = readPackageDirectory(ds)!
    // kpt's --strategy defaults to resource-merge whatever the Kptfile says, so it is given the Kptfile's.
    const run = await execa('kpt', ['pkg', 'update', `${name}@v2`, '--strategy', strategy], {
      cwd: work,
      reject: false,
    })
    const kpt = { exitCode: run.exitCode, stderr: String(run.stderr), files: readPackageDirectory(ds)! }
    const ours = updatePackage({
      origin: gitPackageFiles(await gitSource.readDirectory(commits.c1, 'pkg')),
      updated: gitPackageFiles(await gitSource.readDirectory(commits.c2, 'pkg')),
      local,
      onConflict: 'upstream',
      upstream: { repo: url, directory: '/pkg', ref: 'v2' },
      upstreamLock: { repo: url, directory: '/pkg', ref: 'pkg/v2', commit: commits.c2 },
    })
    return { local, kpt, ours }
  }

  /** Both results hold the same files, YAML as values with the same comments, other files byte for byte. */
  function expectSamePackages(kpt: PackageFiles, ours: PackageFiles): void {
    expect([...ours.keys()]).toEqual([...kpt.keys()])
    for (const [path, file] of kpt) {
      expect({ path, value: comparable(path, ours.get(path)) }).toEqual({ path, value: comparable(path, file) })
      if (/\.ya?ml$/.test(path))
        expect({ path, comments: comments(ours.get(path)!) }).toEqual({ path, comments: comments(file) })
    }
  }

  /** kpt's list of modified files (in no particular order), sorted. */
  function kptModifiedFiles(stderr: string): string[] {
    const list = /local package files have been modified: \[(.*)\]\.\n {2}use a different update --strategy\./.exec(
      stderr,
    )
    if (!list) throw new Error(`kpt did not refuse the fast-forward:\n${stderr}`)
    return list[1]!.split(' ').sort()
  }

  /** Our list of modified files as kpt names them: a subpackage's files from the subpackage. */
  function asKptNames(message: string): string[] {
    const list = /^local package files have been modified: \[(.*)\]\.\n {2}use a different update --strategy\.$/.exec(
      message,
    )
    if (!list) throw new Error(`not a refused fast-forward: ${message}`)
    return [...new Set(list[1]!.split(' ').map((path) => path.replace(/^sub\//, '')))].sort()
  }

  test('fast-forward over local changes: both refuse, naming the same files, and nothing changes', async () => {
    const { local, kpt, ours } = await updateBoth('ff-edited', 'fast-forward', { forDeployment: true, edit: true })
    expect(kpt.exitCode).toBe(1)
    expect(ours.ok).toBe(false)
    expect(ours.errors).toHaveLength(1)
    // kpt also names the package-context.yaml files it generated itself, which we do not count (strategies.ts).
    expect(asKptNames(ours.errors[0]!)).toEqual(
      kptModifiedFiles(kpt.stderr).filter((path) => path !== 'package-context.yaml'),
    )
    // We change nothing. kpt, before it refuses, writes the new ref into the Kptfile and marks the
    // downstream's own resources with their identity: nothing else.
    expect(ours.files).toBe(local)
    expect([...kpt.files.keys()]).toEqual([...local.keys()])
    const unmarked = (path: string, file: PackageFile | undefined) =>
      JSON.stringify(comparable(path, file), (key, value: unknown) =>
        key === 'internal.kpt.dev/upstream-identifier' ? undefined : value,
      )
        .replace(/,?"annotations":\{\}/g, '')
        .replace(/"ref":"v2"/, '"ref":"v1"')
    for (const [path, file] of local)
      expect({ path, value: unmarked(path, kpt.files.get(path)) }).toEqual({ path, value: unmarked(path, file) })
  }, 60_000)

  test('fast-forward without local changes: both take upstream', async () => {
    const { kpt, ours } = await updateBoth('ff-clean', 'fast-forward', { forDeployment: false, edit: false })
    expect({ exitCode: kpt.exitCode, errors: ours.errors }).toEqual({ exitCode: 0, errors: [] })
    expectSamePackages(kpt.files, ours.files)
  }, 60_000)

  test('fast-forward of a deployment package: kpt counts the package context it generated, we do not (a known difference)', async () => {
    const { kpt, ours } = await updateBoth('ff-deploy', 'fast-forward', { forDeployment: true, edit: false })
    expect(kpt.exitCode).toBe(1)
    // Both count values.json, which kpt re-encoded when it fetched the package.
    expect(kptModifiedFiles(kpt.stderr)).toEqual(['package-context.yaml', 'values.json'])
    expect(ours.errors.map(asKptNames)).toEqual([['values.json']])
  }, 60_000)

  test('force-delete-replace over local changes: upstream replaces them all', async () => {
    const { local, kpt, ours } = await updateBoth('replaced', 'force-delete-replace', {
      forDeployment: true,
      edit: true,
    })
    expect({ exitCode: kpt.exitCode, errors: ours.errors }).toEqual({ exitCode: 0, errors: [] })
    // A known difference: kpt deletes the package contexts its `get --for-deployment` made (upstream has none), leaving a
    // deployment package that package-context cannot render; we write them afresh, as a clone has them.
    const contexts = ['package-context.yaml', 'sub/package-context.yaml']
    expectSamePackages(kpt.files, new Map([...ours.files].filter(([path]) => !contexts.includes(path))))
    for (const path of contexts) {
      expect(kpt.files.has(path)).toBe(false)
      const data = (file: PackageFile | undefined) => (comparable(path, file) as { data?: unknown }[])[0]?.data
      expect(data(ours.files.get(path))).toEqual(data(local.get(path)))
    }
  }, 60_000)

  test('resource-merge named in the Kptfile: the merge of the test above', async () => {
    const { kpt, ours } = await updateBoth('merged', 'resource-merge', { forDeployment: true, edit: true })
    expect({ exitCode: kpt.exitCode, errors: ours.errors }).toEqual({ exitCode: 0, errors: [] })
    expect([...ours.files.keys()].filter((path) => !(path in knownDifferences))).toEqual(
      [...kpt.files.keys()].filter((path) => !(path in knownDifferences)),
    )
  }, 60_000)
})
