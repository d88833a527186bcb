import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { jest } from '@jest/globals'
import { DirectoryOutput } from './directory-output.js'

let out: string
beforeEach(() => (out = mkdtempSync(join(tmpdir(), 'directory-output-'))))
afterEach(() => rmSync(out, { recursive: true, force: true }))

// The TypeScript sources under test have no compiled read-ahead worker: no thread starts, as with the fast path off.
test('where no read-ahead thread can start, the share is read package by package, its paths resolved once each', async () => {
  const paths = Array.from({ length: 40 }, (_, i) => `repo/p${i}`)
  for (const path of paths) {
    mkdirSync(join(out, path), { recursive: true })
    writeFileSync(join(out, path, 'Kptfile'), `kind: Kptfile\nmetadata: {name: ${path}}\n`)
  }
  const output = new DirectoryOutput(out, 0)
  const resolved = jest.spyOn(output.writer, 'packageDirInside')
  await output.prefetch(paths, { alone: true })
  for (const path of paths) {
    const stored = await output.read(path)
    expect(stored.published?.get('Kptfile')?.content.toString()).toContain(path)
  }
  // Each read's own path, and the rest of the share once for the one attempt to start the thread: not at every read.
  expect(resolved.mock.calls.length).toBeLessThanOrEqual(2 * paths.length)
  output.close()
})
