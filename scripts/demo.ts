/**
 * `npm run demo`: copies the bundled example package (fetched with `kpt pkg get
 * --for-deployment`, with a Porch PackageVariant in its pipeline) to a temp dir,
 * renders it with kpt and our functions on $PATH — package context, pipeline
 * prepend and config injection from the in-cluster objects in `cluster/` — and
 * prints what changed.
 */
import { cpSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join, resolve } from 'node:path'
import { execa } from 'execa'

const root = resolve(new URL('../..', import.meta.url).pathname)
const example = join(root, 'functions', 'package-variant', 'examples', 'render-for-deployment')
const work = mkdtempSync(join(tmpdir(), 'kpt-variants-demo-'))
const pkg = join(work, 'nginx-us-east1')
cpSync(example, pkg, { recursive: true, filter: (src) => !src.includes('.expected') })

const env = {
  ...process.env,
  PATH: `${join(root, 'bin')}${delimiter}${process.env['PATH'] ?? ''}`,
  // The in-cluster objects config-injection reads (kpt ignores cluster/ through .krmignore).
  KPT_VARIANTS_SOURCES: join(pkg, 'cluster'),
}
const git = (...args: string[]) =>
  execa('git', args, { cwd: pkg, env: { ...env, GIT_AUTHOR_NAME: 'demo', GIT_AUTHOR_EMAIL: 'demo@example.com', GIT_COMMITTER_NAME: 'demo', GIT_COMMITTER_EMAIL: 'demo@example.com' } })
await git('init', '-q')
await git('add', '-A')
await git('commit', '-q', '-m', 'blueprint variant')

console.log(`Rendering ${pkg} (kpt fn render --allow-exec) ...\n`)
const render = await execa('kpt', ['fn', 'render', pkg, '--allow-exec'], { env, reject: false, stderr: 'inherit' })
if (render.exitCode !== 0) process.exit(render.exitCode ?? 1)
const diff = await git('diff', '--color=never')
console.log(`\nWhat the functions changed:\n\n${String(diff.stdout)}\n\nThe rendered package is in ${pkg}`)
