import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { textFile } from '../../package/files.js'
import type { PackageFiles } from '../../package/files.js'
import { StagingThread } from './staging-thread.js'
import { compiledWorker } from '../../../test/support/worker.js'

// The thread runs compiled code: the build's (npm test builds first).
let worker: URL
beforeAll(async () => {
  worker = await compiledWorker(new URL('./staging-worker.ts', import.meta.url))
}, 60_000)

let dir: string
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'staging-thread-'))))
afterEach(() => rmSync(dir, { recursive: true, force: true }))

const pkg = (n: number): PackageFiles =>
  new Map([
    ['Kptfile', textFile(`kind: Kptfile\nmetadata: {name: p${n}}\n`)],
    ['sub/deep/cm.yaml', textFile(`data: {n: "${n}"}\n`)],
    ['run.sh', { content: Buffer.from('#!/bin/sh\n'), executable: true }],
  ])

describe('StagingThread', () => {
  test('writes every queued package, nested directories and modes included (writing in line whenever two are queued)', async () => {
    const thread = new StagingThread(2, worker)
    for (let n = 0; n < 20; n++) await thread.write(join(dir, String(n)), pkg(n))
    expect(await thread.settle()).toEqual(new Map())
    await thread.close()
    for (let n = 0; n < 20; n++) {
      expect(readFileSync(join(dir, String(n), 'Kptfile'), 'utf8')).toBe(`kind: Kptfile\nmetadata: {name: p${n}}\n`)
      expect(readFileSync(join(dir, String(n), 'sub/deep/cm.yaml'), 'utf8')).toBe(`data: {n: "${n}"}\n`)
      expect(statSync(join(dir, String(n), 'run.sh')).mode & 0o777).toBe(0o755)
      expect(statSync(join(dir, String(n), 'Kptfile')).mode & 0o777).toBe(0o644)
    }
  })

  test('a package that cannot be written is named with the error; the others are written', async () => {
    writeFileSync(join(dir, 'a-file'), '')
    const thread = new StagingThread(32, worker)
    await thread.write(join(dir, 'ok-1'), pkg(1))
    await thread.write(join(dir, 'a-file', 'bad'), pkg(2))
    await thread.write(join(dir, 'ok-3'), pkg(3))
    const failures = await thread.settle()
    await thread.close()
    expect([...failures.keys()]).toEqual([join(dir, 'a-file', 'bad')])
    expect(failures.get(join(dir, 'a-file', 'bad'))).toMatch(/ENOTDIR/)
    expect(readFileSync(join(dir, 'ok-3', 'Kptfile'), 'utf8')).toContain('p3')
  })

  test('a caller that finds the queue full writes the package itself, and a failure there is named too', async () => {
    writeFileSync(join(dir, 'a-file'), '')
    // Nothing may wait for the thread: every package is written in line, and the thread never starts.
    const thread = new StagingThread(0, new URL('../no-such-worker.js', import.meta.url))
    await thread.write(join(dir, 'ok-1'), pkg(1))
    await thread.write(join(dir, 'a-file', 'bad'), pkg(2))
    expect([...(await thread.settle()).keys()]).toEqual([join(dir, 'a-file', 'bad')])
    await thread.close()
    expect(readFileSync(join(dir, 'ok-1', 'sub/deep/cm.yaml'), 'utf8')).toBe('data: {n: "1"}\n')
    expect(statSync(join(dir, 'ok-1', 'run.sh')).mode & 0o777).toBe(0o755)
  })

  test('removes the trees it is given, and names one it cannot remove', async () => {
    const thread = new StagingThread(32, worker)
    for (let n = 0; n < 3; n++) await thread.write(join(dir, String(n)), pkg(n))
    expect(await thread.settle()).toEqual(new Map())
    for (let n = 0; n < 3; n++) thread.remove(join(dir, String(n)))
    thread.remove(join(dir, 'missing'))
    const failures = await thread.settle()
    await thread.close()
    expect([...failures.keys()]).toEqual([join(dir, 'missing')])
    expect(failures.get(join(dir, 'missing'))).toMatch(/ENOENT/)
    expect(readdirSync(dir)).toEqual([])
  })

  test('settles at once when nothing was queued', async () => {
    const thread = new StagingThread(32, worker)
    expect(await thread.settle()).toEqual(new Map())
    await thread.close()
  })
})
