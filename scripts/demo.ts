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
 * 4. `kpt-variants render demo/fleet --out demo/rendered --report demo/fleet.html`
 *    (the fleet page of that render, docs/reports.md), then what one variant
 *    changed compared with a plain `kpt pkg get --for-deployment`.
 *
 * Steps 1-3 are scripts/demo-fleet.ts, which the reports' tests share.
 */
import { mkdirSync, readdirSync, rmSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { execa } from 'execa'
import { createDemoFleet, repoRoot as root } from './demo-fleet.js'

const demo = join(root, 'demo')
const blueprints = join(demo, 'repos', 'blueprints')
const env = { ...process.env, PATH: `${join(root, 'bin')}${delimiter}${process.env['PATH'] ?? ''}` }

await createDemoFleet(demo)

console.log('$ kpt-variants render demo/fleet --out demo/rendered --report demo/fleet.html\n')
const render = await execa(
  'kpt-variants',
  ['render', 'demo/fleet', '--out', 'demo/rendered', '--report', 'demo/fleet.html'],
  { cwd: root, env, reject: false, stdout: 'inherit', stderr: 'inherit' },
)
if (render.exitCode !== 0) process.exit(render.exitCode ?? 1)

// What the PackageVariant changed in one cluster's package: a plain clone of the same revision, compared.
const plain = join(demo, '.plain', 'nginx')
mkdirSync(join(demo, '.plain'))
await execa('kpt', ['pkg', 'get', `file://${blueprints}.git/nginx@nginx/v1`, plain, '--for-deployment'], {
  cwd: root,
  env,
})
const diff = await execa(
  'git',
  ['diff', '--no-index', '--color=never', '--', plain, join(demo, 'rendered', 'edge-01', 'nginx')],
  { cwd: root, reject: false },
)
rmSync(join(demo, '.plain'), { recursive: true, force: true })
console.log(
  `\nWhat the PackageVariant changed in edge-01's package, compared with \`kpt pkg get --for-deployment\` of nginx/v1:\n`,
)
console.log(
  String(diff.stdout)
    .replaceAll(`a${plain}`, 'a/nginx')
    .replaceAll(`b${join(demo, 'rendered', 'edge-01', 'nginx')}`, 'b/edge-01/nginx'),
)
console.log(`\n${readdirSync(join(demo, 'rendered')).length} cluster repositories rendered in demo/rendered.`)
console.log(
  `The fleet page of that render: file://${join(demo, 'fleet.html')} (open it in a browser; docs/reports.md).`,
)
console.log('Next: the fleet workflow in README.md.')
