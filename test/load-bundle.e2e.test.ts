/**
 * bin/load-bundle.js: every program of bin/ is compiled from the code cache
 * the build made for it, under the V8 flags its launcher runs with; a cache
 * V8 refuses, or none, only costs the time.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { execa } from 'execa'
import { functionBins, repoRoot } from './e2e/runner.js'

/** Loads program `name` with the loader at `loader` in a fresh process: how it used the cache, and what it exports. */
async function load(loader: string, name: string): Promise<{ codeCache: string; exports: string[] }> {
  const script = `import { loadBundle } from ${JSON.stringify(pathToFileURL(loader).href)}
const { codeCache, exports } = loadBundle(${JSON.stringify(name)})
console.log(JSON.stringify({ codeCache, exports: Object.keys(exports).sort() }))`
  const run = await execa(process.execPath, ['--input-type=module', '-e', script])
  return JSON.parse(String(run.stdout)) as { codeCache: string; exports: string[] }
}

const loader = join(repoRoot, 'bin', 'load-bundle.js')

test.each(functionBins())('bin/%s runs its program compiled from the build’s code cache', async (name) => {
  expect(await load(loader, name)).toEqual({ codeCache: 'used', exports: ['main'] })
})

test('bin/kpt-variants too, under the V8 flags it sets (a cache made under others is refused)', async () => {
  expect(await load(loader, 'kpt-variants')).toEqual({ codeCache: 'used', exports: ['cli', 'runRenderWorker'] })
})

test('a damaged cache is refused and a missing one skipped: the program is compiled as usual', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'load-bundle-'))
  try {
    mkdirSync(join(dir, 'bin'))
    mkdirSync(join(dir, 'dist', 'bundles'), { recursive: true })
    copyFileSync(loader, join(dir, 'bin', 'load-bundle.js'))
    writeFileSync(join(dir, 'package.json'), '{"type": "module"}\n')
    const bundle = (name: string) => join(dir, 'dist', 'bundles', name)
    copyFileSync(join(repoRoot, 'dist', 'bundles', 'package-context.cjs'), bundle('package-context.cjs'))
    writeFileSync(bundle('package-context.cjs.cache'), Buffer.alloc(4096, 7))
    expect(await load(join(dir, 'bin', 'load-bundle.js'), 'package-context')).toEqual({
      codeCache: 'rejected',
      exports: ['main'],
    })
    rmSync(bundle('package-context.cjs.cache'))
    expect(await load(join(dir, 'bin', 'load-bundle.js'), 'package-context')).toEqual({
      codeCache: 'none',
      exports: ['main'],
    })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
