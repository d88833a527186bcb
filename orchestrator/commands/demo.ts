/**
 * `kpt-variants demo DIR`: lays the example fleet out in DIR, to try kpt-variants with (`npm run demo`
 * in a clone does the same in demo/, then renders it). From `examples/fleet`, which the npm package
 * ships beside the programs:
 *
 * - `repos/blueprints`: a git repository with the nginx blueprint and the cert-manager package it
 *   needs, revisions 1 and 2 of each tagged `nginx/v1`, `nginx/v2`, `cert-manager/v1`, `cert-manager/v2`
 *   as Porch tags published revisions (git repositories cannot be committed inside this one, nor
 *   shipped in a package, so they are made here);
 * - `fleet`: a copy of `examples/fleet/fleet` (Repositories, a dozen WorkloadClusters, the nginx
 *   PackageVariantSet, region endpoints, a dependency catalog, the DependencyPolicy that configures
 *   cert-manager per region), and beside it `rollout.yaml`, a Rollout for the README's rollout
 *   walk-through, and `nginx-follow.yaml`, the set following versions, to copy into it;
 * - `repos/edge-NN.git`: an empty bare repository per cluster, where `render --git` proposes drafts.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execa } from 'execa'
import { UsageError } from './cli-io.js'
import type { CliIO } from './cli-io.js'

/** The example fleet: `examples/fleet` above this module (in a clone, or in the installed package beside dist/). */
export function exampleFleetDir(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    const candidate = join(dir, 'examples', 'fleet')
    if (existsSync(join(candidate, 'fleet', 'repositories.yaml'))) return candidate
  }
  throw new Error(`the example fleet (examples/fleet) is missing above ${fileURLToPath(import.meta.url)}`)
}

const identity = {
  GIT_AUTHOR_NAME: 'demo',
  GIT_AUTHOR_EMAIL: 'demo@example.com',
  GIT_COMMITTER_NAME: 'demo',
  GIT_COMMITTER_EMAIL: 'demo@example.com',
}

/** Lays the example fleet out in `dir`, which must be empty or absent. */
export async function createDemoFleet(dir: string, env: Readonly<Record<string, string | undefined>> = process.env) {
  const examples = exampleFleetDir()
  const git = (cwd: string, ...args: string[]) => execa('git', args, { cwd, env: { ...env, ...identity } })
  mkdirSync(dir, { recursive: true })
  cpSync(join(examples, 'fleet'), join(dir, 'fleet'), { recursive: true })
  for (const file of ['rollout.yaml', 'nginx-follow.yaml']) cpSync(join(examples, file), join(dir, file))
  const blueprints = join(dir, 'repos', 'blueprints')
  mkdirSync(blueprints, { recursive: true })
  await git(blueprints, 'init', '-q', '-b', 'main')
  for (const pkg of ['cert-manager', 'nginx']) {
    for (const revision of ['v1', 'v2']) {
      rmSync(join(blueprints, pkg), { recursive: true, force: true })
      cpSync(join(examples, 'blueprints', pkg, revision), join(blueprints, pkg), { recursive: true })
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

/** `kpt-variants demo DIR`; resolves to the exit code. */
export async function demoCommand(target: string, io: CliIO): Promise<number> {
  const dir = resolve(io.cwd, target)
  if (existsSync(dir) && readdirSync(dir).length > 0)
    throw new UsageError(`${target} is not empty: the demo is laid out in a new or empty directory`)
  await createDemoFleet(dir, io.env)
  const shown = target
  io.stdout(
    [
      `The example fleet is in ${shown}: the blueprint repository ${join(shown, 'repos', 'blueprints')} (nginx and cert-manager, revisions v1 and v2),`,
      `the fleet ${join(shown, 'fleet')} (a dozen edge clusters and the nginx PackageVariantSet), and an empty repository per cluster.`,
      '',
      "Render every variant into a directory, then as draft branches of the clusters' repositories:",
      `  kpt-variants render ${join(shown, 'fleet')} --out ${join(shown, 'rendered')}`,
      `  kpt-variants render ${join(shown, 'fleet')} --git`,
      `  kpt-variants status ${join(shown, 'fleet')}`,
      '',
    ].join('\n'),
  )
  return 0
}
