import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRepo, git } from '../../test/support/git-repo.js'
import { GitSources, listUpstreams } from './upstreams.js'
import type { RepositoryLocation } from './upstreams.js'

const kptfile = (name: string) => ({
  [`${name}/Kptfile`]: `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: ${name}\n`,
})

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'upstreams-'))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

const location = (url: string): RepositoryLocation => ({
  name: 'blueprints',
  namespace: 'default',
  url,
  branch: 'main',
  directory: '',
})
const revisionsOf = async (sources: GitSources, url: string) =>
  [...(await listUpstreams([location(url)], sources)).revisions.values()].flat().map((r) => `${r.ref} ${r.commit}`)

test('a thread handed the refs the main thread listed lists the same revisions, whatever was pushed since', async () => {
  const repo = join(dir, 'blueprints')
  await createRepo(repo, [['app/v1', kptfile('app')]])
  const main = new GitSources(dir, { scratch: dir })
  const listed = await revisionsOf(main, repo)
  const pins = await main.pins()

  // Upstream moves on after the main thread listed: a new revision and a new branch head.
  await git(repo, 'commit', '-q', '--allow-empty', '-m', 'v2')
  await git(repo, 'tag', 'app/v2')
  expect(await revisionsOf(new GitSources(dir, { scratch: dir }), repo)).toHaveLength(listed.length + 1)

  const thread = new GitSources(dir, { scratch: dir }, Promise.resolve(pins))
  expect(await revisionsOf(thread, repo)).toEqual(listed)
})

test('a repository the main thread could not open is not opened by the threads either, with the same reason', async () => {
  const missing = join(dir, 'missing')
  const main = new GitSources(dir, { scratch: dir })
  const problems = (await listUpstreams([location(missing)], main)).problems
  expect([...problems.values()]).toEqual([`repository ${missing}: ${missing} does not exist`])

  // Created after the main thread listed: a thread that opened it would list revisions the main thread has not.
  await createRepo(missing, [['app/v1', kptfile('app')]])
  const thread = new GitSources(dir, { scratch: dir }, main.pins())
  expect((await listUpstreams([location(missing)], thread)).problems).toEqual(problems)
})

test('threads wait for refs that come later than they start', async () => {
  const repo = join(dir, 'blueprints')
  await createRepo(repo, [['app/v1', kptfile('app')]])
  const main = new GitSources(dir, { scratch: dir })
  let hand: (pins: Awaited<ReturnType<GitSources['pins']>>) => void = () => undefined
  const thread = new GitSources(dir, { scratch: dir }, new Promise((resolve) => (hand = resolve)))
  const threadListing = revisionsOf(thread, repo)
  const listed = await revisionsOf(main, repo)
  await git(repo, 'tag', 'app/v2')
  hand(await main.pins())
  expect(await threadListing).toEqual(listed)
})
