import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { readPackageAndDigest, readPackageDirectory, statPackageDirectory } from './directory.js'

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'package-directory-'))
  mkdirSync(join(dir, 'sub'))
  mkdirSync(join(dir, '.git'))
  writeFileSync(join(dir, 'Kptfile'), 'kind: Kptfile\n')
  writeFileSync(join(dir, 'sub', 'cm.yaml'), 'kind: ConfigMap\n'.repeat(500))
  writeFileSync(join(dir, 'run.sh'), '#!/bin/sh\n')
  writeFileSync(join(dir, 'empty'), '')
  writeFileSync(join(dir, '.git', 'HEAD'), 'ref: refs/heads/main\n')
  chmodSync(join(dir, 'run.sh'), 0o755)
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

/** A time from which every file just written is old enough to be trusted (past the racy window). */
const later = () => Date.now() + 60_000

test('a package read with its digest: the files and modes readPackageDirectory gives, the digest statPackageDirectory gives', () => {
  const now = later()
  const read = readPackageAndDigest(dir, now)!
  expect(read.files).toEqual(readPackageDirectory(dir))
  expect([...read.files.keys()]).toEqual(['Kptfile', 'empty', 'run.sh', 'sub/cm.yaml'])
  expect(read.files.get('sub/cm.yaml')!.content.toString()).toBe(readFileSync(join(dir, 'sub', 'cm.yaml'), 'utf8'))
  expect(read.files.get('empty')!.content.length).toBe(0)
  expect(read.files.get('run.sh')!.executable).toBe(true)
  expect(read.files.get('Kptfile')!.executable).toBeUndefined()
  expect(read.digest).toBeDefined()
  expect(read.digest).toBe(statPackageDirectory(dir, now))
})

test('no digest for a package a file of which changed too recently to be trusted; none at all for a missing directory', () => {
  const old = new Date(Date.now() - 60_000)
  for (const file of ['Kptfile', 'empty', 'run.sh', 'sub/cm.yaml', 'sub', '.']) utimesSync(join(dir, file), old, old)
  // Changed now (ctime): within the racy window of now.
  expect(readPackageAndDigest(dir)!.digest).toBeUndefined()
  expect(statPackageDirectory(dir)).toBeUndefined()
  expect(readPackageAndDigest(join(dir, 'missing'))).toBeUndefined()
  expect(() => readPackageAndDigest(join(dir, 'Kptfile'))).toThrow('exists and is not a directory')
})

test('the digest changes when a file is edited, even to the same size', () => {
  const before = readPackageAndDigest(dir, later())!.digest
  writeFileSync(join(dir, 'Kptfile'), 'kind: KptfilX\n')
  // Its modification time set apart: file times tick coarsely, and an edit in the same tick is the racy case above.
  const apart = new Date(Date.now() - 30_000)
  utimesSync(join(dir, 'Kptfile'), apart, apart)
  expect(readPackageAndDigest(dir, later())!.digest).not.toBe(before)
})
