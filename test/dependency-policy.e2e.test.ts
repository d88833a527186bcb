/**
 * DependencyPolicy end to end through the CLI, with real git repositories:
 * each field changes what `render --git` plans for the repositories it
 * selects (install: false, prereleases, pins, upgrades: Deny, downgrades:
 * Allow, autoUpgrade, configured dependencies), and a repository refuses a
 * second owner of an API and a package its cluster's Kubernetes cannot run.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { declaredPackage, crdFile, edgeMonitorSet, needs, repository } from './support/catalog-repo.js'
import { runCli } from './support/cli-run.js'
import { createRepo, git, writeTree } from './support/git-repo.js'
import { source } from './support/source.js'

const timeout = 180_000

interface Step {
  action: string
  package: string
  version?: string
  from?: string
  outcome: string
}
interface Report {
  variants: {
    path?: string
    status: string
    reasons: { code: string; message: string }[]
    warnings: string[]
    draft?: string
    published?: string
  }[]
  dependencies?: { name: string; steps: Step[]; overrides?: string[]; policy?: string[] }[]
}

/** The catalog: cert-manager v1.12.0, v1.14.0, v1.15.0-rc.1; edge-monitor (needs >= v1.13.0); legacy-app (needs ~1.12.0). */
async function createCatalog(dir: string): Promise<void> {
  await createRepo(dir, [
    [
      'cert-manager/v1',
      {
        ...declaredPackage('cert-manager', 'v1.12.0'),
        ...crdFile('cert-manager', 'cert-manager.io', 'Certificate'),
        ...declaredPackage('edge-monitor', 'v1.0.0', needs(['cert-manager', '>= v1.13.0'])),
        ...declaredPackage('legacy-app', 'v1.0.0', needs(['cert-manager', '~1.12.0'])),
        ...declaredPackage('my-certs', 'v1.0.0'),
        ...crdFile('my-certs', 'cert-manager.io', 'Certificate'),
      },
    ],
  ])
  for (const tag of ['edge-monitor/v1', 'legacy-app/v1', 'my-certs/v1']) await git(dir, 'tag', tag)
  for (const [n, version] of [
    [2, 'v1.14.0'],
    [3, 'v1.15.0-rc.1'],
  ] as const) {
    writeTree(dir, declaredPackage('cert-manager', version))
    await git(dir, 'commit', '-qam', `cert-manager ${version}`)
    await git(dir, 'tag', `cert-manager/v${n}`)
  }
}

function policy(name: string, spec: string): string {
  return `apiVersion: kpt-variants.dev/v1alpha1\nkind: DependencyPolicy\nmetadata: {name: ${name}, namespace: default}\nspec:\n${spec.replace(/^/gm, '  ')}\n`
}

function installedOutside(repo: string, version: string): string {
  return source`
    apiVersion: kpt-variants.dev/v1alpha1
    kind: InstalledPackage
    metadata: {name: cert-manager-${repo}, namespace: default, labels: {kpt-variants.dev/repository: ${repo}}}
    spec: {package: cert-manager, version: ${version}}
  `
}

class Workspace {
  readonly dir = mkdtempSync(join(tmpdir(), 'kpt-variants-policy-e2e-'))

  async setUp(clusters: string[], labels: Record<string, Record<string, string>> = {}): Promise<void> {
    await createCatalog(join(this.dir, 'repos', 'catalog'))
    for (const c of clusters) await git(this.dir, 'init', '-q', '--bare', '-b', 'main', `repos/${c}.git`)
    writeTree(join(this.dir, 'fleet'), {
      'repositories.yaml': [repository('catalog', false), ...clusters.map((c) => repository(c, true, labels[c]))].join(
        '---\n',
      ),
    })
  }

  fleet(files: Record<string, string>): void {
    writeTree(join(this.dir, 'fleet'), files)
  }

  async render(...args: string[]): Promise<{ exitCode: number; report: Report; stderr: string }> {
    const run = await runCli(this.dir, ['render', 'fleet', '--git', '--cache', 'cache', '--json', ...args])
    return { exitCode: run.exitCode, report: JSON.parse(run.stdout) as Report, stderr: run.stderr }
  }

  async branches(repo: string): Promise<string[]> {
    const refs = await git(
      join(this.dir, 'repos', `${repo}.git`),
      'for-each-ref',
      '--format=%(refname:short)',
      'refs/heads',
    )
    return refs.split('\n').filter(Boolean).sort()
  }

