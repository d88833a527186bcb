/**
 * `kpt-variants render` installing what packages need, end to end through the
 * CLI with real git repositories: a catalog repository whose published
 * packages declare themselves (cert-manager at two versions, a
 * prometheus-operator serving the ServiceMonitor API), and an edge-monitor
 * blueprint needing both, rendered to three clusters: one with nothing, one
 * with an older cert-manager someone installed and edited, one pinned by
 * another package to an incompatible range.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import { gitIdentity } from './e2e/runner.js'
import { createRepo, git, writeTree } from './support/git-repo.js'
import type { TreeSpec } from './support/git-repo.js'
import { crdFile, edgeMonitorSet, kptfile, manifest, repository } from './support/catalog-repo.js'
import { source } from './support/source.js'
import { runCli } from './support/cli-run.js'
import type { Run } from './support/cli-run.js'

const timeout = 120_000

function certManager(version: string): TreeSpec {
  return {
    'cert-manager/Kptfile': kptfile('cert-manager'),
    'cert-manager/manifest.yaml': manifest('cert-manager', version),
    'cert-manager/deployment.yaml': source`
      apiVersion: apps/v1
      kind: Deployment
      metadata:
        name: cert-manager
        namespace: cert-manager
      spec:
        replicas: 1
        template:
          spec:
            containers:
            - name: controller
              image: quay.io/jetstack/cert-manager-controller:${version}
    `,
  }
}

/** The catalog repository: cert-manager/v1 (v1.12.0) and /v2 (v1.14.0), prometheus-operator/v1, edge-monitor/v1 (the blueprint). */
async function createCatalog(dir: string): Promise<void> {
  const first: TreeSpec = {
    ...certManager('v1.12.0'),
    'prometheus-operator/Kptfile': kptfile('prometheus-operator'),
    'prometheus-operator/manifest.yaml': manifest('prometheus-operator', 'v0.70.0'),
    ...crdFile('prometheus-operator', 'monitoring.coreos.com', 'ServiceMonitor', 'crd.yaml'),
    'edge-monitor/Kptfile': kptfile('edge-monitor'),
    'edge-monitor/manifest.yaml': manifest(
      'edge-monitor',
      'v1.0.0',
      '  dependencies:\n  - name: cert-manager\n    version: ">= v1.13.0"\n  - gvk: {apiVersion: monitoring.coreos.com/v1, kind: ServiceMonitor}\n',
    ),
    'edge-monitor/monitor.yaml':
      'apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata:\n  name: edge\nspec: {}\n',
  }
  await createRepo(dir, [['cert-manager/v1', first]])
  for (const tag of ['prometheus-operator/v1', 'edge-monitor/v1']) await git(dir, 'tag', tag)
  writeTree(dir, certManager('v1.14.0'))
  await git(dir, 'commit', '-qam', 'cert-manager v1.14.0')
  await git(dir, 'tag', 'cert-manager/v2')
}

function fleet(clusters: readonly string[]): TreeSpec {
  return {
    'repositories.yaml': [repository('catalog', false), ...clusters.map((name) => repository(name, true))].join(
      '---\n',
    ),
    'edge-monitor.yaml': edgeMonitorSet(clusters),
  }
}

interface Step {
  action: string
  package: string
  version?: string
  from?: string
  path: string
  requiredBy: string[]
  outcome: string
}

interface Report {
  variants: {
    path?: string
    status: string
    subject: string
    reasons: { code: string; message: string }[]
    draft?: string
  }[]
  dependencies?: { name: string; steps: Step[] }[]
}

class Workspace {
  readonly dir = mkdtempSync(join(tmpdir(), 'kpt-variants-deps-e2e-'))

  run(...args: string[]): Promise<Run> {
    return runCli(this.dir, args)
  }

  async render(...args: string[]): Promise<{ exitCode: number; report: Report; stderr: string }> {
    const run = await this.run('render', 'fleet', '--cache', 'cache', '--json', ...args)
    return { exitCode: run.exitCode, report: JSON.parse(run.stdout) as Report, stderr: run.stderr }
  }

