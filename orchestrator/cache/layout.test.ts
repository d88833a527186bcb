import { join } from 'node:path'
import {
  catalogFile,
  clonePath,
  clusterDir,
  defaultCacheDir,
  failuresFile,
  quietRunFile,
  renderRecordFile,
  stagingDir,
} from './layout.js'

test('the default cache follows XDG, else the home directory', () => {
  expect(defaultCacheDir({ XDG_CACHE_HOME: '/xdg', HOME: '/home/u' })).toBe('/xdg/kpt-variants')
  expect(defaultCacheDir({ HOME: '/home/u' })).toBe('/home/u/.cache/kpt-variants')
})

test('one record of renders per output, and its quiet-run record beside it under the same name', () => {
  const file = renderRecordFile('/cache', '/work/out')
  expect(file).toMatch(/^\/cache\/renders\/[0-9a-f]{32}\.json$/)
  expect(file).not.toBe(renderRecordFile('/cache', '/work/out2'))
  expect(quietRunFile(file)).toBe(file.replace('/renders/', '/quiet-runs/'))
})

test('the names of earlier caches are kept: a cache made before still answers', () => {
  // Fixed values: a change here makes every cache's clones, records and catalogs unfindable.
  expect(renderRecordFile('/c', '/work/out')).toBe('/c/renders/260e8b9a1c557226f6d9a85c5d5bdba7.json')
  expect(failuresFile('/c', 'fleet')).toBe('/c/runs/f35f940f055fcd1b.json')
  expect(catalogFile('/c', 'https://example.com/blueprints.git')).toBe(
    '/c/catalogs/cc8ef16c2cafc413d0e30011e68eed3b.json',
  )
  expect(clonePath('/c', 'https://example.com/org/blueprints.git', 'upstreams')).toBe(
    '/c/upstreams/blueprints-3be3b1f844c8.git',
  )
  expect(clonePath('/c', 'git@example.com:org/my repo.git')).toMatch(/^\/c\/repos\/my_repo-[0-9a-f]{12}\.git$/)
  expect(stagingDir('/c')).toBe(join('/c', 'staging'))
  expect(clusterDir('/c')).toBe(join('/c', 'cluster'))
})
