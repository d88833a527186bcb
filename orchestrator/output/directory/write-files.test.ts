import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { packFiles, removeTree, unpackFiles, writePackageFiles } from './write-files.js'
import type { FileToWrite } from './write-files.js'

test('packed files unpack to the same paths, order, contents and modes, empty files included', () => {
  const files = new Map<string, FileToWrite>([
    ['Kptfile', { content: Buffer.from('kind: Kptfile\n') }],
    ['empty.yaml', { content: Buffer.alloc(0) }],
    ['bin/run.sh', { content: Buffer.from('#!/bin/sh\n'), executable: true }],
    ['z.yaml', { content: Buffer.from('ünïcode: ✓\n') }],
  ])
  const packed = packFiles(files)
  expect(packed.bytes.byteLength).toBe([...files.values()].reduce((n, f) => n + f.content.byteLength, 0))
  const unpacked = unpackFiles(structuredClone(packed, { transfer: [packed.bytes] }))
  expect([...unpacked.keys()]).toEqual([...files.keys()])
  for (const [path, file] of files) {
    expect(Buffer.from(unpacked.get(path)!.content).equals(file.content)).toBe(true)
    expect(unpacked.get(path)!.executable).toBe(file.executable)
  }
  // Handed over, not copied: the sender's buffer is detached.
  expect(packed.bytes.byteLength).toBe(0)
})

test('packing never transfers a buffer the files share with others (Node pools small buffers)', () => {
  const shared = Buffer.from('a: 1\n')
  const packed = packFiles(new Map([['a.yaml', { content: shared }]]))
  structuredClone(packed, { transfer: [packed.bytes] })
  expect(shared.toString()).toBe('a: 1\n')
})

test('removeTree removes a package with subpackages and empty directories, and never follows a link out of it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'remove-tree-'))
  try {
    const outside = join(dir, 'outside')
    mkdirSync(outside)
    writeFileSync(join(outside, 'keep.yaml'), 'a: 1\n')
    const pkg = join(dir, 'pkg')
    writePackageFiles(
      pkg,
      new Map([
        ['Kptfile', { content: Buffer.from('kind: Kptfile\n') }],
        ['sub/deep/cm.yaml', { content: Buffer.from('a: 1\n') }],
      ]),
    )
    mkdirSync(join(pkg, 'empty'))
    symlinkSync(outside, join(pkg, 'link-to-dir'))
    symlinkSync(join(outside, 'keep.yaml'), join(pkg, 'link-to-file.yaml'))
    removeTree(pkg)
    expect(existsSync(pkg)).toBe(false)
    expect(readFileSync(join(outside, 'keep.yaml'), 'utf8')).toBe('a: 1\n')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