  /** kpt pkg get of a catalog revision into `out/<repo>/<name>`, as someone installs a package by hand. */
  async kptGet(ref: string, dest: string): Promise<void> {
    mkdirSync(join(this.dir, dest, '..'), { recursive: true })
    await execa(
      'kpt',
      ['pkg', 'get', `file://${this.dir}/repos/catalog.git/${ref}`, join(this.dir, dest), '--for-deployment'],
      { env: { ...process.env, ...gitIdentity } },
    )
  }

  read(path: string): string {
    return readFileSync(join(this.dir, path), 'utf8')
  }

  /** Every file below `dir` with its modification time and inode: what a run that writes nothing leaves as it was. */
  touched(dir: string): Map<string, string> {
    const out = new Map<string, string>()
    const walk = (current: string) => {
      for (const entry of readdirSync(current, { withFileTypes: true })) {
        const full = join(current, entry.name)
        if (entry.isDirectory()) walk(full)
        const stat = statSync(full, { bigint: true })
        out.set(full, `${stat.mtimeNs} ${stat.ino}`)
      }
    }
    const root = join(this.dir, dir)
    // The root's own time is left out: a run makes and removes its lock file (`.kpt-variants.lock`) there.
    // A lock left behind, or any other entry added or removed, still shows as a key of the map.
    out.set(root, `${statSync(root, { bigint: true }).ino}`)
    walk(root)
    return out
  }
}

/** The steps of a repository's plan as `action package from -> version at path: outcome`. */
function steps(report: Report, repo: string): string[] {
  const versions = (s: Step) => (s.action === 'remove' ? s.from : s.from ? `${s.from} -> ${s.version}` : s.version)
  return (
    (report.dependencies ?? [])
      .find((r) => r.name === repo)
      ?.steps.map((s) => `${s.action} ${s.package} ${versions(s)} at ${s.path}: ${s.outcome}`) ?? []
  )
}

