/**
 * The example fleet laid out as `npm run demo` lays it out in `demo/` (and
 * the reports' tests in a temporary directory), from `examples/fleet`:
 *
 * - `repos/blueprints`: a git repository with the nginx blueprint and the
 *   cert-manager package it needs, revisions 1 and 2 of each tagged
 *   `nginx/v1`, `nginx/v2`, `cert-manager/v1`, `cert-manager/v2` as Porch tags
 *   published revisions (git repositories cannot be committed inside this
 *   one, so they are made here);
 * - `fleet`: a copy of `examples/fleet/fleet` (Repositories, a dozen
 *   WorkloadClusters, the nginx PackageVariantSet, region endpoints, a
 *   dependency catalog, the DependencyPolicy that configures cert-manager per
 *   region), and beside it `rollout.yaml`, a Rollout for the README's rollout
 *   walk-through, and `nginx-follow.yaml`, the set following versions, to copy
 *   into it;
 * - `repos/edge-NN.git`: an empty bare repository per cluster, where `render --git` proposes drafts.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execa } from 'execa'

/** The repository's root: above this module, run from dist/scripts/ or from scripts/ (the tests). */
export const repoRoot = findRoot(dirname(fileURLToPath(import.meta.url)))
export const exampleDir = join(repoRoot, 'examples', 'fleet')

function findRoot(from: string): string {
  for (let dir = from; dir !== dirname(dir); dir = dirname(dir))
    if (existsSync(join(dir, 'examples', 'fleet'))) return dir
  throw new Error(`examples/fleet not found above ${from}`)
}

const identity = {
  GIT_AUTHOR_NAME: 'demo',
  GIT_AUTHOR_EMAIL: 'demo@example.com',
  GIT_COMMITTER_NAME: 'demo',
  GIT_COMMITTER_EMAIL: 'demo@example.com',
}

/** Lays the demo out in `dir` (emptied first). */
export async function createDemoFleet(dir: string): Promise<void> {
  const git = (cwd: string, ...args: string[]) => execa('git', args, { cwd, env: { ...process.env, ...identity } })
  rmSync(dir, { recursive: true, force: true })
  cpSync(join(exampleDir, 'fleet'), join(dir, 'fleet'), { recursive: true })
  for (const file of ['rollout.yaml', 'nginx-follow.yaml']) cpSync(join(exampleDir, file), join(dir, file))
  const blueprints = join(dir, 'repos', 'blueprints')
  mkdirSync(blueprints, { recursive: true })
  await git(blueprints, 'init', '-q', '-b', 'main')
  for (const pkg of ['cert-manager', 'nginx']) {
    for (const revision of ['v1', 'v2']) {
      rmSync(join(blueprints, pkg), { recursive: true, force: true })
      cpSync(join(exampleDir, 'blueprints', pkg, revision), join(blueprints, pkg), { recursive: true })
      await git(blueprints, 'add', '-A')
      // The kpt: line is the annotation Porch writes when it publishes a revision.
      await git(
        blueprints,
        'commit',
        '-q',
        '-m',
        `${pkg} ${revision}\n\nkpt:{"package":"${pkg}","workspaceName":"${revision}","revision":"${revision}"}`,
      )
      await git(blueprints, 'tag', `${pkg}/${revision}`)
    }
  }
  // Each cluster's deployment repository, empty and bare, for `render --git` (the fleet's `../repos/edge-NN` finds `edge-NN.git`).
  const repositories = readFileSync(join(dir, 'fleet', 'repositories.yaml'), 'utf8')
  for (const [, name] of repositories.matchAll(/repo: \.\.\/repos\/(edge-\d+)$/gm))
    await git(dir, 'init', '-q', '--bare', '-b', 'main', join('repos', `${name}.git`))
}
