/**
 * Bundles each program into one file under dist/bundles/, which its launcher
 * in bin/ loads (run by `npm run build`, after tsc, and by the Dockerfile).
 * A program in one file starts sooner than one whose modules Node loads file
 * by file (a KRM function's hundreds of modules, ours and the yaml
 * library's), a start that `kpt fn render` pays once per function per
 * package (see bench/RESULTS.md, 'bin/package-context, 50 resources, as a
 * process'), and kpt-variants once and again for each of its render threads.
 *
 * The programs are CommonJS (<name>.cjs), each with the V8 code cache its
 * launcher compiles it with (<name>.cjs.cache, see bin/load-bundle.js): it
 * starts sooner again.
 *
 * kpt-variants' threads load their code by path, beside the bundle: a render
 * thread (render-worker.js) loads the main bundle itself, so every thread
 * runs one copy of the code (and records renders under one code identity, see
 * cache/identity.ts); the staging and stat threads are small bundles of their own,
 * and so is the process that starts git processes (spawner-process.js).
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { build } from 'esbuild-wasm'
import { functionPrograms } from './programs.js'

const dist = resolve(fileURLToPath(new URL('..', import.meta.url)))
/**
 * The yaml library's ES module build (the same code as the CommonJS build
 * Node resolves, less its use of Node's `process` for warnings). Bundled from
 * CommonJS, every call into the library went through a property getter
 * (`(0, import_yaml.isScalar)(node)`), a cost a render pays on every node
 * it reads. As modules, the calls are direct (see bench/RESULTS.md,
 * '--dry-run 1,000 variants').
 */
const yamlModule = join(dirname(createRequire(import.meta.url).resolve('yaml/package.json')), 'browser', 'index.js')
const out = join(dist, 'bundles')

/** The launchers' loader (bin/load-bundle.js), which also writes the code caches. */
const loader = join(dist, '..', 'bin', 'load-bundle.js')

/** package.json's version, the one place it is written: the programs get it here (orchestrator/util/version.ts). */
const version = (JSON.parse(readFileSync(join(dist, '..', 'package.json'), 'utf8')) as { version: string }).version

/**
 * Bundles the module `contents` (resolved from dist/) into dist/bundles/<name>.cjs, a program for
 * bin/load-bundle.js (CommonJS, with a code cache), or, as `worker`, into <name>.js, an ES module
 * a thread is started with.
 */
async function bundle(
  name: string,
  contents: string,
  options: { external?: string[]; worker?: boolean } = {},
): Promise<void> {
  const program = !options.worker
  await build({
    stdin: { contents, resolveDir: dist, sourcefile: `${name}.js`, loader: 'js' },
    bundle: true,
    platform: 'node',
    format: program ? 'cjs' : 'esm',
    target: 'node20',
    outfile: join(out, program ? `${name}.cjs` : `${name}.js`),
    external: options.external ?? [],
    alias: { yaml: yamlModule },
    // Modules find files beside themselves (threads' code, bin/) by import.meta.url, which CommonJS has not.
    define: {
      KPT_VARIANTS_VERSION: JSON.stringify(version),
      ...(program ? { 'import.meta.url': 'bundleUrl' } : {}),
    },
    banner: {
      js: program
        ? "const bundleUrl = require('node:url').pathToFileURL(__filename).href;"
        : // Libraries bundled from CommonJS (commander, semver, ignore) require Node's modules; an ES module has no `require` of its own.
          "import { createRequire as createRequireForBundle } from 'node:module'; const require = createRequireForBundle(import.meta.url);",
    },
    logLevel: 'warning',
  })
  if (!program) return
  // A process of its own, with none of this one's V8 flags: the program's launcher will have only the program's.
  rmSync(join(out, `${name}.cjs.cache`), { force: true })
  const write = `import { writeCodeCache } from ${JSON.stringify(pathToFileURL(loader).href)}\nwriteCodeCache(${JSON.stringify(name)})`
  execFileSync(process.execPath, ['--input-type=module', '-e', write], { stdio: 'inherit' })
}

mkdirSync(out, { recursive: true })
for (const { name, fn } of functionPrograms) {
  // The program every function's launcher ran before it was bundled; the launcher runs `main`.
  const program = [
    `import { runMain } from './functions/krm/main.js'`,
    `import { ${fn} } from './functions/${name}/index.js'`,
    `export const main = () => runMain(${fn}, process.argv.slice(2))`,
  ]
  await bundle(name, program.join('\n'))
}
// The Kubernetes client stays a package of its own: only --cluster loads it, and the functions' images leave it out.
await bundle(
  'kpt-variants',
  [
    `export { cli } from './orchestrator/cli.js'`,
    `export { runRenderWorker } from './orchestrator/run/threads.js'`,
  ].join('\n'),
  { external: ['@kubernetes/client-node'] },
)
writeFileSync(
  join(out, 'render-worker.js'),
  `// A render thread of kpt-variants: the main bundle's code (see scripts/bundle.ts).\nimport { loadBundle } from '../../bin/load-bundle.js'\n\nawait loadBundle('kpt-variants').exports.runRenderWorker()\n`,
)
await bundle('staging-worker', `import './orchestrator/output/directory/staging-worker.js'`, { worker: true })
await bundle('stat-worker', `import './orchestrator/output/directory/stat-worker.js'`, { worker: true })
await bundle('read-ahead-worker', `import './orchestrator/output/directory/read-ahead-worker.js'`, { worker: true })
// Not a thread but a small process of its own, which starts a run's git processes (orchestrator/git/spawner.ts).
await bundle('spawner-process', `import './orchestrator/git/spawner-process.js'`, { worker: true })
await bundleFleetPage()

/**
 * The fleet page's script and styles (orchestrator/page/), which
 * `render --report` and `status --html` inline into the page: for a browser,
 * minified, with diff2html and highlight.js (YAML only) bundled in.
 */
async function bundleFleetPage(): Promise<void> {
  const source = join(dist, '..', 'orchestrator', 'page')
  await build({
    entryPoints: [join(dist, 'orchestrator', 'page', 'browser.js')],
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'chrome110',
    minify: true,
    legalComments: 'none',
    outfile: join(out, 'fleet-page.js'),
    logLevel: 'warning',
  })
  const css = ['diff2html/bundles/css/diff2html.min.css', 'highlight.js/styles/github.css', join(source, 'page.css')]
    .map((f) => `@import ${JSON.stringify(f)};`)
    .join('\n')
  await build({
    stdin: { contents: css, resolveDir: dist, loader: 'css', sourcefile: 'fleet-page.css' },
    bundle: true,
    minify: true,
    outfile: join(out, 'fleet-page.css'),
    logLevel: 'warning',
  })
}
