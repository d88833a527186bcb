import { setFastPathsOff } from '../../../functions/krm/fast-paths.js'
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { readPackageDirectory } from '../../package/directory.js'
import { ReadAhead } from './read-ahead.js'
import { compiledWorker } from '../../../test/support/worker.js'

// This suite tests the fast path itself: on, whatever KPT_VARIANTS_NO_FAST_PATHS says (the oracle run).
beforeAll(() => setFastPathsOff([]))

// The worker runs compiled code: the build's (npm test builds first).
let worker: URL
beforeAll(async () => {
  worker = await compiledWorker(new URL('./read-ahead-worker.ts', import.meta.url))
}, 60_000)

let dir: string
const packages = ['a', 'b', 'c', 'd', 'e']
const dirOf = (name: string) => join(dir, name)

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'read-ahead-'))
  for (const name of packages) {
    mkdirSync(join(dir, name, 'sub'), { recursive: true })
    writeFileSync(join(dir, name, 'Kptfile'), `kind: Kptfile # ${name}\n`)
    writeFileSync(join(dir, name, 'sub', 'cm.yaml'), `data: {name: ${name}}\n`)
    writeFileSync(join(dir, name, 'run.sh'), '#!/bin/sh\n')
    chmodSync(join(dir, name, 'run.sh'), 0o755)
  }
  writeFileSync(join(dir, 'not-a-directory'), 'x\n')
})

/** The test's thread, stopped after it whatever happened. */
let running: ReadAhead | undefined
afterEach(() => {
  running?.close()
  running = undefined
  rmSync(dir, { recursive: true, force: true })
})

/** Starts the test's thread (on the build's worker). */
function startThread(dirs: string[], window?: number): ReadAhead {
  running = ReadAhead.start(dirs, worker, window)!
  return running
}

test('each package taken is what reading it in line gives: paths, bytes and modes; a missing one has no files', async () => {
  const dirs = [...packages.map(dirOf), join(dir, 'missing')]
  const ahead = startThread(dirs)
  for (const [i, d] of dirs.entries()) expect((await ahead.take(i))?.files).toEqual(readPackageDirectory(d))
})

test('what the thread cannot read is left to the caller, who meets the error', async () => {
  const ahead = startThread([dirOf('a'), join(dir, 'not-a-directory'), '', dirOf('b')])
  expect((await ahead.take(0))?.files?.size).toBe(3)
  expect(await ahead.take(1)).toBeUndefined()
  expect(() => readPackageDirectory(join(dir, 'not-a-directory'))).toThrow('exists and is not a directory')
  expect(await ahead.take(2)).toBeUndefined()
  expect((await ahead.take(3))?.files).toEqual(readPackageDirectory(dirOf('b')))
})

test('packages skipped (their render was answered by its record) are dropped, and the thread reads on', async () => {
  const ahead = startThread(packages.map(dirOf), 1)
  expect((await ahead.take(0))?.files).toEqual(readPackageDirectory(dirOf('a')))
  expect((await ahead.take(3))?.files).toEqual(readPackageDirectory(dirOf('d')))
  expect((await ahead.take(4))?.files).toEqual(readPackageDirectory(dirOf('e')))
})

test('the thread reads no more than its window ahead of the packages taken', async () => {
  const ahead = startThread(packages.map(dirOf), 2)
  // The thread stops before the third package (index 2): its window of two is full.
  expect(await ahead.full()).toBe(2)
  writeFileSync(join(dir, 'd', 'Kptfile'), 'kind: Kptfile # d, edited\n')
  expect((await ahead.take(0))?.files?.get('Kptfile')?.content.toString()).toBe('kind: Kptfile # a\n')
  expect((await ahead.take(1))?.files?.get('Kptfile')?.content.toString()).toBe('kind: Kptfile # b\n')
  // `d` is the fourth: not read before `a` was taken.
  expect((await ahead.take(3))?.files?.get('Kptfile')?.content.toString()).toBe('kind: Kptfile # d, edited\n')
})

test('no thread without a compiled worker, or without packages', () => {
  expect(ReadAhead.start([dirOf('a')], new URL('file:///nonexistent/read-ahead-worker.js'))).toBeUndefined()
  expect(ReadAhead.start([], worker)).toBeUndefined()
})
