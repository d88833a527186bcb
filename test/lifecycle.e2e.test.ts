/**
 * What Porch does with the packages of a PackageVariant that goes away or
 * moves, end to end through the CLI with real git repositories: a removed
 * PackageVariant's draft is deleted (or, with deletionPolicy orphan, kept
 * without its owner), and a PackageVariant whose downstream changes leaves
 * its old package deleted (or orphaned), with --out and with --git.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createBlueprints, fleetFiles, repository } from './support/fleet.js'
import { git, writeTree } from './support/git-repo.js'
import { source } from './support/source.js'
import { runCli, runCliOk } from './support/cli-run.js'

const timeout = 60_000

/** A standalone PackageVariant rendering blueprints/nginx v1 into edge-01/`pkg`. */
function packageVariant(pkg: string, deletionPolicy: 'delete' | 'orphan' = 'delete'): string {
  return source`
    apiVersion: config.porch.kpt.dev/v1alpha1
    kind: PackageVariant
    metadata:
      name: web
      namespace: default
    spec:
      upstream: {repo: blueprints, package: nginx, revision: 1}
      downstream: {repo: edge-01, package: ${pkg}}
      deletionPolicy: ${deletionPolicy}
      # nginx's required injection point: without it the draft is not ready to publish.
      injectors: [{kind: ConfigMap, name: us-east1-endpoints}]
  `
}

interface Report {
  variants: {
    path?: string
    status: string
    subject: string
    draft?: string
    reasons: { code: string; message: string }[]
  }[]
}

class Workspace {
  readonly dir = mkdtempSync(join(tmpdir(), 'kpt-variants-lifecycle-e2e-'))

  async create(): Promise<void> {
    await createBlueprints(join(this.dir, 'repos', 'blueprints'))
    await git(this.dir, 'init', '-q', '--bare', '-b', 'main', 'repos/edge-01.git')
  }

  /** The fleet: the two Repositories, and the given PackageVariant (none: it was removed). */
  fleet(pv?: string): void {
    rmSync(join(this.dir, 'fleet'), { recursive: true, force: true })
    writeTree(join(this.dir, 'fleet'), {
      'repositories.yaml': [repository('blueprints', false), repository('edge-01', true)].join('---\n'),
      'endpoints.yaml': fleetFiles({ clusters: [] })['endpoints.yaml']!,
      ...(pv ? { 'pv.yaml': pv } : {}),
    })
  }

  async render(...args: string[]): Promise<Report> {
    const run = await runCliOk(this.dir, ['render', 'fleet', '--cache', 'cache', '--json', ...args])
    return JSON.parse(run.stdout) as Report
  }

  async publish(...args: string[]): Promise<{ exitCode: number; stderr: string }> {
    const run = await runCli(this.dir, ['publish', '--fleet', 'fleet', '--cache', 'cache', ...args])
    return { exitCode: run.exitCode, stderr: run.stderr }
  }

  /** The branches and tags of edge-01. */
  async refs(): Promise<string[]> {
    return (await git(join(this.dir, 'repos', 'edge-01.git'), 'for-each-ref', '--format=%(refname)'))
      .split('\n')
      .filter(Boolean)
  }

  async show(rev: string): Promise<string> {
    return git(join(this.dir, 'repos', 'edge-01.git'), 'show', rev)
  }
}

const rows = (report: Report) => report.variants.map((v) => `${v.status} ${v.path}`)