  async show(repo: string, ref: string, path: string): Promise<string> {
    return git(join(this.dir, 'repos', `${repo}.git`), 'show', `${ref}:${path}`)
  }
}

const pv = (name: string, repo: string, revision = 1) => source`
  apiVersion: config.porch.kpt.dev/v1alpha1
  kind: PackageVariant
  metadata: {name: ${name}-${repo}, namespace: default}
  spec: {upstream: {repo: catalog, package: ${name}, revision: ${revision}}, downstream: {repo: ${repo}, package: ${name}}}
`

function steps(report: Report, repo: string): string[] {
  return (
    (report.dependencies ?? [])
      .find((r) => r.name === repo)
      ?.steps.map((s) => `${s.action} ${s.package} ${s.from ? `${s.from} -> ` : ''}${s.version ?? ''}: ${s.outcome}`) ??
    []
  )
}
const variant = (report: Report, path: string) => report.variants.find((v) => v.path === path)!

describe('DependencyPolicy changes the plan of the repositories it selects (--git)', () => {
  let ws: Workspace
  beforeEach(() => (ws = new Workspace()))
  afterEach(() => rmSync(ws.dir, { recursive: true, force: true }))

  test(
    'install: false, prereleases, a pin, upgrades: Deny and downgrades: Allow, each on its own repository',
    async () => {
      const clusters = ['edge-01', 'edge-02', 'edge-03', 'edge-04', 'edge-05', 'edge-06']
      await ws.setUp(clusters)
      ws.fleet({
        'edge-monitor.yaml': edgeMonitorSet(clusters.slice(0, 5)),
        'legacy.yaml': pv('legacy-app', 'edge-06'),
        'installed.yaml': [installedOutside('edge-05', 'v1.12.0'), installedOutside('edge-06', 'v1.14.0')].join(
          '---\n',
        ),
        'policies.yaml': [
          policy('edge-02', 'repositories: [edge-02]\ninstall: false'),
          policy('edge-03', 'repositories: [edge-03]\nprereleases: {identifiers: [rc]}'),
          policy('edge-04', 'repositories: [edge-04]\npins:\n- {package: cert-manager, version: v1.12.0}'),
          policy('edge-05', 'repositories: [edge-05]\nupgrades: Deny'),
        ].join('---\n'),
      })
      const first = await ws.render()
      expect(first.exitCode).toBe(1)
      // No policy: today's plan.
      expect(steps(first.report, 'edge-01')).toEqual(['install cert-manager v1.14.0: done'])
      expect(await ws.branches('edge-01')).toEqual([
        'drafts/cert-manager/packagevariant-1',
        'drafts/edge-monitor/packagevariant-1',
      ])
      // install: false: planned and reported, nothing of it written.
      expect(steps(first.report, 'edge-02')).toEqual(['install cert-manager v1.14.0: planned'])
      expect(await ws.branches('edge-02')).toEqual(['drafts/edge-monitor/packagevariant-1'])
      expect(first.report.dependencies!.find((r) => r.name === 'edge-02')!.policy).toEqual([
        'install: false (DependencyPolicy default/edge-02)',
      ])
      // prereleases with the rc identifier: the release candidate.
      expect(steps(first.report, 'edge-03')).toEqual(['install cert-manager v1.15.0-rc.1: done'])
      // A pin overrides edge-monitor's >= v1.13.0, and says so.
      expect(steps(first.report, 'edge-04')).toEqual(['install cert-manager v1.12.0: done'])
      const pinned =
        'pin cert-manager v1.12.0 (DependencyPolicy default/edge-04 spec.pins[0]) overrides edge-monitor@v1.0.0, which asks >= v1.13.0: cert-manager v1.12.0 is planned'
      expect(first.report.dependencies!.find((r) => r.name === 'edge-04')!.overrides).toEqual([pinned])
      expect(variant(first.report, 'edge-04/edge-monitor').warnings).toContain(pinned)
      expect(first.stderr).toContain(`Pins overriding what dependants ask (DependencyPolicy):\n  edge-04: ${pinned}`)
      // upgrades: Deny: the dependant fails with the conflict, as Glasskube fails it; nothing of it is drafted.
      expect(variant(first.report, 'edge-05/edge-monitor').status).toBe('failed')
      expect(variant(first.report, 'edge-05/edge-monitor').reasons.map((r) => r.code)).toEqual(['DependencyUnresolved'])
      expect(
        variant(first.report, 'edge-05/edge-monitor')
          .reasons.map((r) => r.message)
          .join('\n'),
      ).toMatch(
        /cert-manager \(required: >=1.13.0, actual: v1.12.0\).*: upgrades: Deny \(DependencyPolicy default\/edge-05\); allowing it would upgrade cert-manager to v1.14.0/,
      )
      expect(await ws.branches('edge-05')).toEqual([])
      // downgrades: Deny (the default): legacy-app cannot have the v1.14.0 installed outside git.
      expect(
        variant(first.report, 'edge-06/legacy-app')
          .reasons.map((r) => r.message)
          .join('\n'),
      ).toContain('cert-manager (required: ~1.12.0, actual: v1.14.0)')

      ws.fleet({ 'downgrade.yaml': policy('edge-06', 'repositories: [edge-06]\ndowngrades: Allow') })
      const allowed = await ws.render()
      expect(variant(allowed.report, 'edge-06/legacy-app').status).toBe('created')
      expect(steps(allowed.report, 'edge-06')).toEqual(['downgrade cert-manager v1.14.0 -> v1.12.0: done'])
      expect(
        await ws.show('edge-06', 'drafts/cert-manager/packagevariant-1', 'cert-manager/deployment.yaml'),
      ).toContain('example.com/cert-manager:v1.12.0')

      // A policy that cannot be read: a problem of the fleet naming its field, and no repository's plan goes ahead.
      ws.fleet({ 'downgrade.yaml': policy('edge-06', 'repositories: [edge-06]\ndowngrades: Sometimes') })
      const broken = await ws.render()
      expect(broken.exitCode).toBe(1)
      expect(broken.stderr).toContain(
        'Fleet problems:\n  DependencyPolicy/default/edge-06: `spec.downgrades` must be Allow or Deny, got "Sometimes": every repository\'s dependency plan fails while it cannot be read',
      )
      expect(variant(broken.report, 'edge-01/edge-monitor')).toMatchObject({ status: 'failed' })
      expect(broken.stderr).not.toContain('    at ')
    },
    timeout,
  )

  test(
    'autoUpgrade keeps a dependency at the newest version; a configured dependency gets its configuration, and its changes',
    async () => {
      await ws.setUp(['edge-01'])
      ws.fleet({ 'edge-monitor.yaml': edgeMonitorSet(['edge-01']) })
      expect((await ws.render('--publish')).exitCode).toBe(0)
      // cert-manager v1.16.0 is published: what satisfies stays, by default.
      const catalog = join(ws.dir, 'repos', 'catalog')
      writeTree(catalog, declaredPackage('cert-manager', 'v1.16.0'))
      await git(catalog, 'commit', '-qam', 'cert-manager v1.16.0')
      await git(catalog, 'tag', 'cert-manager/v4')
      const kept = await ws.render()
      expect(steps(kept.report, 'edge-01')).toEqual([])
      expect(await ws.branches('edge-01')).toEqual(['main'])

      ws.fleet({ 'policy.yaml': policy('edge', 'autoUpgrade: true') })
      const upgraded = await ws.render('--publish')
      expect(upgraded.exitCode).toBe(0)
      expect(steps(upgraded.report, 'edge-01')).toEqual(['upgrade cert-manager v1.14.0 -> v1.16.0: done'])
      // A draft of its own (no variant changed to publish it with), for a person to publish.
      expect(await ws.branches('edge-01')).toEqual(['drafts/cert-manager/packagevariant-2', 'main'])
      expect(
        await ws.show('edge-01', 'drafts/cert-manager/packagevariant-2', 'cert-manager/deployment.yaml'),
      ).toContain('example.com/cert-manager:v1.16.0')
      expect((await runCli(ws.dir, ['publish', 'edge-01', '--fleet', 'fleet', '--cache', 'cache'])).exitCode).toBe(0)
      expect(await ws.show('edge-01', 'main', 'cert-manager/deployment.yaml')).toContain(
        'example.com/cert-manager:v1.16.0',
      )

      // Configured: the package context its policy gives, with CEL over the repository's target (here the Repository).
      ws.fleet({
        'policy.yaml': policy(
          'edge',
          'autoUpgrade: true\ndependencies:\n- package: cert-manager\n  packageContext:\n    data: {issuer-kind: ClusterIssuer}\n    dataExprs:\n    - {key: cluster-issuer, valueExpr: "\'letsencrypt-\' + target.name"}',
        ),
      })
      const configured = await ws.render()
      expect(configured.exitCode).toBe(0)
      expect(steps(configured.report, 'edge-01')).toEqual(['configure cert-manager v1.16.0 -> v1.16.0: done'])
      expect((await runCli(ws.dir, ['publish', 'edge-01', '--fleet', 'fleet', '--cache', 'cache'])).exitCode).toBe(0)
      const context = await ws.show('edge-01', 'main', 'cert-manager/package-context.yaml')
      expect(context).toContain('cluster-issuer: letsencrypt-edge-01')
      expect(context).toContain('issuer-kind: ClusterIssuer')
      expect(await ws.show('edge-01', 'main', 'cert-manager/Kptfile')).toContain(
        'kpt-variants.dev/installed-as-dependency: "true"',
      )
      // Nothing changed: no step, no draft.
      const again = await ws.render()
      expect(steps(again.report, 'edge-01')).toEqual([])
      expect(await ws.branches('edge-01')).toEqual(['main'])
    },
    timeout,
  )

  test(
    'a second owner of an API fails with both names unless it shares it on purpose; Kubernetes ranges against the cluster',
    async () => {
      await ws.setUp(['edge-01', 'edge-02', 'edge-03'], {
        'edge-02': { 'kpt-variants.dev/kubernetes-version': '1.28.3' },
        'edge-03': { 'kpt-variants.dev/kubernetes-version': '1.30.1' },
      })
      ws.fleet({ 'edge-monitor.yaml': edgeMonitorSet(['edge-01']) })
      expect((await ws.render('--publish')).exitCode).toBe(0)
      ws.fleet({ 'my-certs.yaml': pv('my-certs', 'edge-01') })
      const second = await ws.render()
      expect(second.exitCode).toBe(1)
      expect(variant(second.report, 'edge-01/my-certs').reasons.map((r) => r.code)).toEqual(['ApiOwnershipConflict'])
      expect(variant(second.report, 'edge-01/my-certs').reasons.map((r) => r.message)).toEqual([
        'CustomResourceDefinition certificates.cert-manager.io defines cert-manager.io/Certificate, which edge-01/cert-manager (package cert-manager, CustomResourceDefinition certificates.cert-manager.io) defines too: two packages of repository edge-01 may not own one API; if my-certs or cert-manager serves it on purpose, list {group: cert-manager.io, kind: Certificate} in spec.sharedAPIs of its PackageManifest',
      ])
      expect(await ws.branches('edge-01')).toEqual(['main'])

      // my-certs v2 shares the API on purpose, and runs on Kubernetes 1.29 and later.
      const catalog = join(ws.dir, 'repos', 'catalog')
      writeTree(
        catalog,
        declaredPackage(
          'my-certs',
          'v2.0.0',
          '  kubernetesVersion: ">=1.29.0"\n  sharedAPIs:\n  - {group: cert-manager.io, kind: Certificate}\n',
        ),
      )
      await git(catalog, 'commit', '-qam', 'my-certs v2.0.0')
      await git(catalog, 'tag', 'my-certs/v2')
      ws.fleet({
        'my-certs.yaml': ['edge-01', 'edge-02', 'edge-03'].map((repo) => pv('my-certs', repo, 2)).join('---\n'),
      })
      const shared = await ws.render()
      expect(shared.exitCode).toBe(1)
      expect(variant(shared.report, 'edge-01/my-certs')).toMatchObject({ status: 'created', reasons: [] })
      expect(variant(shared.report, 'edge-01/my-certs').warnings).toContain(
        "my-certs v2.0.0 needs Kubernetes >=1.29.0; the cluster's version is unknown (nothing at Repository edge-01 (label kpt-variants.dev/kubernetes-version)), so it is not checked",
      )
      expect(variant(shared.report, 'edge-02/my-certs').reasons).toEqual([
        {
          code: 'PlatformMismatch',
          message:
            'my-certs v2.0.0 needs Kubernetes >=1.29.0, and Repository edge-02 (label kpt-variants.dev/kubernetes-version) runs 1.28.3',
        },
      ])
      expect(variant(shared.report, 'edge-03/my-certs')).toMatchObject({ status: 'created', warnings: [] })
      expect(await ws.branches('edge-02')).toEqual([])
    },
    timeout,
  )
})
