/**
 * `kpt-variants render FLEET --out DIR` end to end, as a real process
 * (`node bin/kpt-variants`, built from dist/): a small fleet per test in a temp
 * directory, laid out as `npm run demo` lays out examples/fleet:
 *
 *   repos/blueprints   git repository, package nginx, tags nginx/v1 and nginx/v2
 *                      (Porch's convention: revision N of package P is tag P/vN)
 *   fleet/             Repositories, WorkloadClusters, region endpoints, the nginx set
 *   out/               --out
 */
import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative, sep } from 'node:path'
import { execa } from 'execa'
import { parse } from 'yaml'
import { gitIdentity, repoRoot } from './e2e/runner.js'
import { git, readTreeWithModes, writeTree } from './support/git-repo.js'
import { source } from './support/source.js'
import { createBlueprints, fleetFiles, nginxV1, regions, threeClusters, v1Image, v2Image } from './support/fleet.js'
import type { Cluster, FleetOptions } from './support/fleet.js'

const bin = join(repoRoot, 'bin', 'kpt-variants')
const timeout = 30_000

// ---------------------------------------------------------------------------
// Running the command.

interface Run {
  exitCode: number
  stdout: string
  stderr: string
}

interface VariantEntry {
  subject: string
  path?: string
  status: 'created' | 'updated' | 'unchanged' | 'deleted' | 'orphaned' | 'failed'
  upstream?: string
  previousUpstream?: string
  reasons: string[]
  warnings: string[]
  conflicts: unknown[]
  diff?: string
}

interface JsonReport {
  apiVersion: string
  kind: string
  dryRun: boolean
  summary: Record<VariantEntry['status'], number>
  variants: VariantEntry[]
  problems: string[]
}

/** A test's directory: the blueprint repository, the fleet, the output. */
class Workspace {
  readonly fleet: string
  readonly out: string
  readonly blueprints: string

  constructor(readonly dir: string) {
    this.fleet = join(dir, 'fleet')
    this.out = join(dir, 'out')
    this.blueprints = join(dir, 'repos', 'blueprints')
  }

  static async create(options: FleetOptions): Promise<Workspace> {
    const ws = new Workspace(mkdtempSync(join(tmpdir(), 'kpt-variants-render-e2e-')))
    await createBlueprints(ws.blueprints)
    ws.writeFleet(options)
    return ws
  }

  /** Replaces the fleet directory's files. */
  writeFleet(options: FleetOptions): void {
    rmSync(this.fleet, { recursive: true, force: true })
    mkdirSync(this.fleet, { recursive: true })
    writeTree(this.fleet, fleetFiles(options))
  }

  /** `kpt-variants render <args>` in the workspace directory. */
  async render(...args: string[]): Promise<Run> {
    const run = await execa('node', [bin, 'render', ...args], {
      cwd: this.dir,
      // The record of earlier renders (run/memo.ts) stays in the workspace.
      env: { ...process.env, ...gitIdentity, XDG_CACHE_HOME: join(this.dir, 'cache') },
      reject: false,
      stdin: 'ignore',
      // Diffs end with a newline that belongs to them.
      stripFinalNewline: false,
    })
    return { exitCode: run.exitCode ?? -1, stdout: String(run.stdout), stderr: String(run.stderr) }
  }

  /** `render fleet --out out <args>`, which must exit 0. */
  async renderOk(...args: string[]): Promise<Run> {
    const run = await this.render('fleet', '--out', 'out', ...args)
    if (run.exitCode !== 0) throw new Error(`render exited ${run.exitCode}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`)
    return run
  }

  /** `render fleet --out out --json <args>`: the exit code and the parsed report. */
  async renderJson(...args: string[]): Promise<{ run: Run; report: JsonReport }> {
    const run = await this.render('fleet', '--out', 'out', '--json', ...args)
    let report: JsonReport
    try {
      report = JSON.parse(run.stdout) as JsonReport
    } catch {
      throw new Error(`stdout is not JSON (exit ${run.exitCode})\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`)
    }
    return { run, report }
  }

  read(path: string): string {
    return readFileSync(join(this.out, path), 'utf8')
  }

  yaml<T = Record<string, any>>(path: string): T {
    return parse(this.read(path)) as T
  }

  async commitOf(tag: string): Promise<string> {
    return (await git(this.blueprints, 'rev-parse', `${tag}^{commit}`)).trim()
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true })
  }
}

/** Every file and directory below `dir` (dot-entries included) with its bytes, inode and mtime. */
function snapshot(dir: string): Record<string, { content: string; ino: number; mtimeMs: number }> {
  const out: Record<string, { content: string; ino: number; mtimeMs: number }> = {}
  const walk = (current: string) => {
    for (const name of readdirSync(current).sort()) {
      const full = join(current, name)
      const stat = lstatSync(full)
      const rel = relative(dir, full).split(sep).join('/')
      if (stat.isDirectory()) {
        out[`${rel}/`] = { content: '', ino: stat.ino, mtimeMs: stat.mtimeMs }
        walk(full)
      } else out[rel] = { content: readFileSync(full).toString('base64'), ino: stat.ino, mtimeMs: stat.mtimeMs }
    }
  }
  walk(dir)
  return out
}

