/**
 * A thread's module compiled from the TypeScript sources for a unit test:
 * the orchestrator starts its threads from compiled modules beside its own
 * (dist/ or the bundle's folder), which the sources under test do not have.
 * esbuild bundles the worker's module and what it imports into one file in a
 * temporary directory, so the test runs the code as it is now, without a build.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { build } from 'esbuild-wasm'

const made: string[] = []
process.once('exit', () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
})

/** Compiles the worker module `source` (a URL of its `.ts` file) into a module a thread can start. */
export async function compiledWorker(source: URL): Promise<URL> {
  const dir = mkdtempSync(join(tmpdir(), 'kpt-variants-worker-'))
  made.push(dir)
  const outfile = join(dir, basename(fileURLToPath(source)).replace(/\.ts$/, '.mjs'))
  await build({
    entryPoints: [fileURLToPath(source)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    // Bundled CommonJS libraries require Node's modules; an ES module has no `require` of its own.
    banner: {
      js: "import { createRequire as createRequireForWorker } from 'node:module'; const require = createRequireForWorker(import.meta.url);",
    },
    logLevel: 'warning',
  })
  return pathToFileURL(outfile)
}
