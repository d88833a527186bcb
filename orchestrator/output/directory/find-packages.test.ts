import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { findPackages } from '../../package/directory.js'
import { DirectoryWriter } from './writer.js'

let out: string
beforeEach(() => (out = mkdtempSync(join(tmpdir(), 'find-packages-'))))
afterEach(() => rmSync(out, { recursive: true, force: true }))

const file = (path: string, text = 'x\n') => {
  mkdirSync(join(out, path, '..'), { recursive: true })
  writeFileSync(join(out, path), text)
}

test('packages are the directories with a Kptfile file, in sorted order; what is below a package belongs to it', () => {
  file('b-repo/app/Kptfile')
  file('b-repo/app/sub/Kptfile')
  file('a-repo/one/Kptfile')
  file('a-repo/deep/er/two/Kptfile')
  file('a-repo/none/cm.yaml')
  file('.hidden/p/Kptfile')
  // A directory named Kptfile, or a link to one, makes no package.
  mkdirSync(join(out, 'c-repo/dir/Kptfile'), { recursive: true })
  file('c-repo/target')
  mkdirSync(join(out, 'c-repo/link'))
  symlinkSync(join(out, 'c-repo/target'), join(out, 'c-repo/link/Kptfile'))
  expect(findPackages(out)).toEqual(['a-repo/deep/er/two', 'a-repo/one', 'b-repo/app'])
})

test('the output directory itself is never a package, and a missing one holds none', () => {
  file('Kptfile')
  file('repo/p/Kptfile')
  expect(findPackages(out)).toEqual(['repo/p'])
  expect(findPackages(join(out, 'missing'))).toEqual([])
})

test('a package path outside the output directory: packageDir throws, packageDirInside has no directory', () => {
  const writer = new DirectoryWriter(out)
  expect(writer.packageDirInside('repo/pkg')).toBe(join(out, 'repo', 'pkg'))
  expect(writer.packageDir('repo/pkg')).toBe(join(out, 'repo', 'pkg'))
  for (const path of ['../repo/pkg', 'repo/../../x', '/etc', '']) {
    expect(writer.packageDirInside(path)).toBeUndefined()
    expect(() => writer.packageDir(path)).toThrow('is outside the output directory')
  }
})
