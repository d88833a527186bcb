import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRepo, git } from '../../test/support/git-repo.js'
import { clonePath } from '../cache/layout.js'
import { listCloneRefs, syncClone } from './clones.js'

let dir: string
let source: string
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'clones-'))
  source = join(dir, 'blueprints')
  await createRepo(source, [['app/v1', { 'app/Kptfile': 'kind: Kptfile\n' }]])
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

test('a clone is made once, then fetched: new tags arrive, deleted ones go', async () => {
  const clone = clonePath(join(dir, 'cache'), source, 'upstreams')
  expect(clone).toMatch(/\/cache\/upstreams\/blueprints-[0-9a-f]{12}\.git$/)
  await syncClone(source, clone)
  // Gone if the clone were made again.
  writeFileSync(join(clone, 'kept'), '')
  await git(source, 'tag', 'app/v2')
  await git(source, 'tag', '-d', 'app/v1')
  await syncClone(source, clone)
  expect(await git(clone, 'tag')).toBe('app/v2')
  expect(existsSync(join(clone, 'kept'))).toBe(true)
})

test('what a clone killed halfway left is cloned over, not fetched into', async () => {
  const clone = clonePath(join(dir, 'cache'), source)
  // A clone killed before it wrote HEAD, and the partial clone of another killed run.
  mkdirSync(join(clone, 'objects'), { recursive: true })
  mkdirSync(join(`${clone}.partial`, 'objects'), { recursive: true })
  await syncClone(source, clone)
  expect(await git(clone, 'tag')).toBe('app/v1')
  expect(existsSync(`${clone}.partial`)).toBe(false)
})

test('a clone the remote has not moved past is not fetched; refs a fetch brings are packed', async () => {
  const clone = clonePath(join(dir, 'cache'), source)
  await syncClone(source, clone)
  await syncClone(source, clone)
  // A fetch writes FETCH_HEAD; the clone wrote none.
  expect(existsSync(join(clone, 'FETCH_HEAD'))).toBe(false)
  await git(source, 'tag', 'app/v2')
  await syncClone(source, clone)
  expect(existsSync(join(clone, 'FETCH_HEAD'))).toBe(true)
  expect(await git(clone, 'tag')).toBe('app/v1\napp/v2')
  expect(existsSync(join(clone, 'refs', 'tags', 'app', 'v2'))).toBe(false)
  expect(readFileSync(join(clone, 'packed-refs'), 'utf8')).toContain('refs/tags/app/v2')
})

test('a sync that fetched nothing hands over the refs it listed, tags with their dates; a clone or a fetch, none', async () => {
  const clone = clonePath(join(dir, 'cache'), source)
  expect(await syncClone(source, clone)).toBeUndefined()
  await git(source, 'branch', 'drafts/app/packagevariant-1')
  expect(await syncClone(source, clone)).toBeUndefined()
  const handed = await syncClone(source, clone)
  expect(handed).toEqual(await listCloneRefs(clone))
  expect([...handed!.refs.keys()].sort()).toEqual([
    'refs/heads/drafts/app/packagevariant-1',
    'refs/heads/main',
    'refs/tags/app/v1',
  ])
  expect(handed!.refs.get('refs/tags/app/v1')).toBe(await git(source, 'rev-parse', 'app/v1'))
  expect(handed!.tagDates.get('refs/tags/app/v1')).toBe(
    Number(await git(source, 'log', '-1', '--format=%ct', 'app/v1')),
  )
  expect([...handed!.tagDates.keys()]).toEqual(['refs/tags/app/v1'])
})
