/**
 * A PackageVariantSet that follows a version (`kpt-variants.dev/upstream-version`)
 * end to end through the CLI, with real git repositories: the whole fleet at
 * the newest version the constraint admits, moved (a 3-way update that keeps
 * a local edit, paced by a Rollout) when a new satisfying version is
 * published, held when one beyond it is; what render, status and --json say.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { declaredPackage, repository } from './support/catalog-repo.js'
import { runCli } from './support/cli-run.js'
import { createRepo, git, writeTree } from './support/git-repo.js'
import { source } from './support/source.js'

const timeout = 180_000

interface Report {
  variants: {
    path?: string
    status: string
    reasons: { code: string; message: string }[]
    draft?: string
    published?: string
    held?: string
    upstream?: string
    upstreamVersion?: { constraint: string; version: string; newest?: string }
  }[]
}

const clusters = source`
  apiVersion: infra.nephio.org/v1alpha1
  kind: WorkloadCluster
  metadata: {name: c1, namespace: default, labels: {site: edge, tier: canary}}
  status: {conditions: [{type: Ready, status: "True"}]}
  ---
  apiVersion: infra.nephio.org/v1alpha1
  kind: WorkloadCluster
  metadata: {name: c2, namespace: default, labels: {site: edge}}
  status: {conditions: [{type: Ready, status: "True"}]}
  ---
  apiVersion: infra.nephio.org/v1alpha1
  kind: WorkloadCluster
  metadata: {name: c3, namespace: default, labels: {site: edge}}
  status: {conditions: [{type: Ready, status: "True"}]}
`
const set = (constraint: string) => source`
  apiVersion: config.porch.kpt.dev/v1alpha2
  kind: PackageVariantSet
  metadata:
    name: web
    namespace: default
    annotations: {kpt-variants.dev/upstream-version: "${constraint}"}
  spec:
    upstream: {repo: blueprints, package: web}
    targets:
    - objectSelector: {apiVersion: infra.nephio.org/v1alpha1, kind: WorkloadCluster, matchLabels: {site: edge}}
      template: {downstream: {repoExpr: target.name}}
`
const rollout = source`
  apiVersion: kpt-variants.dev/v1alpha1
  kind: Rollout
  metadata: {name: web, namespace: default}
  spec:
    packageVariantSet: web
    steps:
    - name: canary
      targets: {matchLabels: {tier: canary}}
    - name: rest
    gates:
      health: {condition: Ready}
`

describe('a set that follows a version', () => {
  let dir: string
  const blueprints = () => join(dir, 'repos', 'blueprints')
  const render = async (...args: string[]) => {
    const run = await runCli(dir, ['render', 'fleet', '--git', '--cache', 'cache', '--json', ...args])
    return { ...run, report: JSON.parse(run.stdout) as Report }
  }
  const publishVersion = async (n: number, version: string) => {
    writeTree(blueprints(), declaredPackage('web', version))
    await git(blueprints(), 'commit', '-qam', `web ${version}`)
    await git(blueprints(), 'tag', `web/v${n}`)
  }
  const onMain = (repo: string, path: string) => git(join(dir, 'repos', `${repo}.git`), 'show', `main:${path}`)
  const drafts = async (repo: string) =>
    (await git(join(dir, 'repos', `${repo}.git`), 'for-each-ref', '--format=%(refname:short)', 'refs/heads/drafts'))
      .split('\n')
      .filter(Boolean)

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kpt-variants-versions-e2e-'))
    await createRepo(blueprints(), [['web/v1', declaredPackage('web', 'v1.0.0')]])
    await publishVersion(2, 'v1.1.0')
    await publishVersion(3, 'v2.0.0')
    for (const c of ['c1', 'c2', 'c3']) await git(dir, 'init', '-q', '--bare', '-b', 'main', `repos/${c}.git`)
    writeTree(join(dir, 'fleet'), {
      'repositories.yaml': [
        repository('blueprints', false),
        ...['c1', 'c2', 'c3'].map((c) => repository(c, true)),
      ].join('---\n'),
      'clusters.yaml': clusters,
      'web.yaml': set('^1'),
    })
  })
  afterEach(() => rmSync(dir, { recursive: true, force: true }))

  test(
    'the fleet takes the newest 1.x, moves to a 1.x published later (paced by its Rollout, local edits kept) and holds at 2.x',
    async () => {
      const first = await render('--publish')
      expect(first.exitCode).toBe(0)
      expect(first.report.variants.map((v) => [v.path, v.published, v.upstream, v.upstreamVersion])).toEqual(
        ['c1', 'c2', 'c3'].map((c) => [
          `${c}/web`,
          'web/v1',
          'blueprints/web v2',
          { constraint: '^1', version: 'v1.1.0', newest: 'v2.0.0' },
        ]),
      )
      expect(first.stderr).toContain('blueprints/web v2 = v1.1.0')
      expect(first.stderr).toContain(
        'Newer versions beyond the constraints followed:\n  PackageVariantSet default/web (3): v2.0.0 is published; "^1" follows v1.1.0',
      )
      const status = await runCli(dir, ['status', 'fleet', '--cache', 'cache'])
      expect(status.stdout).toContain('current: blueprints/web v2 (web/v2) = v1.1.0 by "^1"; newest v2.0.0')
      const statusJson = JSON.parse((await runCli(dir, ['status', 'fleet', '--cache', 'cache', '--json'])).stdout) as {
        variants: { package?: string; upstreamVersion?: object }[]
      }
      expect(statusJson.variants.find((v) => v.package === 'c2/web')!.upstreamVersion).toEqual({
        constraint: '^1',
        version: 'v1.1.0',
        newest: 'v2.0.0',
      })

      // A person's edit on c2's published branch.
      const clone = join(dir, 'c2-clone')
      await git(dir, 'clone', '-q', 'repos/c2.git', clone)
      writeTree(clone, {
        'web/deployment.yaml': (await onMain('c2', 'web/deployment.yaml')).replace('replicas: 1', 'replicas: 4'),
      })
      await git(clone, 'commit', '-qam', 'c2 needs four')
      await git(clone, 'push', '-q', 'origin', 'main')

      // v1.2.0 is published, and a Rollout paces the set: every variant gets its draft, the canary is published first.
      writeTree(join(dir, 'fleet'), { 'rollout.yaml': rollout })
      await publishVersion(4, 'v1.2.0')
      const moved = await render('--publish', '--now', '2026-01-05T10:00:00Z')
      expect(moved.exitCode).toBe(0)
      const byPath = new Map(moved.report.variants.map((v) => [v.path, v]))
      expect(byPath.get('c1/web')).toMatchObject({
        status: 'updated',
        published: 'web/v2',
        upstream: 'blueprints/web v4',
      })
      for (const c of ['c2', 'c3'])
        expect(byPath.get(`${c}/web`)).toMatchObject({
          status: 'updated',
          draft: 'drafts/web/packagevariant-2',
          held: expect.stringContaining('canary'),
        })
      expect(await onMain('c1', 'web/deployment.yaml')).toContain('example.com/web:v1.2.0')
      expect(await onMain('c2', 'web/deployment.yaml')).toContain('example.com/web:v1.1.0')
      // The canary is healthy: the rest follow, c2's edit kept by the 3-way update.
      const rest = await render('--publish', '--now', '2026-01-05T10:05:00Z')
      expect(rest.exitCode).toBe(0)
      const c2 = await onMain('c2', 'web/deployment.yaml')
      expect(c2).toContain('example.com/web:v1.2.0')
      expect(c2).toContain('replicas: 4')
      expect(await onMain('c3', 'web/Kptfile')).toContain('ref: web/v4')

      // v2.1.0 is beyond "^1": nothing moves, and the report says it is there.
      await publishVersion(5, 'v2.1.0')
      const held = await render('--publish', '--now', '2026-01-05T11:00:00Z')
      expect(held.exitCode).toBe(0)
      expect(held.report.variants.map((v) => [v.status, v.upstreamVersion?.newest])).toEqual([
        ['unchanged', 'v2.1.0'],
        ['unchanged', 'v2.1.0'],
        ['unchanged', 'v2.1.0'],
      ])
      for (const c of ['c1', 'c2', 'c3']) expect(await drafts(c)).toEqual([])

      // A constraint nothing satisfies fails the set with the versions it saw; nothing is drafted.
      writeTree(join(dir, 'fleet'), { 'web.yaml': set('>=3') })
      const none = await render()
      expect(none.exitCode).toBe(1)
      expect(none.stderr).toContain(
        'PackageVariantSet default/web: metadata.annotations[kpt-variants.dev/upstream-version]: no published version of blueprints/web satisfies ">=3": seen v1.0.0 (web/v1), v1.1.0 (web/v2), v1.2.0 (web/v4), v2.0.0 (web/v3), v2.1.0 (web/v5)',
      )
      for (const c of ['c1', 'c2', 'c3']) expect(await drafts(c)).toEqual([])
    },
    timeout,
  )

  test(
    'a revision beside the constraint is an error naming both fields, exit 1',
    async () => {
      writeTree(join(dir, 'fleet'), {
        'web.yaml': set('^1').replace('package: web}', 'package: web, revision: 1}'),
      })
      const run = await render()
      expect(run.exitCode).toBe(1)
      expect(run.stderr).toContain(
        'PackageVariantSet default/web: metadata.annotations[kpt-variants.dev/upstream-version] chooses the upstream by version, and spec.upstream.revision by revision: give one',
      )
      expect(run.stderr).not.toContain('    at ')
    },
    timeout,
  )
})
