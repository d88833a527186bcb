import { setFastPathsOff } from '../../../functions/krm/fast-paths.js'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { statPackageDirectory } from '../../package/directory.js'
import { DirectoryOutput } from './directory-output.js'
import { backgroundShare, digestInBackground } from './stat-thread.js'
import { compiledWorker } from '../../../test/support/worker.js'

// This suite tests the fast path itself: on, whatever KPT_VARIANTS_NO_FAST_PATHS says (the oracle run).
beforeAll(() => setFastPathsOff([]))

// The worker runs compiled code: the build's (npm test builds first).
let worker: URL
beforeAll(async () => {
  worker = await compiledWorker(new URL('./stat-worker.ts', import.meta.url))
}, 60_000)

let dir: string
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'stat-thread-'))
  for (const name of ['a', 'b']) {
    mkdirSync(join(dir, 'repo', name, 'sub'), { recursive: true })
    writeFileSync(join(dir, 'repo', name, 'Kptfile'), `kind: Kptfile # ${name}\n`)
    writeFileSync(join(dir, 'repo', name, 'sub', 'cm.yaml'), 'data: {}\n')
  }
})
/** A time past the racy window of every file written above, so that the digests exist. */
const later = () => Date.now() + 5000
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test('the digests taken on a thread are those taken in line, missing packages included', async () => {
  expect(existsSync(worker)).toBe(true)
  const dirs = ['a', 'b', 'missing'].map((name) => join(dir, 'repo', name))
  const now = later()
  const digests = await digestInBackground(dirs, worker, now)
  expect(digests).toEqual(new Map(dirs.map((d) => [d, statPackageDirectory(d, now)])))
  expect(digests!.get(dirs[0]!)).toMatch(/^[0-9a-f]{64}$/)
  expect(digests!.get(dirs[0]!)).not.toBe(digests!.get(dirs[1]!))
})

test('no thread without a compiled worker (the caller takes each digest when needed), or without packages', () => {
  expect(digestInBackground([join(dir, 'repo', 'a')], new URL('file:///nonexistent/stat-worker.js'))).toBeUndefined()
  expect(digestInBackground([], worker)).toBeUndefined()
})

test('a digest taken ahead answers once: after that the package may have been rewritten', () => {
  const ahead = 'f'.repeat(64)
  const output = new DirectoryOutput(dir, 0, new Map([[join(dir, 'repo', 'a'), ahead]]))
  expect(output.statDigest('repo/a')).toBe(ahead)
  expect(output.statDigest('repo/a')).toBe(statPackageDirectory(join(dir, 'repo', 'a')))
})

test('a thread takes a share only of an output big enough to pay for its start, and then less than half', () => {
  expect(backgroundShare(0)).toBe(0)
  expect(backgroundShare(100)).toBe(0)
  for (const count of [1_000, 10_000]) {
    const share = backgroundShare(count)
    expect(share).toBeGreaterThan(0)
    // The thread's start is worth the packages this thread takes beyond the thread's share.
    expect(count - share - share).toBeGreaterThan(0)
    expect(share / count).toBeGreaterThan(count === 10_000 ? 0.45 : 0.2)
  }
})
