import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { version } from '../util/version.js'
import { writeFileAtomic } from './atomic-write.js'
import { codeIdentity, codeIdentityOf } from './identity.js'
import { readRecord, writeRecord } from './record.js'
import type { RecordFormat } from './record.js'

let dir: string
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'cache-'))))
afterEach(() => rmSync(dir, { recursive: true, force: true }))

describe('records', () => {
  const format: RecordFormat<{ entries: Record<string, number> }> = {
    version: 3,
    holds: (record) => typeof record.entries === 'object' && record.entries !== null,
  }

  test('a record is written with its version first, in a directory made for it, and read back', () => {
    const file = join(dir, 'kind', 'a.json')
    expect(writeRecord(file, format, { entries: { x: 1 } })).toBe(true)
    expect(readFileSync(file, 'utf8')).toBe('{"version":3,"entries":{"x":1}}')
    expect(readRecord(file, format)?.entries).toEqual({ x: 1 })
  })

  test('a record of another version, an unversioned one, a damaged or a missing one is a miss, never an error', () => {
    const file = join(dir, 'a.json')
    expect(readRecord(file, format)).toBeUndefined()
    for (const text of [
      '{"version":2,"entries":{"x":1}}',
      '{"entries":{"x":1}}',
      '{"version":3}',
      '{"version":3,"entries":null}',
      '{"version":3,"entries":',
      '',
      'null',
      '[3]',
      '"text"',
    ]) {
      writeFileSync(file, text)
      expect({ text, record: readRecord(file, format) }).toEqual({ text, record: undefined })
    }
    // A directory where the record should be.
    mkdirSync(join(dir, 'b.json'))
    expect(readRecord(join(dir, 'b.json'), format)).toBeUndefined()
  })

  test('a record that would not change is not written again', () => {
    const file = join(dir, 'a.json')
    writeRecord(file, format, { entries: { x: 1 } })
    const before = statSync(file, { bigint: true }).ino
    expect(writeRecord(file, format, { entries: { x: 1 } })).toBe(false)
    expect(statSync(file, { bigint: true }).ino).toBe(before)
    expect(writeRecord(file, format, { entries: { x: 2 } })).toBe(true)
    expect(readdirSync(dir)).toEqual(['a.json'])
  })

  test('a record read back and written again keeps the version of its format', () => {
    const file = join(dir, 'a.json')
    writeFileSync(file, '{"version":3,"entries":{"x":1}}')
    const record = readRecord(file, format)!
    writeRecord(join(dir, 'b.json'), { ...format, version: 4 }, record)
    expect(readFileSync(join(dir, 'b.json'), 'utf8')).toBe('{"version":4,"entries":{"x":1}}')
  })
})

describe('the atomic write', () => {
  test('the new file replaces the old whole: until the rename a reader finds the old one', () => {
    const file = join(dir, 'record.json')
    writeFileSync(file, 'old')
    let seen: string | undefined
    writeFileAtomic(file, 'new', { beforeRename: () => (seen = readFileSync(file, 'utf8')) })
    expect(seen).toBe('old')
    expect(readFileSync(file, 'utf8')).toBe('new')
    expect(readdirSync(dir)).toEqual(['record.json'])
  })

  test('a write stopped before the rename leaves the old file and no temporary one, and its error is thrown as it is', () => {
    const file = join(dir, 'record.json')
    writeFileSync(file, 'old')
    const refused = new Error('changed meanwhile')
    expect(() =>
      writeFileAtomic(file, 'new', {
        beforeRename: () => {
          throw refused
        },
      }),
    ).toThrow(refused)
    expect(readFileSync(file, 'utf8')).toBe('old')
    expect(readdirSync(dir)).toEqual(['record.json'])
  })

  test('a write that fails names the file, leaves what was there and no temporary file', () => {
    // A directory that is not empty cannot be replaced by a file.
    const file = join(dir, 'taken')
    mkdirSync(join(file, 'inside'), { recursive: true })
    expect(() => writeFileAtomic(file, 'new')).toThrow(new RegExp(`^cannot write ${file}: E`))
    expect(readdirSync(dir)).toEqual(['taken'])
    expect(readdirSync(file)).toEqual(['inside'])
  })

  test('a missing directory is made; a mode is set on the new file', () => {
    const file = join(dir, 'a', 'b', 'script.sh')
    writeFileAtomic(file, '#!/bin/sh\n', { mode: 0o751 })
    expect(readFileSync(file, 'utf8')).toBe('#!/bin/sh\n')
    expect(statSync(file).mode & 0o777).toBe(0o751)
  })
})

describe('the code identity', () => {
  test('the identity follows the bundle’s bytes and the version, not the file’s times or place', () => {
    const bundle = join(dir, 'kpt-variants.cjs')
    writeFileSync(bundle, 'module.exports = 1\n')
    const first = codeIdentityOf('1.0.0', bundle)
    expect(first).toMatch(/^1\.0\.0\+[0-9a-f]{32}$/)
    // Touched, or copied elsewhere (an install): the same code.
    utimesSync(bundle, new Date(2020, 0, 1), new Date(2020, 0, 1))
    expect(codeIdentityOf('1.0.0', bundle)).toBe(first)
    writeFileSync(join(dir, 'copy.cjs'), 'module.exports = 1\n')
    expect(codeIdentityOf('1.0.0', join(dir, 'copy.cjs'))).toBe(first)
    // Rebuilt with one byte more, or another version: other code.
    writeFileSync(bundle, 'module.exports = 2\n')
    expect(codeIdentityOf('1.0.0', bundle)).not.toBe(first)
    writeFileSync(bundle, 'module.exports = 1\n')
    expect(codeIdentityOf('1.0.1', bundle)).not.toBe(first)
  })

  test('an unreadable program matches nothing recorded', () => {
    const gone = join(dir, 'gone.cjs')
    expect(codeIdentityOf('1.0.0', gone)).toMatch(/^1\.0\.0\+unread:/)
    expect(codeIdentityOf('1.0.0', gone)).not.toBe(codeIdentityOf('1.0.0', gone))
  })

  test('the running code’s identity is taken once, with the version', () => {
    expect(codeIdentity()).toBe(codeIdentity())
    expect(codeIdentity().startsWith(`${version}+`)).toBe(true)
  })
})
