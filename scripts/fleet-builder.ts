/**
 * The one fleet builder of the tests and the benchmarks: the fleet's objects as YAML text
 * (Repositories, WorkloadClusters, region endpoints, a PackageVariantSet) and the git repositories
 * they point at (a blueprint repository with tagged revisions, empty bare deployment repositories).
 * test/support/fleet.ts, test/support/rollout-fleet.ts and bench/fleet-fixture.ts say only what
 * their fleets hold; the demo (scripts/demo-fleet.ts) lays out the shipped examples/fleet instead.
 * It lives in scripts/ because the build compiles scripts/ and bench/, never test/.
 */
import { chmodSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { execa } from 'execa'

// ---------------------------------------------------------------------------
// Files and git repositories.

/** File contents by path; `{ link }` makes a symbolic link, `{ text, executable }` an executable file. */
export type TreeSpec = Record<string, string | { link: string } | { text: string; executable: true }>

/** Writes a tree under `dir`. */
export function writeTree(dir: string, tree: TreeSpec): void {
  for (const [path, content] of Object.entries(tree)) {
    const full = join(dir, path)
    mkdirSync(dirname(full), { recursive: true })
    rmSync(full, { force: true })
    if (typeof content === 'string') writeFileSync(full, content)
    else if ('link' in content) symlinkSync(content.link, full)
    else {
      writeFileSync(full, content.text)
      chmodSync(full, 0o755)
    }
  }
}

/** A git author and committer named `name`, as environment variables. */
export function gitIdentity(name: string): Record<string, string> {
  const email = `${name}@example.com`
  return { GIT_AUTHOR_NAME: name, GIT_AUTHOR_EMAIL: email, GIT_COMMITTER_NAME: name, GIT_COMMITTER_EMAIL: email }
}

/** One commit of `createRepo`: tagged `tag`, writing `tree`, with `message` (the tag if none). */
export type Revision = [tag: string, tree: TreeSpec, message?: string]

/** Creates a git repository at `dir` (branch main) with one commit per revision, each tagged. */
export async function createRepo(
  dir: string,
  revisions: readonly Revision[],
  identity: Record<string, string>,
): Promise<void> {
  mkdirSync(dir, { recursive: true })
  const git = (...args: string[]) => execa('git', args, { cwd: dir, env: identity })
  await git('init', '-q', '-b', 'main')
  for (const [tag, tree, message] of revisions) {
    writeTree(dir, tree)
    await git('add', '-A')
    await git('commit', '-q', '--allow-empty', '-m', message ?? tag)
    await git('tag', tag)
  }
}

/** Empty bare repositories `<dir>/<name>.git` (branch main), where `render --git` pushes. */
export async function initBareRepos(dir: string, names: readonly string[]): Promise<void> {
  for (const name of names) await execa('git', ['init', '-q', '--bare', '-b', 'main', join(dir, `${name}.git`)])
}

/** `tree` with every path below `folder`. */
export function under(folder: string, tree: TreeSpec): TreeSpec {
  return Object.fromEntries(Object.entries(tree).map(([path, content]) => [`${folder}/${path}`, content]))
}

// ---------------------------------------------------------------------------
// The fleet's objects.

/** YAML documents as one file's text. */
export const documents = (docs: readonly string[]): string => docs.join('---\n')

const lines = (...all: (string | false | undefined)[]): string =>
  `${all.filter((line): line is string => typeof line === 'string').join('\n')}\n`

const map = (values: Readonly<Record<string, string>>, indent: string): string[] =>
  Object.entries(values).map(([key, value]) => `${indent}${key}: ${value}`)

/** A git Repository `name` at `repo`: a deployment repository, or one to take blueprints from. */
export function repositoryYaml(r: { name: string; repo: string; deployment?: boolean; description?: string }): string {
  return lines(
    'apiVersion: config.porch.kpt.dev/v1alpha1',
    'kind: Repository',
    'metadata:',
    `  name: ${r.name}`,
    '  namespace: default',
    'spec:',
    '  type: git',
    r.deployment && '  deployment: true',
    r.description !== undefined && `  description: ${r.description}`,
    '  git:',
    `    repo: ${r.repo}`,
    '    branch: main',
  )
}

/** A Nephio WorkloadCluster with its labels, and a Ready condition when `ready` is given. */
export function workloadClusterYaml(c: {
  name: string
  labels: Readonly<Record<string, string>>
  ready?: 'True' | 'False'
}): string {
  return lines(
    'apiVersion: infra.nephio.org/v1alpha1',
    'kind: WorkloadCluster',
    'metadata:',
    `  name: ${c.name}`,
    '  namespace: default',
    '  labels:',
    ...map(c.labels, '    '),
    'spec:',
    `  clusterName: ${c.name}`,
    ...(c.ready
      ? [
          'status:',
          '  conditions:',
          `  - {type: Ready, status: "${c.ready}", reason: ${c.ready === 'True' ? 'Running' : 'CrashLoopBackOff'}}`,
        ]
      : []),
  )
}

/** A ConfigMap `<region>-endpoints` per region, whose `key` the sets inject. */
export function regionEndpointsYaml(regions: readonly string[], key: string): string {
  return documents(
    regions.map((r) =>
      lines(
        'apiVersion: v1',
        'kind: ConfigMap',
        'metadata:',
        `  name: ${r}-endpoints`,
        '  namespace: default',
        'data:',
        `  ${key}: https://api.${r}.example.com`,
      ),
    ),
  )
}

export interface SetSpec {
  name: string
  upstream: { repo: string; package: string; revision: number }
  /** The WorkloadClusters' labels the set selects. */
  matchLabels: Readonly<Record<string, string>>
  /** The template's downstream: `repoExpr`, or `repo` and `packageExpr`. */
  downstream: Readonly<Record<string, string>>
  /** Fixed packageContext data, beside the region and cluster taken from each target. */
  data?: Readonly<Record<string, string>>
  deletionPolicy?: 'delete' | 'orphan'
}

/** A PackageVariantSet over WorkloadClusters: each target's region and name as package context, its region's endpoints injected. */
export function packageVariantSetYaml(s: SetSpec): string {
  return lines(
    'apiVersion: config.porch.kpt.dev/v1alpha2',
    'kind: PackageVariantSet',
    'metadata:',
    `  name: ${s.name}`,
    '  namespace: default',
    'spec:',
    '  upstream:',
    `    repo: ${s.upstream.repo}`,
    `    package: ${s.upstream.package}`,
    `    revision: ${s.upstream.revision}`,
    '  targets:',
    '  - objectSelector:',
    '      apiVersion: infra.nephio.org/v1alpha1',
    '      kind: WorkloadCluster',
    '      matchLabels:',
    ...map(s.matchLabels, '        '),
    '    template:',
    '      downstream:',
    ...map(s.downstream, '        '),
    '      packageContext:',
    ...(s.data ? ['        data:', ...map(s.data, '          ')] : []),
    '        dataExprs:',
    '        - key: region',
    '          valueExpr: target.labels.region',
    '        - key: cluster',
    '          valueExpr: target.name',
    '      injectors:',
    '      - kind: ConfigMap',
    "        nameExpr: target.labels.region + '-endpoints'",
    s.deletionPolicy && `      deletionPolicy: ${s.deletionPolicy}`,
  )
}