/** A summary line of the human report: `STATUS  PACKAGE  VARIANT  UPSTREAM`. */
function summaryRow(status: string, path: string, variant: string, upstream = ''): RegExp {
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  return new RegExp(`^${esc(status)}\\s+${esc(path)}\\s+${esc(variant)}${upstream ? `\\s+${esc(upstream)}` : ''}$`, 'm')
}

const paths = (report: JsonReport) => report.variants.map((v) => v.path)
const entry = (report: JsonReport, path: string) => {
  const found = report.variants.filter((v) => v.path === path)
  if (found.length !== 1) throw new Error(`expected one report entry for ${path}, got ${found.length}:\n${JSON.stringify(report.variants, null, 2)}`)
  return found[0]!
}

// ---------------------------------------------------------------------------

describe('kpt-variants render', () => {
  const workspaces: Workspace[] = []
  const workspace = async (options: FleetOptions) => {
    const ws = await Workspace.create(options)
    workspaces.push(ws)
    return ws
  }
  afterEach(() => {
    for (const ws of workspaces.splice(0)) ws.remove()
  })

  test(
    'creates one package per target: Kptfile upstream and lock, package context, injected ConfigMap',
    async () => {
      const ws = await workspace({ clusters: threeClusters })
      const run = await ws.renderOk()

      expect(run.stdout).toBe('')
      expect(readdirSync(ws.out).sort()).toEqual(['edge-01', 'edge-02', 'edge-03'])
      for (const c of threeClusters) expect(readdirSync(join(ws.out, c.name))).toEqual(['nginx'])
      expect(readdirSync(join(ws.out, 'edge-01', 'nginx')).sort()).toEqual(['Kptfile', 'README.md', 'deployment.yaml', 'package-context.yaml', 'region-endpoints.yaml'])

      // Kptfile: upstream names the tag, upstreamLock the tag and its commit, owner recorded.
      const commit = await ws.commitOf('nginx/v1')
      for (const c of threeClusters) {
        const kptfile = ws.yaml(`${c.name}/nginx/Kptfile`)
        expect(kptfile['metadata']['name']).toBe('nginx')
        expect(kptfile['upstream']).toMatchObject({ type: 'git', git: { directory: '/nginx', ref: 'nginx/v1' }, updateStrategy: 'resource-merge' })
        expect(kptfile['upstreamLock']).toMatchObject({ type: 'git', git: { directory: '/nginx', ref: 'nginx/v1', commit } })
        expect(kptfile['upstream']['git']['repo']).toMatch(/repos\/blueprints$/)
        expect(kptfile['upstreamLock']['git']['repo']).toBe(kptfile['upstream']['git']['repo'])
        expect(kptfile['metadata']['annotations']).toMatchObject({
          'kpt-variants.dev/package-variant': `default/nginx-${c.name}-nginx`,
          'kpt-variants.dev/package-variant-set': 'default/nginx',
          'kpt-variants.dev/deletion-policy': 'delete',
        })

        // packageContext: data and dataExprs, on top of kpt's `name`.
        expect(ws.yaml(`${c.name}/nginx/package-context.yaml`)).toEqual({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'kptfile.kpt.dev', annotations: { 'config.kubernetes.io/local-config': 'true' } },
          data: { name: 'nginx', team: 'web-platform', region: c.region, cluster: c.name },
        })

        // injectors: the region's endpoints ConfigMap's data, into the required in-package ConfigMap.
        const injected = ws.yaml(`${c.name}/nginx/region-endpoints.yaml`)
        expect(injected['metadata']['name']).toBe('region-endpoints')
        expect(injected['metadata']['annotations']['kpt.dev/injected-resource-name']).toBe(`${c.region}-endpoints`)
        expect(injected['data']).toEqual({ API_ENDPOINT: `https://api.${c.region}.example.com` })

        // The rest is the upstream's.
        const deployment = ws.yaml(`${c.name}/nginx/deployment.yaml`)
        expect(deployment['spec']['replicas']).toBe(2)
        expect(deployment['spec']['template']['spec']['containers'][0]['image']).toBe(v1Image)
        expect(ws.read(`${c.name}/nginx/README.md`)).toBe(nginxV1['nginx/README.md'])
      }

      // The summary on stderr.
      for (const c of threeClusters) expect(run.stderr).toMatch(summaryRow('created', `${c.name}/nginx`, `default/nginx-${c.name}-nginx`, 'blueprints/nginx v1'))
      expect(run.stderr).toContain('3 variant(s): 3 created, 0 updated, 0 unchanged, 0 failed')
      expect(run.stderr).not.toContain('Failed:')
      // No staging directory is left behind.
      expect(readdirSync(ws.out).filter((name) => name.startsWith('.'))).toEqual([])
    },
    timeout,
  )

  test(
    'a second run is idempotent: every variant unchanged, no file rewritten',
    async () => {
      const ws = await workspace({ clusters: threeClusters })
      await ws.renderOk()
      const before = snapshot(ws.out)
      // Let a rewrite show in mtimes even on coarse-grained file systems.
      await new Promise((resolve) => setTimeout(resolve, 50))

      const { run, report } = await ws.renderJson()
      expect(run.exitCode).toBe(0)
      expect(report.summary).toEqual({ created: 0, updated: 0, unchanged: 3, deleted: 0, orphaned: 0, failed: 0 })
      expect(report.variants.map((v) => [v.path, v.status])).toEqual([
        ['edge-01/nginx', 'unchanged'],
        ['edge-02/nginx', 'unchanged'],
        ['edge-03/nginx', 'unchanged'],
      ])
      expect(run.stderr).toContain('3 variant(s): 0 created, 0 updated, 3 unchanged, 0 failed')
      expect(snapshot(ws.out)).toEqual(before)
    },
    timeout,
  )

  test(
    'a file of the downstream that is not KRM (local values) survives re-renders, as kpt and Porch leave such files alone',
    async () => {
      const ws = await workspace({ clusters: threeClusters })
      await ws.renderOk()
      writeFileSync(join(ws.out, 'edge-01/nginx/values.yaml'), 'replicas: 3 # local, not a KRM object\n')
      for (const args of [[], ['--force']]) {
        const { run, report } = await ws.renderJson(...args)
        expect(run.exitCode).toBe(0)
        expect(entry(report, 'edge-01/nginx').status).toBe('unchanged')
        expect(ws.read('edge-01/nginx/values.yaml')).toBe('replicas: 3 # local, not a KRM object\n')
      }
    },
    timeout,
  )

  test(
    'the record of earlier renders skips only what is unchanged: an injected object or a downstream edit renders again; --force renders all',
    async () => {
      const ws = await workspace({ clusters: threeClusters })
      const first = await ws.renderJson()
      expect(first.report.summary.created).toBe(3)
      expect(readdirSync(join(ws.dir, 'cache', 'kpt-variants', 'renders'))).toHaveLength(1)
      // A skipped variant reports what a full render of it does.
      const skipped = await ws.renderJson()
      const forced = await ws.renderJson('--force')
      expect(skipped.report).toEqual(forced.report)
      expect(skipped.report.summary.unchanged).toBe(3)

      // The us-west1 endpoints change: only the variant injecting them renders again.
      const fleetFile = join(ws.fleet, 'endpoints.yaml')
      writeFileSync(fleetFile, readFileSync(fleetFile, 'utf8').replace('https://api.us-west1.example.com', 'https://api2.us-west1.example.com'))
      const injected = await ws.renderJson()
      expect(injected.report.variants.map((v) => [v.path, v.status])).toEqual([
        ['edge-01/nginx', 'unchanged'],
        ['edge-02/nginx', 'updated'],
        ['edge-03/nginx', 'unchanged'],
      ])
      expect(ws.yaml('edge-02/nginx/region-endpoints.yaml')['data']).toEqual({ API_ENDPOINT: 'https://api2.us-west1.example.com' })

      // Someone edits an injected value in the output: the next render puts the cluster's value back.
      const edited = join(ws.out, 'edge-03', 'nginx', 'region-endpoints.yaml')
      writeFileSync(edited, readFileSync(edited, 'utf8').replace('https://api.eu-west1.example.com', 'https://elsewhere.example.com'))
      const restored = await ws.renderJson()
      expect(restored.report.variants.map((v) => v.status)).toEqual(['unchanged', 'unchanged', 'updated'])
      expect(ws.yaml('edge-03/nginx/region-endpoints.yaml')['data']).toEqual({ API_ENDPOINT: 'https://api.eu-west1.example.com' })

      // Two seconds on, a run trusts the files' metadata and reads no content; an edit of the same size still shows.
      await new Promise((resolve) => setTimeout(resolve, 2100))
      expect((await ws.renderJson()).report.summary.unchanged).toBe(3)
      const record = readdirSync(join(ws.dir, 'cache', 'kpt-variants', 'renders'))[0]!
      const entries = JSON.parse(readFileSync(join(ws.dir, 'cache', 'kpt-variants', 'renders', record), 'utf8')).entries as Record<string, { stat?: string }>
      expect(Object.values(entries).every((e) => typeof e.stat === 'string')).toBe(true)
      const sameSize = join(ws.out, 'edge-01', 'nginx', 'region-endpoints.yaml')
      writeFileSync(sameSize, readFileSync(sameSize, 'utf8').replace('https://api.us-east1.example.com', 'https://api.us-east9.example.com'))
      const noticed = await ws.renderJson()
      expect(noticed.report.variants.map((v) => v.status)).toEqual(['updated', 'unchanged', 'unchanged'])
      expect(ws.yaml('edge-01/nginx/region-endpoints.yaml')['data']).toEqual({ API_ENDPOINT: 'https://api.us-east1.example.com' })
    },
    timeout,
  )

  test(
    'a re-render in which nothing can have changed reports the last one without planning; any change of fleet, upstream or output renders again',
    async () => {
      const ws = await workspace({ clusters: threeClusters })
      const cache = join(ws.dir, 'cache', 'kpt-variants')
      const quietRecords = () => (existsSync(join(cache, 'quiet-runs')) ? readdirSync(join(cache, 'quiet-runs')) : [])
      const statuses = (report: JsonReport) => report.variants.map((v) => [v.path, v.status])
      const allUnchanged = threeClusters.map((c) => [`${c.name}/nginx`, 'unchanged'])
      /** Renders until a run has recorded that nothing changed: files written in the last two seconds are not trusted. */
      const settle = async () => {
        await new Promise((resolve) => setTimeout(resolve, 2100))
        const full = await ws.renderJson()
        expect(statuses(full.report)).toEqual(allUnchanged)
        expect(quietRecords()).toHaveLength(1)
        return full
      }
      expect((await ws.renderJson()).report.summary.created).toBe(3)
      // Written just now: no record of a quiet run yet.
      expect(quietRecords()).toEqual([])
      const full = await settle()

      // Answered from the record: the same report (and exit code), and the record of earlier renders is not even read
      // or written: removed, it stays removed.
      rmSync(join(cache, 'renders'), { recursive: true })
      const replayed = await ws.renderJson()
      expect(replayed.report).toEqual(full.report)
      expect(replayed.run.stderr).toBe(full.run.stderr)
      expect(replayed.run.exitCode).toBe(0)
      expect(existsSync(join(cache, 'renders'))).toBe(false)

      // A fleet file changes: rendered in full (the injected value moves), and the record is gone until a quiet run.
      const endpoints = join(ws.fleet, 'endpoints.yaml')
      writeFileSync(endpoints, readFileSync(endpoints, 'utf8').replace('https://api.us-west1.example.com', 'https://api3.us-west1.example.com'))
      expect(statuses((await ws.renderJson()).report)).toEqual([
        ['edge-01/nginx', 'unchanged'],
        ['edge-02/nginx', 'updated'],
        ['edge-03/nginx', 'unchanged'],
      ])
      expect(quietRecords()).toEqual([])
      await settle()

      // An output file is edited, keeping its size: the render puts it back.
      const edited = join(ws.out, 'edge-01', 'nginx', 'region-endpoints.yaml')
      writeFileSync(edited, readFileSync(edited, 'utf8').replace('https://api.us-east1.example.com', 'https://api.us-east7.example.com'))
      expect(statuses((await ws.renderJson()).report)).toEqual([
        ['edge-01/nginx', 'updated'],
        ['edge-02/nginx', 'unchanged'],
        ['edge-03/nginx', 'unchanged'],
      ])
      expect(ws.yaml('edge-01/nginx/region-endpoints.yaml')['data']).toEqual({ API_ENDPOINT: 'https://api.us-east1.example.com' })
      await settle()

      // A package is removed, or one appears that no variant renders: each is noticed.
      rmSync(join(ws.out, 'edge-03'), { recursive: true })
      expect(statuses((await ws.renderJson()).report)).toEqual([...allUnchanged.slice(0, 2), ['edge-03/nginx', 'created']])
      await settle()
      cpSync(join(ws.out, 'edge-02', 'nginx'), join(ws.out, 'stray', 'nginx'), { recursive: true })
      const stray = await ws.renderJson()
      expect(statuses(stray.report).filter(([path]) => path !== 'stray/nginx')).toEqual(allUnchanged)
      expect(quietRecords()).toEqual([])
      rmSync(join(ws.out, 'stray'), { recursive: true, force: true })
      await settle()

      // The upstream tag moves to another commit: every variant is updated to it.
      await git(ws.blueprints, 'tag', '-f', 'nginx/v1', await ws.commitOf('nginx/v2'))
      const moved = await ws.renderJson()
      expect(moved.report.summary.updated).toBe(3)
      expect(ws.yaml('edge-01/nginx/deployment.yaml')['spec']['template']['spec']['containers'][0]['image']).toBe(v2Image)
      await settle()
    },
    // Seven runs and six two-second waits for file metadata to be trusted.
    90_000,
  )

  test(
    '--dry-run writes nothing; --dry-run --diff prints unified diffs that match the real run',
    async () => {
      const ws = await workspace({ clusters: threeClusters.slice(0, 2) })

      // Nothing rendered yet: out is not even created.
      const dry = await ws.render('fleet', '--out', 'out', '--dry-run')
      expect(dry.exitCode).toBe(0)
      expect(existsSync(ws.out)).toBe(false)
      expect(dry.stdout).toBe('')
      expect(dry.stderr).toMatch(summaryRow('created', 'edge-01/nginx', 'default/nginx-edge-01-nginx', 'blueprints/nginx v1'))
      expect(dry.stderr).toContain('Dry run (nothing written): 2 variant(s): 2 created, 0 updated, 0 unchanged, 0 failed')

      const created = await ws.render('fleet', '--out', 'out', '--dry-run', '--diff')
      expect(created.exitCode).toBe(0)
      expect(existsSync(ws.out)).toBe(false)
      expect(created.stdout).toContain('--- /dev/null\n+++ b/edge-01/nginx/Kptfile\n@@ -0,0 +1,')
      expect(created.stdout).toContain('--- /dev/null\n+++ b/edge-02/nginx/deployment.yaml\n')
      expect(created.stdout).toContain('+    kpt-variants.dev/package-variant: default/nginx-edge-02-nginx\n')
      // The summary goes to stderr, never into the diff.
      expect(created.stdout).not.toContain('variant(s)')

      // An update of existing packages: the diff shows exactly the change, the packages stay as they were.
      await ws.renderOk()
      const before = snapshot(ws.out)
      ws.writeFleet({ clusters: threeClusters.slice(0, 2), team: 'edge-web' })
      const changed = await ws.render('fleet', '--out', 'out', '--dry-run', '--diff')
      expect(changed.exitCode).toBe(0)
      expect(snapshot(ws.out)).toEqual(before)
      for (const c of ['edge-01', 'edge-02']) {
        expect(changed.stdout).toContain(`--- a/${c}/nginx/package-context.yaml\n+++ b/${c}/nginx/package-context.yaml\n@@ `)
        expect(changed.stdout).toContain('\n-  team: web-platform\n+  team: edge-web\n')
      }
      expect(changed.stdout).not.toContain('deployment.yaml')
      expect(changed.stderr).toContain('Dry run (nothing written): 2 variant(s): 0 created, 2 updated, 0 unchanged, 0 failed')

      // The diff, applied to a copy of the output, gives what the real run writes.
      const copy = join(ws.dir, 'patched')
      cpSync(ws.out, copy, { recursive: true })
      await execa('git', ['apply', '--unsafe-paths', '-'], { cwd: copy, input: changed.stdout })
      const real = await ws.renderOk()
      expect(real.stderr).toContain('2 variant(s): 0 created, 2 updated, 0 unchanged, 0 failed')
      expect(readTreeWithModes(copy)).toEqual(readTreeWithModes(ws.out))
    },
    timeout,
  )

  test(
    '--json prints a parseable report with one entry per variant',
    async () => {
      const ws = await workspace({ clusters: threeClusters })
      const { run, report } = await ws.renderJson()
      expect(run.exitCode).toBe(0)
      expect(report).toMatchObject({ apiVersion: 'kpt-variants.dev/v1alpha1', kind: 'RenderReport', dryRun: false, problems: [] })
      expect(report.summary).toEqual({ created: 3, updated: 0, unchanged: 0, deleted: 0, orphaned: 0, failed: 0 })
      expect(report.variants).toEqual(
        threeClusters.map((c) => ({
          subject: `PackageVariant default/nginx-${c.name}-nginx`,
          path: `${c.name}/nginx`,
          status: 'created',
          set: 'default/nginx',
          labels: { 'config.porch.kpt.dev/packagevariantset': 'nginx' },
          upstream: 'blueprints/nginx v1',
          injected: [`ConfigMap region-endpoints <- ${c.region}-endpoints`],
          reasons: [],
          warnings: [],
          conflicts: [],
        })),
      )
      // The human summary still goes to stderr.
      expect(run.stderr).toContain('3 variant(s): 3 created, 0 updated, 0 unchanged, 0 failed')

      // --json --dry-run --diff: the diffs are in the report, stdout is only JSON.
      ws.writeFleet({ clusters: threeClusters, team: 'edge-web' })
      const dry = await ws.renderJson('--dry-run', '--diff')
      expect(dry.run.exitCode).toBe(0)
      expect(dry.report.dryRun).toBe(true)
      expect(dry.report.summary).toMatchObject({ updated: 3, failed: 0 })
      expect(paths(dry.report)).toEqual(threeClusters.map((c) => `${c.name}/nginx`))
      for (const v of dry.report.variants) {
        expect(v.status).toBe('updated')
        expect(v.diff).toContain(`+++ b/${v.path}/package-context.yaml`)
        expect(v.diff).toContain('+  team: edge-web')
      }
    },
    timeout,
  )

  test(
    'one bad variant does not stop the others: exit 1, the others written, the failures named',
    async () => {
      const clusters: Cluster[] = [...threeClusters.slice(0, 2), { name: 'Edge_03', region: 'us-east1' }]
      const ws = await workspace({
        clusters,
        extra: {
          'missing-revision.yaml': source`
            apiVersion: config.porch.kpt.dev/v1alpha1
            kind: PackageVariant
            metadata:
              name: web-missing
              namespace: default
            spec:
              upstream:
                repo: blueprints
                package: nginx
                revision: 9
              downstream:
                repo: edge-01
                package: web
          `,
        },
      })
      const { run, report } = await ws.renderJson()
      expect(run.exitCode).toBe(1)

      // The good targets are written.
      expect(readdirSync(ws.out).sort()).toEqual(['edge-01', 'edge-02'])
      expect(readdirSync(join(ws.out, 'edge-01'))).toEqual(['nginx'])
      expect(ws.yaml('edge-02/nginx/package-context.yaml')['data']).toMatchObject({ cluster: 'edge-02', region: 'us-west1' })
      expect(entry(report, 'edge-01/nginx').status).toBe('created')
      expect(entry(report, 'edge-02/nginx').status).toBe('created')

      // The target whose name is not a DNS label.
      const badTarget = report.variants.filter((v) => v.subject.includes('Edge_03'))
      expect(badTarget).toHaveLength(1)
      expect(badTarget[0]).toMatchObject({ status: 'failed', subject: 'PackageVariantSet default/nginx target WorkloadCluster "Edge_03"' })
      expect(badTarget[0]!.reasons.join('\n')).toContain('nginx-Edge_03-nginx')
      expect(badTarget[0]!.reasons.join('\n')).toMatch(/RFC 1123/)

      // The PackageVariant naming a revision that does not exist: Porch's message.
      const missing = entry(report, 'edge-01/web')
      expect(missing).toMatchObject({ status: 'failed', subject: 'PackageVariant default/web-missing' })
      expect(missing.reasons).toEqual(['could not find upstream package revision &v1alpha1.Upstream{Repo:"blueprints", Package:"nginx", Revision:9, WorkspaceName:""}'])

      expect(report.summary).toEqual({ created: 2, updated: 0, unchanged: 0, deleted: 0, orphaned: 0, failed: 2 })
      expect(report.variants).toHaveLength(4)
      expect(run.stderr).toContain('\nFailed:\n')
      expect(run.stderr).toContain('  edge-01/web: could not find upstream package revision')
      expect(run.stderr).toMatch(/^ {2}(Edge_03\/nginx|PackageVariantSet default\/nginx target WorkloadCluster "Edge_03"): invalid PackageVariant name "nginx-Edge_03-nginx"/m)
      expect(run.stderr).toContain('4 variant(s): 2 created, 0 updated, 0 unchanged, 2 failed')
    },
    timeout,
  )

  test.each([
    ['delete' as const, 'deleted'],
    ['orphan' as const, 'orphaned'],
  ])(
    'a target the set no longer selects: deletionPolicy %s → %s',
    async (deletionPolicy, status) => {
      const ws = await workspace({ clusters: threeClusters, deletionPolicy })
      await ws.renderOk()
      expect(ws.yaml('edge-02/nginx/Kptfile')['metadata']['annotations']['kpt-variants.dev/deletion-policy']).toBe(deletionPolicy)
      const before = snapshot(join(ws.out, 'edge-02'))

      // edge-02 is relabelled: the set's selector no longer matches it.
      const relabelled = threeClusters.map((c) => (c.name === 'edge-02' ? { ...c, siteType: 'core' } : c))
      ws.writeFleet({ clusters: relabelled, deletionPolicy })

      // A dry run reports it and touches nothing.
      const dry = await ws.renderJson('--dry-run')
      expect(dry.run.exitCode).toBe(0)
      expect(entry(dry.report, 'edge-02/nginx').status).toBe(status)
      expect(snapshot(join(ws.out, 'edge-02'))).toEqual(before)

      const { run, report } = await ws.renderJson()
      expect(run.exitCode).toBe(0)
      expect(report.variants.map((v) => [v.path, v.status])).toEqual([
        ['edge-01/nginx', 'unchanged'],
        ['edge-02/nginx', status],
        ['edge-03/nginx', 'unchanged'],
      ])
      expect(entry(report, 'edge-02/nginx').subject).toBe('PackageVariant default/nginx-edge-02-nginx')
      expect(run.stderr).toMatch(summaryRow(status, 'edge-02/nginx', 'default/nginx-edge-02-nginx'))
      // Deleted and orphaned are counted only when there are some.
      expect(run.stderr).toContain(`3 variant(s): 0 created, 0 updated, 2 unchanged, 1 ${status}, 0 failed`)
      expect(existsSync(join(ws.out, 'edge-01', 'nginx', 'Kptfile'))).toBe(true)
      expect(existsSync(join(ws.out, 'edge-03', 'nginx', 'Kptfile'))).toBe(true)

      if (deletionPolicy === 'delete') {
        // The package is gone, and so is its now empty repository directory.
        expect(existsSync(join(ws.out, 'edge-02'))).toBe(false)
      } else {
        // The package stays, disowned: only the ownership annotations are gone from its Kptfile.
        const kptfile = ws.yaml('edge-02/nginx/Kptfile')
        expect(kptfile['metadata']['annotations']).toEqual({ 'config.kubernetes.io/local-config': 'true' })
        expect(kptfile['upstreamLock']['git']['ref']).toBe('nginx/v1')
        const after = snapshot(join(ws.out, 'edge-02'))
        for (const file of ['nginx/deployment.yaml', 'nginx/package-context.yaml', 'nginx/region-endpoints.yaml', 'nginx/README.md']) {
          expect(after[file]?.content).toBe(before[file]?.content)
        }
      }

      // The next run has nothing more to do with it.
      const leftBehind = existsSync(join(ws.out, 'edge-02')) ? snapshot(join(ws.out, 'edge-02')) : undefined
      const again = await ws.renderJson()
      expect(again.run.exitCode).toBe(0)
      expect(paths(again.report)).toEqual(['edge-01/nginx', 'edge-03/nginx'])
      expect(again.report.summary).toMatchObject({ unchanged: 2, deleted: 0, orphaned: 0 })
      expect(existsSync(join(ws.out, 'edge-02')) ? snapshot(join(ws.out, 'edge-02')) : undefined).toEqual(leftBehind)
    },
    timeout,
  )

  test.each([
    [
      'a kpt package of its own',
      {
        Kptfile: 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: nginx\n',
        'deployment.yaml': 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: hand-made\n',
      },
    ],
    ['a plain directory', { 'notes.txt': 'not a package\n' }],
  ])(
    'an existing downstream directory not created by kpt-variants (%s) is left alone: exit 1',
    async (_, tree) => {
      const ws = await workspace({ clusters: threeClusters.slice(0, 2) })
      writeTree(join(ws.out, 'edge-01', 'nginx'), tree)
      const before = snapshot(join(ws.out, 'edge-01'))

      const { run, report } = await ws.renderJson()
      expect(run.exitCode).toBe(1)
      expect(snapshot(join(ws.out, 'edge-01'))).toEqual(before)
      expect(entry(report, 'edge-01/nginx')).toMatchObject({
        status: 'failed',
        subject: 'PackageVariant default/nginx-edge-01-nginx',
        reasons: ['downstream package edge-01/nginx exists and is not owned by any PackageVariant; adoptionPolicy adoptNone leaves it alone (adoptExisting takes it over)'],
      })
      expect(entry(report, 'edge-02/nginx').status).toBe('created')
      expect(existsSync(join(ws.out, 'edge-02', 'nginx', 'Kptfile'))).toBe(true)
      expect(report.summary).toMatchObject({ created: 1, failed: 1 })
      expect(run.stderr).toContain('  edge-01/nginx: downstream package edge-01/nginx exists and is not owned by any PackageVariant')

      // Nor is it deleted when no variant wants that path any more.
      ws.writeFleet({ clusters: threeClusters.slice(1, 2) })
      const again = await ws.renderJson()
      expect(again.run.exitCode).toBe(0)
      expect(paths(again.report)).toEqual(['edge-02/nginx'])
      expect(snapshot(join(ws.out, 'edge-01'))).toEqual(before)
    },
    timeout,
  )

  test('--shard 0/2 and --shard 1/2 together render exactly what a full run does, byte for byte', async () => {
    // More than 2 × 64 variants: a full run on a machine with 2+ cores shares them between the main
    // thread and a worker (orchestrator/run/render-fleet.ts, variantsPerThread), while each shard (about 65)
    // renders on one thread; so this also checks the threaded run against single-threaded ones.
    const clusters: Cluster[] = Array.from({ length: 130 }, (_, i) => ({ name: `edge-${String(i + 1).padStart(3, '0')}`, region: regions[i % regions.length]! }))
    const ws = await workspace({ clusters })
    const full = await ws.render('fleet', '--out', 'full', '--json')
    expect(full.exitCode).toBe(0)
    const fullReport = JSON.parse(full.stdout) as JsonReport

    const shards: JsonReport[] = []
    for (const shard of ['0/2', '1/2']) {
      const run = await ws.render('fleet', '--out', 'sharded', '--json', '--shard', shard)
      expect(run.exitCode).toBe(0)
      shards.push(JSON.parse(run.stdout) as JsonReport)
    }
    const [zero, one] = shards.map(paths) as [(string | undefined)[], (string | undefined)[]]
    // Both shards have work, none twice, and together they are the whole fleet.
    expect(zero.length).toBeGreaterThan(0)
    expect(one.length).toBeGreaterThan(0)
    expect(zero.filter((p) => one.includes(p))).toEqual([])
    expect([...zero, ...one].sort()).toEqual(paths(fullReport))
    expect(paths(fullReport)).toEqual(clusters.map((c) => `${c.name}/nginx`))
    for (const report of shards) expect(report.variants.every((v) => v.status === 'created')).toBe(true)

    expect(readTreeWithModes(join(ws.dir, 'sharded'))).toEqual(readTreeWithModes(join(ws.dir, 'full')))

    // A shard never deletes the other shard's packages.
    const rerun = await ws.render('fleet', '--out', 'sharded', '--json', '--shard', '0/2')
    expect(rerun.exitCode).toBe(0)
    expect((JSON.parse(rerun.stdout) as JsonReport).variants.map((v) => v.status).every((s) => s === 'unchanged')).toBe(true)
    expect(readTreeWithModes(join(ws.dir, 'sharded'))).toEqual(readTreeWithModes(join(ws.dir, 'full')))
  }, 60_000)

  describe('usage errors exit 2', () => {
    let dir: string
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'kpt-variants-render-usage-'))
      mkdirSync(join(dir, 'fleet'))
      writeFileSync(join(dir, 'fleet', 'empty.yaml'), '')
      writeFileSync(join(dir, 'file'), 'not a directory\n')
    })
    afterAll(() => rmSync(dir, { recursive: true, force: true }))

    test.each([
      ['neither --out nor --git', ['fleet'], 'give either --out DIR or --git'],
      ['both --out and --git', ['fleet', '--out', 'out', '--git'], 'give either --out DIR or --git'],
      ['--publish without --git', ['fleet', '--out', 'out', '--publish'], '--publish needs --git'],
      ['missing FLEET', ['--out', 'out'], 'kpt-variants: give a FLEET directory, or --cluster'],
      ['FLEET and --cluster', ['fleet', '--cluster', '--out', 'out'], 'kpt-variants: give either a FLEET directory or --cluster, not both'],
      ['--kubeconfig without --cluster', ['fleet', '--out', 'out', '--kubeconfig', 'k'], 'kpt-variants: --kubeconfig and --context need --cluster'],
      ['--shard without a slash', ['fleet', '--out', 'out', '--shard', '1'], 'expected I/N with 0 <= I < N'],
      ['--shard I >= N', ['fleet', '--out', 'out', '--shard', '2/2'], 'expected I/N with 0 <= I < N'],
      ['--shard 0/0', ['fleet', '--out', 'out', '--shard', '0/0'], 'expected I/N with 0 <= I < N'],
      ['--shard -1/2', ['fleet', '--out', 'out', '--shard', '-1/2'], 'expected I/N with 0 <= I < N'],
      ['--diff without --dry-run', ['fleet', '--out', 'out', '--diff'], 'kpt-variants: --diff needs --dry-run'],
      ['an unknown --on-conflict', ['fleet', '--out', 'out', '--on-conflict', 'merge'], 'Allowed choices are upstream, downstream, fail'],
      ['a fleet directory that does not exist', ['nope', '--out', 'out'], 'kpt-variants: fleet directory nope does not exist'],
      ['--out a file', ['fleet', '--out', 'file'], 'kpt-variants: --out file is not a directory'],
      ['--out containing the fleet', ['fleet', '--out', '.'], 'kpt-variants: --out must not contain the fleet directory'],
    ])(
      '%s',
      async (_, args, message) => {
        const run = await execa('node', [bin, 'render', ...args], { cwd: dir, reject: false, stdin: 'ignore' })
        expect({ exitCode: run.exitCode, stderr: String(run.stderr) }).toEqual({ exitCode: 2, stderr: expect.stringContaining(message) })
        expect(String(run.stdout)).toBe('')
        expect(existsSync(join(dir, 'out'))).toBe(false)
        expect(readFileSync(join(dir, 'file'), 'utf8')).toBe('not a directory\n')
      },
      timeout,
    )
  })

  // Needs orchestrator/merge/update.ts (the 3-way merge of an upstream update).
  test(
    'an upstream update (revision 1 → 2) keeps a local edit and takes the new image',
    async () => {
      const clusters = threeClusters.slice(0, 2)
      const ws = await workspace({ clusters, revision: 1 })
      await ws.renderOk()

      // A local edit downstream: more replicas on edge-01.
      const deploymentPath = join(ws.out, 'edge-01', 'nginx', 'deployment.yaml')
      const original = readFileSync(deploymentPath, 'utf8')
      expect(original).toContain('replicas: 2 # raise per cluster as traffic grows')
      writeFileSync(deploymentPath, original.replace('replicas: 2 #', 'replicas: 5 #'))

      ws.writeFleet({ clusters, revision: 2 })
      const { run, report } = await ws.renderJson()
      expect({ exitCode: run.exitCode, failures: report.variants.flatMap((v) => v.reasons) }).toEqual({ exitCode: 0, failures: [] })
      expect(report.summary).toMatchObject({ updated: 2, failed: 0 })
      for (const c of clusters) {
        const v = entry(report, `${c.name}/nginx`)
        expect(v.status).toBe('updated')
        expect(v.upstream).toBe('blueprints/nginx v2')
        expect(v.conflicts).toEqual([])
      }
      const from = `nginx/v1 (${(await ws.commitOf('nginx/v1')).slice(0, 12)})`
      for (const c of clusters) expect(entry(report, `${c.name}/nginx`).previousUpstream).toBe(from)
      expect(run.stderr).toMatch(summaryRow('updated', 'edge-01/nginx', 'default/nginx-edge-01-nginx', `blueprints/nginx v2 (from ${from})`))

      const v2Commit = await ws.commitOf('nginx/v2')
      for (const c of clusters) {
        const deployment = ws.yaml(`${c.name}/nginx/deployment.yaml`)
        const container = deployment['spec']['template']['spec']['containers'][0]
        expect(container['image']).toBe(v2Image)
        expect(container['readinessProbe']).toEqual({ httpGet: { path: '/healthz', port: 8080 } })
        // The local edit survives on edge-01 only.
        expect(deployment['spec']['replicas']).toBe(c.name === 'edge-01' ? 5 : 2)

        const kptfile = ws.yaml(`${c.name}/nginx/Kptfile`)
        expect(kptfile['upstream']['git']['ref']).toBe('nginx/v2')
        expect(kptfile['upstreamLock']['git']).toMatchObject({ ref: 'nginx/v2', commit: v2Commit, directory: '/nginx' })
        expect(kptfile['metadata']['annotations']['kpt-variants.dev/package-variant']).toBe(`default/nginx-${c.name}-nginx`)

        // What the PackageVariant added stays.
        expect(ws.yaml(`${c.name}/nginx/package-context.yaml`)['data']).toMatchObject({ cluster: c.name, team: 'web-platform' })
        expect(ws.yaml(`${c.name}/nginx/region-endpoints.yaml`)['data']).toEqual({ API_ENDPOINT: `https://api.${c.region}.example.com` })
      }
      expect(readFileSync(deploymentPath, 'utf8')).toContain('replicas: 5 # raise per cluster as traffic grows')

      // And the updated packages are stable.
      const again = await ws.renderJson()
      expect(again.run.exitCode).toBe(0)
      expect(again.report.summary).toMatchObject({ unchanged: 2, updated: 0, failed: 0 })
    },
    timeout,
  )
})