describe('render installs what packages need', () => {
  let ws: Workspace
  beforeEach(async () => {
    ws = new Workspace()
    await createCatalog(join(ws.dir, 'repos', 'catalog'))
    await git(ws.dir, 'clone', '-q', '--bare', 'repos/catalog', 'repos/catalog.git')
    writeTree(join(ws.dir, 'fleet'), fleet(['edge-01', 'edge-02', 'edge-03']))
  })
  afterEach(() => rmSync(ws.dir, { recursive: true, force: true }))

  test(
    '--out: installed where missing, upgraded keeping a local edit, failed with the explanation where pinned; a re-render writes nothing; the last dependant gone, the dependency installed for it goes and an explicit one stays',
    async () => {
      // edge-02: cert-manager v1.12.0 installed by hand, with a local edit; edge-03: the same, and a package pinning it to ~1.12.0.
      for (const repo of ['edge-02', 'edge-03'])
        await ws.kptGet('cert-manager@cert-manager/v1', `out/${repo}/cert-manager`)
      writeTree(join(ws.dir, 'out', 'edge-02', 'cert-manager'), {
        'deployment.yaml': ws.read('out/edge-02/cert-manager/deployment.yaml').replace('replicas: 1', 'replicas: 3'),
      })
      writeTree(join(ws.dir, 'out', 'edge-03', 'legacy-app'), {
        Kptfile: kptfile('legacy-app'),
        'manifest.yaml': manifest(
          'legacy-app',
          'v2.0.0',
          '  dependencies:\n  - name: cert-manager\n    version: "~1.12.0"\n',
        ),
      })

      const first = await ws.render('--out', 'out')
      expect(first.exitCode).toBe(1)
      expect(steps(first.report, 'edge-01')).toEqual([
        'install cert-manager v1.14.0 at cert-manager: done',
        'install prometheus-operator v0.70.0 at prometheus-operator: done',
      ])
      expect(steps(first.report, 'edge-02')).toEqual([
        'upgrade cert-manager v1.12.0 -> v1.14.0 at cert-manager: done',
        'install prometheus-operator v0.70.0 at prometheus-operator: done',
      ])
      expect(steps(first.report, 'edge-03')).toEqual([])
      expect(first.report.dependencies!.find((r) => r.name === 'edge-02')!.steps[0]!.requiredBy).toEqual([
        'edge-monitor >=1.13.0',
      ])
      const failed = first.report.variants.filter((v) => v.status === 'failed')
      expect(failed.map((v) => v.path)).toEqual(['edge-03/edge-monitor'])
      expect(failed[0]!.reasons.map((r) => r.code)).toEqual(['DependencyUnresolved'])
      expect(failed[0]!.reasons.map((r) => r.message).join('\n')).toMatch(
        /edge-monitor@v1.0.0 -> cert-manager in repository edge-03: .*legacy-app@v2.0.0 .*~1.12.0.*no set of versions satisfies every dependency/s,
      )
      expect(first.stderr).toContain(
        'edge-02: upgrade cert-manager v1.12.0 -> v1.14.0, required by edge-monitor >=1.13.0',
      )

      // Installed: from its source, marked, with the package context a PackageVariant's package gets.
      expect(ws.read('out/edge-01/cert-manager/deployment.yaml')).toContain('cert-manager-controller:v1.14.0')
      expect(ws.read('out/edge-01/cert-manager/Kptfile')).toContain('kpt-variants.dev/installed-as-dependency: "true"')
      expect(ws.read('out/edge-01/cert-manager/Kptfile')).toContain('ref: cert-manager/v2')
      expect(ws.read('out/edge-01/cert-manager/package-context.yaml')).toContain('name: cert-manager')
      expect(ws.read('out/edge-01/prometheus-operator/crd.yaml')).toContain('ServiceMonitor')
      // Upgraded by a 3-way update: the edit kept, the new image taken, still someone's own (unmarked).
      const upgraded = ws.read('out/edge-02/cert-manager/deployment.yaml')
      expect(upgraded).toContain('replicas: 3')
      expect(upgraded).toContain('cert-manager-controller:v1.14.0')
      expect(ws.read('out/edge-02/cert-manager/Kptfile')).not.toContain('installed-as-dependency')
      // The pinned repository got nothing: its variant fails alone.
      expect(readdirSync(join(ws.dir, 'out', 'edge-03')).sort()).toEqual(['cert-manager', 'legacy-app'])

      // Nothing new: no file written (the record of failures included), though edge-03 still fails; twice, the
      // second time from a record that knows edge-03's variant failed on its dependencies.
      for (let run = 0; run < 2; run++) {
        const before = new Map([...ws.touched('out'), ...ws.touched('cache/runs')])
        const again = await ws.render('--out', 'out')
        expect(again.exitCode).toBe(1)
        expect(again.report.variants.filter((v) => v.status !== 'unchanged' && v.status !== 'failed')).toEqual([])
        expect(new Map([...ws.touched('out'), ...ws.touched('cache/runs')])).toEqual(before)
      }

      // edge-01 and edge-02 leave the set: their edge-monitor goes, cert-manager installed for it goes, the one installed by hand stays.
      writeTree(join(ws.dir, 'fleet'), fleet(['edge-03']))
      writeTree(join(ws.dir, 'fleet'), {
        'repositories.yaml': fleet(['edge-01', 'edge-02', 'edge-03'])['repositories.yaml']!,
      })
      // Two of the set's three packages at once: the deletion guard holds them, and what they need stays.
      const held = await ws.render('--out', 'out')
      expect(held.exitCode).toBe(1)
      expect(steps(held.report, 'edge-01')).toEqual([])
      expect(readdirSync(join(ws.dir, 'out')).sort()).toEqual(['edge-01', 'edge-02', 'edge-03'])
      const gone = await ws.render('--out', 'out', '--allow-deletions')
      expect(steps(gone.report, 'edge-01')).toEqual([
        'remove cert-manager v1.14.0 at cert-manager: done',
        'remove prometheus-operator v0.70.0 at prometheus-operator: done',
      ])
      expect(steps(gone.report, 'edge-02')).toEqual(['remove prometheus-operator v0.70.0 at prometheus-operator: done'])
      expect(readdirSync(join(ws.dir, 'out')).sort()).toEqual(['edge-02', 'edge-03'])
      expect(readdirSync(join(ws.dir, 'out', 'edge-02'))).toEqual(['cert-manager'])
    },
    timeout,
  )

  test(
    '--dependencies check reports the plan and writes nothing of it',
    async () => {
      const checked = await ws.render('--out', 'out', '--dependencies', 'check')
      expect(checked.exitCode).toBe(0)
      expect(steps(checked.report, 'edge-01')).toEqual([
        'install cert-manager v1.14.0 at cert-manager: planned',
        'install prometheus-operator v0.70.0 at prometheus-operator: planned',
      ])
      for (const repo of ['edge-01', 'edge-02', 'edge-03'])
        expect(readdirSync(join(ws.dir, 'out', repo))).toEqual(['edge-monitor'])
      const off = await ws.render('--out', 'out', '--dependencies', 'off')
      expect(off.report.dependencies).toBeUndefined()
    },
    timeout,
  )

  test(
    '--git: each dependency its own draft; publish publishes a repository in dependency order and refuses a package whose dependencies are not published',
    async () => {
      for (const repo of ['edge-01', 'edge-02', 'edge-03'])
        await git(ws.dir, 'init', '-q', '--bare', '-b', 'main', `repos/${repo}.git`)
      const drafted = await ws.render('--git')
      expect(drafted.exitCode).toBe(0)
      const edge01 = drafted.report.variants.filter((v) => v.path?.startsWith('edge-01/')).map((v) => [v.path, v.draft])
      expect(edge01).toEqual([
        ['edge-01/cert-manager', 'drafts/cert-manager/packagevariant-1'],
        ['edge-01/edge-monitor', 'drafts/edge-monitor/packagevariant-1'],
        ['edge-01/prometheus-operator', 'drafts/prometheus-operator/packagevariant-1'],
      ])
      const message = await git(
        join(ws.dir, 'repos', 'edge-01.git'),
        'log',
        '-1',
        '--format=%B',
        'drafts/cert-manager/packagevariant-1',
      )
      expect(message).toContain('Dependency of: edge-monitor >=1.13.0')

      // A re-render proposes nothing new.
      const refs = await git(join(ws.dir, 'repos', 'edge-01.git'), 'for-each-ref')
      await ws.render('--git')
      expect(await git(join(ws.dir, 'repos', 'edge-01.git'), 'for-each-ref')).toBe(refs)

      const alone = await ws.run('publish', 'edge-01', 'edge-monitor', '--fleet', 'fleet', '--cache', 'cache')
      expect(alone.exitCode).toBe(1)
      expect(alone.stderr).toContain(
        'edge-monitor: not published: it needs cert-manager, whose draft drafts/cert-manager/packagevariant-1 is not published: publish cert-manager first, or with it',
      )
      const all = await ws.run('publish', 'edge-01', '--fleet', 'fleet', '--cache', 'cache')
      expect(all.exitCode).toBe(0)
      const log = await git(join(ws.dir, 'repos', 'edge-01.git'), 'log', '--format=%s', 'main')
      expect(log.split('\n').reverse()).toEqual([
        'Publish cert-manager v1',
        'Publish prometheus-operator v1',
        'Publish edge-monitor v1',
      ])

      // --publish publishes a run's drafts in the same order.
      const published = await ws.render('--git', '--publish')
      expect(published.exitCode).toBe(0)
      const order = (await git(join(ws.dir, 'repos', 'edge-02.git'), 'log', '--format=%s', 'main'))
        .split('\n')
        .reverse()
      expect(order.indexOf('Publish edge-monitor v1')).toBeGreaterThan(order.indexOf('Publish cert-manager v1'))
      expect(order.indexOf('Publish edge-monitor v1')).toBeGreaterThan(order.indexOf('Publish prometheus-operator v1'))
    },
    timeout,
  )
})
