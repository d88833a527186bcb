/**
 * `npm run demo`: builds the example fleet in `demo/` and renders it.
 *
 * 1. `demo/repos/blueprints`: a git repository with the nginx blueprint of
 *    `examples/fleet/blueprints`, revision 1 and 2 tagged `nginx/v1`, `nginx/v2`
 *    as Porch tags published revisions (git repositories cannot be committed
 *    inside this one, so they are made here);
 * 2. `demo/fleet`: a copy of `examples/fleet/fleet` (Repositories, a dozen
 *    WorkloadClusters, the nginx PackageVariantSet, region endpoints, a
 *    dependency catalog), yours to edit; and `demo/rollout.yaml`, a Rollout
 *    for the README's rollout walk-through to copy into it;
 * 3. `demo/repos/edge-NN.git`: an empty bare repository per cluster, where
 *    `render --git` proposes drafts;
 * 4. `kpt-variants render demo/fleet --out demo/rendered`, then what one
 *    variant changed compared with a plain `kpt pkg get --for-deployment`.
 */
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { delimiter, join, resolve } from 'node:path'
import { execa } from 'execa'

const root = resolve(new URL('../..', import.meta.url).pathname)
const example = join(root, 'examples', 'fleet')
const demo = join(root, 'demo')
const identity = { GIT_AUTHOR_NAME: 'demo', GIT_AUTHOR_EMAIL: 'demo@example.com', GIT_COMMITTER_NAME: 'demo', GIT_COMMITTER_EMAIL: 'demo@example.com' }
const env = { ...process.env, ...identity, PATH: `${join(root, 'bin')}${delimiter}${process.env['PATH'] ?? ''}` }
const git = (cwd: string, ...args: string[]) => execa('git', args, { cwd, env })

rmSync(demo, { recursive: true, force: true })
cpSync(join(example, 'fleet'), join(demo, 'fleet'), { recursive: true })
cpSync(join(example, 'rollout.yaml'), join(demo, 'rollout.yaml'))

const blueprints = join(demo, 'repos', 'blueprints')
mkdirSync(blueprints, { recursive: true })
await git(blueprints, 'init', '-q', '-b', 'main')
for (const revision of ['v1', 'v2']) {
  rmSync(join(blueprints, 'nginx'), { recursive: true, force: true })
  cpSync(join(example, 'blueprints', 'nginx', revision), join(blueprints, 'nginx'), { recursive: true })
  await git(blueprints, 'add', '-A')
  // The kpt: line is the annotation Porch writes when it publishes a revision.
  await git(blueprints, 'commit', '-q', '-m', `nginx ${revision}\n\nkpt:{"package":"nginx","workspaceName":"${revision}","revision":"${revision}"}`)
  await git(blueprints, 'tag', `nginx/${revision}`)
}

// Each cluster's deployment repository, empty and bare, for `render --git` (the fleet's `../repos/edge-NN` finds `edge-NN.git`).
const repositories = readFileSync(join(demo, 'fleet', 'repositories.yaml'), 'utf8')
for (const [, name] of repositories.matchAll(/repo: \.\.\/repos\/(edge-\d+)$/gm)) await git(demo, 'init', '-q', '--bare', '-b', 'main', join('repos', `${name}.git`))

console.log('$ kpt-variants render demo/fleet --out demo/rendered\n')
const render = await execa('kpt-variants', ['render', 'demo/fleet', '--out', 'demo/rendered'], { cwd: root, env, reject: false, stdout: 'inherit', stderr: 'inherit' })
if (render.exitCode !== 0) process.exit(render.exitCode ?? 1)

// What the PackageVariant changed in one cluster's package: a plain clone of the same revision, compared.
const plain = join(demo, '.plain', 'nginx')
mkdirSync(join(demo, '.plain'))
await execa('kpt', ['pkg', 'get', `file://${blueprints}.git/nginx@nginx/v1`, plain, '--for-deployment'], { cwd: root, env })
const diff = await execa('git', ['diff', '--no-index', '--color=never', '--', plain, join(demo, 'rendered', 'edge-01', 'nginx')], { cwd: root, reject: false })
rmSync(join(demo, '.plain'), { recursive: true, force: true })
console.log(`\nWhat the PackageVariant changed in edge-01's package, compared with \`kpt pkg get --for-deployment\` of nginx/v1:\n`)
console.log(
  String(diff.stdout)
    .replaceAll(`a${plain}`, 'a/nginx')
    .replaceAll(`b${join(demo, 'rendered', 'edge-01', 'nginx')}`, 'b/edge-01/nginx'),
)
console.log(`\n${readdirSync(join(demo, 'rendered')).length} cluster repositories rendered in demo/rendered. Next: the fleet workflow in README.md.`)