describe('the packages of a PackageVariant that goes away or moves', () => {
  let ws: Workspace
  beforeEach(async () => {
    ws = new Workspace()
    await ws.create()
  })
  afterEach(() => rmSync(ws.dir, { recursive: true, force: true }))

  test(
    '--git: a removed PackageVariant whose package was only drafted: the draft is deleted (delete) or kept without its owner (orphan); publish then has nothing of it',
    async () => {
      ws.fleet(packageVariant('web'))
      await ws.render('--git')
      expect(await ws.refs()).toEqual(['refs/heads/drafts/web/packagevariant-1'])
      ws.fleet()
      expect(rows(await ws.render('--git'))).toEqual(['deleted edge-01/web'])
      expect(await ws.refs()).toEqual([])
      expect(rows(await ws.render('--git'))).toEqual([])

      ws.fleet(packageVariant('web', 'orphan'))
      await ws.render('--git')
      ws.fleet()
      expect(rows(await ws.render('--git'))).toEqual(['orphaned edge-01/web'])
      expect(await ws.refs()).toEqual(['refs/heads/drafts/web/packagevariant-1'])
      const kptfile = await ws.show('drafts/web/packagevariant-1:web/Kptfile')
      expect(kptfile).not.toContain('kpt-variants.dev/package-variant')
      // Orphaned: no longer anyone's, so no later render touches it.
      expect(rows(await ws.render('--git'))).toEqual([])
    },
    timeout,
  )

  test(
    'publish --fleet refuses a draft whose PackageVariant is gone or renders another package now, unless --force',
    async () => {
      ws.fleet(packageVariant('web'))
      await ws.render('--git')
      ws.fleet()
      const gone = await ws.publish()
      expect(gone.exitCode).toBe(1)
      expect(gone.stderr).toContain(
        'edge-01/web: not published: its PackageVariant default/web no longer exists: the next render removes this draft; --force publishes it anyway',
      )
      expect(await ws.refs()).toEqual(['refs/heads/drafts/web/packagevariant-1'])

      ws.fleet(packageVariant('web2'))
      const moved = await ws.publish('--dry-run')
      expect(moved.exitCode).toBe(1)
      expect(moved.stderr).toContain(
        'edge-01/web: not published: its PackageVariant default/web renders edge-01/web2 now',
      )

      const forced = await ws.publish('--force')
      expect([forced.exitCode, forced.stderr]).toEqual([0, expect.stringContaining('edge-01/web: published web/v1')])
      expect(await ws.refs()).toEqual(['refs/tags/web/v1', 'refs/heads/main'].sort())
    },
    timeout,
  )

  test(
    '--out: a PackageVariant moved from web to web2 creates web2 and deletes web (orphan keeps it without its owner), and stays that way',
    async () => {
      ws.fleet(packageVariant('web'))
      await ws.render('--out', 'out')
      ws.fleet(packageVariant('web2'))
      expect(rows(await ws.render('--out', 'out'))).toEqual(['deleted edge-01/web', 'created edge-01/web2'])
      expect(existsSync(join(ws.dir, 'out', 'edge-01', 'web'))).toBe(false)
      expect(rows(await ws.render('--out', 'out'))).toEqual(['unchanged edge-01/web2'])

      ws.fleet(packageVariant('web3', 'orphan'))
      await ws.render('--out', 'out')
      ws.fleet(packageVariant('web4', 'orphan'))
      expect(rows(await ws.render('--out', 'out'))).toEqual(['orphaned edge-01/web3', 'created edge-01/web4'])
      expect(readFileSync(join(ws.dir, 'out', 'edge-01', 'web3', 'Kptfile'), 'utf8')).not.toContain(
        'kpt-variants.dev/package-variant',
      )
    },
    timeout,
  )

  test(
    "--git: the PackageVariant's spec.labels and spec.annotations are on its revisions, as Porch puts them on PackageRevisions; status shows them",
    async () => {
      const labelled = packageVariant('web').replace(
        '  deletionPolicy: delete\n',
        '  deletionPolicy: delete\n  labels: {tier: canary}\n  annotations: {owner: "team web"}\n',
      )
      ws.fleet(labelled)
      await ws.render('--git')
      const message = await git(
        join(ws.dir, 'repos', 'edge-01.git'),
        'log',
        '-1',
        '--format=%B',
        'drafts/web/packagevariant-1',
      )
      expect(message).toContain('Label: tier=canary\nAnnotation: owner="team web"\n')
      const status = await runCli(ws.dir, ['status', 'fleet', '--cache', 'cache', '--json'], { baseEnv: process.env })
      const rows = (
        JSON.parse(status.stdout) as {
          variants: { package?: string; labels?: Record<string, string>; annotations?: Record<string, string> }[]
        }
      ).variants
      expect(rows.find((r) => r.package === 'edge-01/web')).toMatchObject({
        labels: { tier: 'canary' },
        annotations: { owner: 'team web' },
      })
      // Published: the revision keeps them.
      await runCliOk(ws.dir, ['publish', 'edge-01', '--fleet', 'fleet', '--cache', 'cache'])
      expect(await git(join(ws.dir, 'repos', 'edge-01.git'), 'log', '-1', '--format=%B', 'web/v1')).toContain(
        'Label: tier=canary',
      )
    },
    timeout,
  )

  test(
    '--git: a published package whose PackageVariant moved is proposed for removal, saying where it went',
    async () => {
      ws.fleet(packageVariant('web'))
      await ws.render('--git', '--publish')
      ws.fleet(packageVariant('web2'))
      const moved = await ws.render('--git')
      expect(rows(moved)).toEqual(['deleted edge-01/web', 'created edge-01/web2'])
      const removal = moved.variants.find((v) => v.path === 'edge-01/web')!.draft!
      expect(await git(join(ws.dir, 'repos', 'edge-01.git'), 'log', '-1', '--format=%s', removal)).toBe(
        'Remove web: PackageVariant default/web now renders edge-01/web2',
      )
    },
    timeout,
  )
})
