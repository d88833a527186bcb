import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { textFile } from '../../package/files.js'
import { DirectoryWriter, stagingPrefix } from './writer.js'

let out: string
beforeEach(() => (out = mkdtempSync(join(tmpdir(), 'writer-'))))
afterEach(() => rmSync(out, { recursive: true, force: true }))

const pkg = (text: string) =>
  new Map([
    ['Kptfile', textFile(`kind: Kptfile\nmetadata: {name: ${text}}\n`)],
    ['sub/cm.yaml', textFile(`data: {v: ${text}}\n`)],
  ])

test('a committed package replaces the old one whole; the old tree is gone once removals settle, the staging directory at close', async () => {
  const writer = new DirectoryWriter(out)
  writer.writePackage('repo/app', pkg('old'))
  writer.commit('repo/app', writer.stage(new Map([['Kptfile', textFile('kind: Kptfile\nmetadata: {name: new}\n')]])))
  expect(readdirSync(join(out, 'repo/app'))).toEqual(['Kptfile'])
  expect(readFileSync(join(out, 'repo/app/Kptfile'), 'utf8')).toContain('new')
  expect(await writer.settleRemovals()).toEqual(new Map())
  const staging = readdirSync(out).filter((name) => name.startsWith(stagingPrefix))
  expect(staging).toHaveLength(1)
  expect(readdirSync(join(out, staging[0]!))).toEqual([])
  writer.close()
  expect(readdirSync(out)).toEqual(['repo'])
  expect(existsSync(join(out, 'repo/app/sub'))).toBe(false)
})
