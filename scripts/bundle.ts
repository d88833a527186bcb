/**
 * Bundles each KRM function's program into one file, dist/bundles/<name>.js,
 * which its launcher in bin/ imports (run by `npm run build`, after tsc, and
 * by the Dockerfile). `kpt fn render` starts a function once per package: a
 * program in one file starts ~60 ms sooner than one that loads its ~300
 * modules (ours and the yaml library's) file by file, about a quarter of a
 * function's run on a 50-resource package. The orchestrator is not bundled:
 * its worker threads and on-demand modules load by path, and it starts once
 * per run.
 */
import { mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild-wasm'
import { functionPrograms } from './programs.js'

const dist = resolve(fileURLToPath(new URL('..', import.meta.url)))
const out = join(dist, 'bundles')

/** The program every function's launcher ran before it was bundled. */
function program(name: string, fn: string): string {
  return [`import { runMain } from './functions/krm/main.js'`, `import { ${fn} } from './functions/${name}/index.js'`, `process.exitCode = await runMain(${fn}, process.argv.slice(2))`].join('\n')
}

mkdirSync(out, { recursive: true })
for (const { name, fn } of functionPrograms) {
  await build({
    stdin: { contents: program(name, fn), resolveDir: dist, sourcefile: `${name}.js`, loader: 'js' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: join(out, `${name}.js`),
    // The yaml library is CommonJS and requires Node's modules; an ES module has no `require` of its own.
    banner: { js: "import { createRequire as createRequireForBundle } from 'node:module'; const require = createRequireForBundle(import.meta.url);" },
    logLevel: 'warning',
  })
}
