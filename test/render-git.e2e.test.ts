/**
 * `kpt-variants render --git`, `publish` and `status` end to end, as real
 * processes, against downstream repositories made on the fly: bare ones
 * reached by path, and an ordinary one (a work tree) reached by a `file://`
 * URL. Published revisions are read back with the real `kpt pkg get` and
 * updated with `kpt pkg update`.
 */
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import type { ResultPromise } from 'execa'
import { gitIdentity, repoRoot } from './e2e/runner.js'
import { createBlueprints, fleetFiles, threeClusters, v1Image, v2Image } from './support/fleet.js'
import type { FleetOptions } from './support/fleet.js'
import { createRepo, git, writeTree } from './support/git-repo.js'

const bin = join(repoRoot, 'bin', 'kpt-variants')
const timeout = 60_000

interface Run {
  exitCode: number
  stdout: string
  stderr: string
}

/**
 * Kills a run's node process alone, as a crash would, and waits for the git
 * processes it had started: they outlive it (a push killed with its parent
 * still completes), and the next run racing one would meet a remote that
 * moves under it, a lease refused (the run fails that variant, as it should)
 * rather than the crash the test is about.
 */
/** Resolves once the run says it is held at `point`; rejects if it ends first (it never reached the point). */
function stoppedAt(child: ResultPromise, point: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let said = ''
    const listening = (chunk: Buffer) => {
      said += String(chunk)
      if (!said.includes(`kpt-variants: stopped at ${point}\n`)) return
      child.stderr!.off('data', listening)
      resolve()
    }
    child.stderr!.on('data', listening)
    void child.then((result) =>
      reject(new Error(`the run ended (exit ${result.exitCode}) before stop point ${point}:\n${said}`)),
    )
  })
}

async function crash(child: ResultPromise): Promise<void> {
  child.kill('SIGSTOP') // so that it starts no process while its children are listed
  const parents = new Map<number, number>()
  const pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name))
  for (const pid of pids.map(Number)) {
    const stat = processStat(pid)
    if (stat) parents.set(pid, stat.ppid)
  }
  const descends = (pid: number): boolean =>
    pid === child.pid || (pid > 1 && parents.has(pid) && descends(parents.get(pid)!))
  const left = [...parents.keys()].filter((pid) => pid !== child.pid && descends(pid))
  child.kill('SIGKILL')
  await child
  // Gone, or a zombie that init has not reaped yet.
  const running = (pid: number) => ![undefined, 'Z'].includes(processStat(pid)?.state)
  while (left.some(running)) await new Promise((r) => setTimeout(r, 20))
}

/** A process's state and parent, from `/proc/<pid>/stat` (`pid (comm) state ppid ...`); undefined once it is gone. */
function processStat(pid: number): { state: string; ppid: number } | undefined {
  let stat: string
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return undefined
  }
  const [state = '', ppid = ''] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return { state, ppid: Number(ppid) }
}

/** A test's directory: the blueprint repository, three downstream repositories, the fleet, the cache. */
class Workspace {
  readonly fleet: string
  readonly cache: string

  private constructor(readonly dir: string) {
    this.fleet = join(dir, 'fleet')
    this.cache = join(dir, 'cache')
  }

  static async create(options: Partial<FleetOptions> = {}): Promise<Workspace> {
    const ws = new Workspace(mkdtempSync(join(tmpdir(), 'kpt-variants-git-e2e-')))
    await createBlueprints(join(ws.dir, 'repos', 'blueprints'))
    // edge-01, edge-02: empty bare repositories, named by path (`../repos/edge-01` finds `edge-01.git`).
    for (const name of ['edge-01', 'edge-02'])
      await git(ws.dir, 'init', '-q', '--bare', '-b', 'main', `repos/${name}.git`)
    // edge-03: an ordinary repository with a first commit, by file:// URL; a push may update its checked-out branch.
    await createRepo(join(ws.dir, 'repos', 'edge-03'), [['start', { 'README.md': '# edge-03\n' }]])
    await git(join(ws.dir, 'repos', 'edge-03'), 'config', 'receive.denyCurrentBranch', 'updateInstead')
    ws.writeFleet({ clusters: threeClusters, ...options })
    return ws
  }

  writeFleet(options: FleetOptions): void {
    rmSync(this.fleet, { recursive: true, force: true })
    const files = fleetFiles(options)
    files['repositories.yaml'] = files['repositories.yaml']!.replace(
      'repo: ../repos/edge-03',
      `repo: file://${this.dir}/repos/edge-03`,
    )
    writeTree(this.fleet, files)
  }

  remote(name: string): string {
    return join(this.dir, 'repos', name === 'edge-03' ? name : `${name}.git`)
  }

  async run(...args: string[]): Promise<Run> {
    const run = await execa('node', [bin, ...args], {
      cwd: this.dir,
      env: { ...process.env, ...gitIdentity },
      reject: false,
      stdin: 'ignore',
    })
    return { exitCode: run.exitCode ?? -1, stdout: String(run.stdout), stderr: String(run.stderr) }
  }

  async ok(...args: string[]): Promise<Run> {
    const run = await this.run(...args)
    if (run.exitCode !== 0)
      throw new Error(
        `kpt-variants ${args.join(' ')} exited ${run.exitCode}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`,
      )
    return run
  }

  /** `render fleet --git --cache cache --json <args>`: the parsed report. */
  async render(...args: string[]): Promise<{
    run: Run
    report: { variants: { path?: string; status: string; draft?: string; published?: string; reasons: string[] }[] }
  }> {
    const run = await this.run('render', 'fleet', '--git', '--cache', 'cache', '--json', ...args)
    return { run, report: JSON.parse(run.stdout) }
  }

  /** Every branch and tag of a downstream repository, with the commit it names. */
  async refs(name: string): Promise<Record<string, string>> {
    const out = await git(this.remote(name), 'for-each-ref', '--format=%(refname) %(objectname)')
    return Object.fromEntries(
      out
        .split('\n')
        .filter(Boolean)
        .map((line) => line.split(' ') as [string, string]),
    )
  }

  async show(name: string, rev: string): Promise<string> {
    return git(this.remote(name), 'show', rev)
  }
}

describe('kpt-variants render --git', () => {
  let ws: Workspace
  afterEach(() => rmSync(ws.dir, { recursive: true, force: true }))

  test(
    'drafts, publish, kpt pkg get, an upstream update that keeps a published downstream edit, v2, kpt pkg update',
    async () => {
      ws = await Workspace.create()

      // 1. One draft branch per new package, Porch's layout; the commit says what and why.
      const first = await ws.render()
      expect(first.run.exitCode).toBe(0)
      expect(first.report.variants.map((v) => [v.path, v.status, v.draft])).toEqual(
        threeClusters.map((c) => [`${c.name}/nginx`, 'created', 'drafts/nginx/packagevariant-1']),
      )
      for (const c of threeClusters) {
        const refs = await ws.refs(c.name)
        expect(Object.keys(refs).filter((r) => r.startsWith('refs/heads/drafts/'))).toEqual([
          'refs/heads/drafts/nginx/packagevariant-1',
        ])
        expect(Object.keys(refs).some((r) => r.startsWith('refs/tags/nginx/'))).toBe(false)
      }
      const message = await git(ws.remote('edge-01'), 'log', '-1', '--format=%B', 'drafts/nginx/packagevariant-1')
      expect(message).toContain('Create nginx from blueprints/nginx v1')
      expect(message).toContain('PackageVariant: default/nginx-edge-01-nginx')
      expect(message).toContain('Injected: ConfigMap region-endpoints <- us-east1-endpoints')
      expect(message).toContain('kpt:{"package":"nginx","workspaceName":"packagevariant-1","revision":""}')
      // edge-03's draft is based on its published branch; main itself is untouched.
      const edge03 = await ws.refs('edge-03')
      expect(await git(ws.remote('edge-03'), 'rev-parse', 'drafts/nginx/packagevariant-1^')).toBe(
        edge03['refs/heads/main'],
      )

      // The working clones are in the cache, made once: later runs fetch into the same clone.
      const clones = (await execa('sh', ['-c', 'ls -d cache/repos/*.git'], { cwd: ws.dir })).stdout.split('\n')
      expect(clones.map((c) => c.replace(/-[0-9a-f]{12}\.git$/, ''))).toEqual([
        'cache/repos/edge-01',
        'cache/repos/edge-02',
        'cache/repos/edge-03',
      ])
      const inode = statSync(join(ws.dir, clones[0]!)).ino

      // 2. Rendering again makes no commit and no branch.
      const before = await Promise.all(threeClusters.map((c) => ws.refs(c.name)))
      const second = await ws.render()
      expect(second.report.variants.map((v) => v.status)).toEqual(['unchanged', 'unchanged', 'unchanged'])
      expect(await Promise.all(threeClusters.map((c) => ws.refs(c.name)))).toEqual(before)

      // 3. Status: one line per variant, read from git.
      const status = JSON.parse((await ws.ok('status', 'fleet', '--cache', 'cache', '--json')).stdout)
      expect(status.variants[0]).toMatchObject({
        variant: 'default/nginx-edge-01-nginx',
        package: 'edge-01/nginx',
        draft: 'drafts/nginx/packagevariant-1',
        state: 'unpublished',
      })

      // 4. Publish: a commit on main tagged nginx/v1, the draft branch gone (by fleet name, by path, by file:// URL).
      await ws.ok('publish', 'edge-01', '--fleet', 'fleet', '--cache', 'cache')
      await ws.ok('publish', 'repos/edge-02', '--cache', 'cache')
      const published = await ws.ok('publish', `file://${ws.dir}/repos/edge-03`, 'nginx', '--cache', 'cache')
      expect(published.stderr).toContain('nginx: published nginx/v1')
      for (const c of threeClusters) {
        const refs = await ws.refs(c.name)
        expect(refs['refs/tags/nginx/v1']).toBe(refs['refs/heads/main'])
        expect(Object.keys(refs).filter((r) => r.startsWith('refs/heads/drafts/'))).toEqual([])
      }
      expect(await git(ws.remote('edge-01'), 'log', '-1', '--format=%B', 'main')).toContain(
        'kpt:{"package":"nginx","workspaceName":"packagevariant-1","revision":"v1"}',
      )
      const afterPublish = JSON.parse((await ws.ok('status', 'fleet', '--cache', 'cache', '--json')).stdout)
      expect(afterPublish.variants[1]).toMatchObject({
        package: 'edge-02/nginx',
        published: 'nginx/v1',
        state: 'current',
        localEdits: 'none',
      })
      expect(afterPublish.variants[1].draft).toBeUndefined()

      // 5. The real kpt reads the published revision.
      const got = join(ws.dir, 'got')
      await execa('kpt', ['pkg', 'get', `file://${ws.remote('edge-01')}/nginx@nginx/v1`, got], {
        cwd: ws.dir,
        env: { ...process.env, ...gitIdentity },
      })
      expect(readFileSync(join(got, 'deployment.yaml'), 'utf8')).toContain(`image: ${v1Image}`)
      expect(readFileSync(join(got, 'region-endpoints.yaml'), 'utf8')).toContain('https://api.us-east1.example.com')

      // 6. A person edits the published package on main; the set moves to upstream revision 2.
      const clone = join(ws.dir, 'clone-01')
      await git(ws.dir, 'clone', '-q', ws.remote('edge-01'), clone)
      writeFileSync(
        join(clone, 'nginx', 'deployment.yaml'),
        readFileSync(join(clone, 'nginx', 'deployment.yaml'), 'utf8').replace('replicas: 2', 'replicas: 5'),
      )
      await git(clone, 'commit', '-qam', 'edge-01 needs more replicas')
      await git(clone, 'push', '-q', 'origin', 'main')
      ws.writeFleet({ clusters: threeClusters, revision: 2 })
      const update = await ws.render()
      expect(update.run.exitCode).toBe(0)
      expect(update.report.variants.map((v) => [v.status, v.draft])).toEqual(
        threeClusters.map(() => ['updated', 'drafts/nginx/packagevariant-2']),
      )
      const draft = await ws.show('edge-01', 'drafts/nginx/packagevariant-2:nginx/deployment.yaml')
      expect(draft).toContain('replicas: 5')
      expect(draft).toContain(`image: ${v2Image}`)
      expect(draft).toContain('readinessProbe')
      expect(await git(ws.remote('edge-01'), 'log', '-1', '--format=%s', 'drafts/nginx/packagevariant-2')).toMatch(
        /^Update nginx from nginx\/v1 .* to blueprints\/nginx v2$/,
      )
      const behind = JSON.parse((await ws.ok('status', 'fleet', '--cache', 'cache', '--json')).stdout)
      expect(behind.variants[0]).toMatchObject({
        state: 'behind',
        publishedUpstream: 'nginx/v1',
        draft: 'drafts/nginx/packagevariant-2',
      })
      // The commit on main since nginx/v1 is a local edit of edge-01's package; edge-02's is as published.
      expect(
        behind.variants.map((v: { localEdits?: string; localEditsReason?: string }) => [
          v.localEdits,
          v.localEditsReason,
        ]),
      ).toEqual([
        ['edited', '1 commit(s) on main changed it since nginx/v1'],
        ['none', undefined],
        ['none', undefined],
      ])

      // 7. Publish v2 with render --publish; then kpt pkg update to it keeps the local package's own state.
      const publishRun = await ws.render('--publish')
      expect(publishRun.report.variants.map((v) => [v.status, v.published])).toEqual(
        threeClusters.map(() => ['unchanged', 'nginx/v2']),
      )
      for (const c of threeClusters)
        expect(Object.keys(await ws.refs(c.name)).filter((r) => r.startsWith('refs/tags/nginx/'))).toEqual([
          'refs/tags/nginx/v1',
          'refs/tags/nginx/v2',
        ])
      await git(got, 'init', '-q')
      await git(got, 'add', '-A')
      await git(got, 'commit', '-qm', 'got nginx/v1')
      await execa('kpt', ['pkg', 'update', `${got}@nginx/v2`], { cwd: ws.dir, env: { ...process.env, ...gitIdentity } })
      const updated = readFileSync(join(got, 'deployment.yaml'), 'utf8')
      expect(updated).toContain('replicas: 5')
      expect(updated).toContain(`image: ${v2Image}`)

      expect(statSync(join(ws.dir, clones[0]!)).ino).toBe(inode)

      // 8. Nothing more to do: no commit, no branch.
      const settled = await Promise.all(threeClusters.map((c) => ws.refs(c.name)))
      const last = await ws.render('--publish')
      expect(last.report.variants.map((v) => v.status)).toEqual(['unchanged', 'unchanged', 'unchanged'])
      expect(await Promise.all(threeClusters.map((c) => ws.refs(c.name)))).toEqual(settled)
    },
    timeout,
  )

  test(
    'a package no PackageVariant wants any more gets a removal draft; publishing it removes the package untagged',
    async () => {
      ws = await Workspace.create()
      await ws.render('--publish')
      ws.writeFleet({ clusters: threeClusters.map((c) => (c.name === 'edge-02' ? { ...c, siteType: 'core' } : c)) })
      const { report } = await ws.render()
      expect(report.variants.find((v) => v.path === 'edge-02/nginx')).toMatchObject({
        status: 'deleted',
        draft: 'drafts/nginx/packagevariant-2',
      })
      expect(await git(ws.remote('edge-02'), 'ls-tree', '--name-only', 'drafts/nginx/packagevariant-2')).toBe('')
      // The removal is proposed once.
      const again = await ws.render()
      expect(again.report.variants.find((v) => v.path === 'edge-02/nginx')).toBeUndefined()
      await ws.ok('publish', 'edge-02', '--fleet', 'fleet', '--cache', 'cache')
      const refs = await ws.refs('edge-02')
      expect(Object.keys(refs).sort()).toEqual(['refs/heads/main', 'refs/tags/nginx/v1'])
      expect(await git(ws.remote('edge-02'), 'ls-tree', '--name-only', 'main')).toBe('')
    },
    timeout,
  )

  test(
    'a repository that rejects the push fails its own variants with the reason; the others are drafted, and a later run recovers',
    async () => {
      ws = await Workspace.create()
      const hook = join(ws.remote('edge-02'), 'hooks', 'pre-receive')
      writeFileSync(hook, '#!/bin/sh\necho "edge-02 is frozen" >&2\nexit 1\n')
      chmodSync(hook, 0o755)
      const { run, report } = await ws.render()
      expect(run.exitCode).toBe(1)
      const failed = report.variants.find((v) => v.path === 'edge-02/nginx')!
      expect(failed.status).toBe('failed')
      expect(failed.reasons.join()).toMatch(/pushing to .*edge-02\.git was refused: .*pre-receive hook declined/)
      expect(report.variants.filter((v) => v.status === 'created').map((v) => v.path)).toEqual([
        'edge-01/nginx',
        'edge-03/nginx',
      ])
      expect(await ws.refs('edge-02')).toEqual({})
      const status = JSON.parse((await ws.run('status', 'fleet', '--cache', 'cache', '--json')).stdout)
      expect(status.variants[1].lastFailure).toContain('pre-receive hook declined')

      rmSync(hook)
      const retry = await ws.render()
      expect(retry.report.variants.map((v) => v.status)).toEqual(['unchanged', 'created', 'unchanged'])
      expect(Object.keys(await ws.refs('edge-02'))).toEqual(['refs/heads/drafts/nginx/packagevariant-1'])
      const cleared = JSON.parse((await ws.ok('status', 'fleet', '--cache', 'cache', '--json')).stdout)
      expect(cleared.variants[1].lastFailure).toBeUndefined()
    },
    timeout,
  )

  test(
    'a draft whose published package changed since is not published over the change; rendering again rebases it',
    async () => {
      ws = await Workspace.create({ clusters: threeClusters.slice(0, 1) })
      await ws.render('--publish')
      ws.writeFleet({ clusters: threeClusters.slice(0, 1), revision: 2 })
      await ws.render()
      const clone = join(ws.dir, 'clone')
      await git(ws.dir, 'clone', '-q', ws.remote('edge-01'), clone)
      writeFileSync(join(clone, 'nginx', 'README.md'), '# edited after the draft\n')
      await git(clone, 'commit', '-qam', 'edit')
      await git(clone, 'push', '-q', 'origin', 'main')
      const refused = await ws.run('publish', 'edge-01', '--fleet', 'fleet', '--cache', 'cache')
      expect(refused.exitCode).toBe(1)
      expect(refused.stderr).toContain(
        'the published package changed after draft drafts/nginx/packagevariant-2 was made: render again to update the draft',
      )
      const { report } = await ws.render('--publish')
      expect(report.variants[0]).toMatchObject({ status: 'updated', published: 'nginx/v2' })
    },
    timeout,
  )

  test(
    'a re-render skips only the packages whose trees are as the last run left them: an edited published package or draft is rendered again',
    async () => {
      ws = await Workspace.create()
      await ws.render('--publish')
      // Recorded with the trees the publish left (the record's digests are taken after the push).
      expect((await ws.render()).report.variants.map((v) => v.status)).toEqual(['unchanged', 'unchanged', 'unchanged'])
      const edit = async (name: string, branch: string, file: string, change: (text: string) => string) => {
        const clone = join(ws.dir, `edit-${name}-${branch.replace(/\//g, '-')}`)
        rmSync(clone, { recursive: true, force: true })
        await git(ws.dir, 'clone', '-q', '-b', branch, ws.remote(name), clone)
        writeFileSync(
          join(clone, file),
          change(existsSync(join(clone, file)) ? readFileSync(join(clone, file), 'utf8') : ''),
        )
        await git(clone, 'add', '-A')
        await git(clone, 'commit', '-qm', `edit ${file}`)
        await git(clone, 'push', '-q', 'origin', branch)
      }
      // Injected config edited on edge-02's published branch (injection puts it back); edge-03's branch moves outside the package.
      await edit('edge-02', 'main', 'nginx/region-endpoints.yaml', (text) =>
        text.replace('https://api.us-west1.example.com', 'https://edited.example.com'),
      )
      await edit('edge-03', 'main', 'README.md', (text) => `${text}More.\n`)
      const afterEdits = await ws.render()
      expect(afterEdits.report.variants.map((v) => [v.path, v.status])).toEqual([
        ['edge-01/nginx', 'unchanged'],
        ['edge-02/nginx', 'updated'],
        ['edge-03/nginx', 'unchanged'],
      ])
      const restored = 'drafts/nginx/packagevariant-2:nginx/region-endpoints.yaml'
      expect(await ws.show('edge-02', restored)).toContain('https://api.us-west1.example.com')
      // That draft edited by hand is rendered again over it, on the same branch.
      await edit('edge-02', 'drafts/nginx/packagevariant-2', 'nginx/region-endpoints.yaml', (text) =>
        text.replace('https://api.us-west1.example.com', 'https://edited.example.com'),
      )
      const afterDraftEdit = await ws.render()
      expect(afterDraftEdit.report.variants.map((v) => [v.status, v.draft])).toEqual([
        ['unchanged', undefined],
        ['updated', 'drafts/nginx/packagevariant-2'],
        ['unchanged', undefined],
      ])
      expect(await ws.show('edge-02', restored)).toContain('https://api.us-west1.example.com')
      // And then nothing to do: no commit, no branch.
      const settled = await Promise.all(threeClusters.map((c) => ws.refs(c.name)))
      expect((await ws.render()).report.variants.map((v) => v.status)).toEqual(['unchanged', 'unchanged', 'unchanged'])
      expect(await Promise.all(threeClusters.map((c) => ws.refs(c.name)))).toEqual(settled)
    },
    timeout,
  )

  test(
    'two renders against the same repositories never interleave: the second waits for the first, then finds nothing to do',
    async () => {
      ws = await Workspace.create()
      const [a, b] = await Promise.all([ws.render(), ws.render()])
      const statuses = [a, b].map((r) => r.report.variants.map((v) => v.status).join())
      expect(statuses.sort()).toEqual(['created,created,created', 'unchanged,unchanged,unchanged'])
      for (const c of threeClusters)
        expect(Object.keys(await ws.refs(c.name)).filter((r) => r.includes('drafts/'))).toEqual([
          'refs/heads/drafts/nginx/packagevariant-1',
        ])
    },
    timeout,
  )

  test(
    "a repository locked by a live run fails its own variants after --lock-timeout; a dead run's lock is taken over",
    async () => {
      ws = await Workspace.create()
      await ws.render()
      const clone = (await execa('sh', ['-c', 'ls -d cache/repos/edge-01-*.git'], { cwd: ws.dir })).stdout.trim()
      const holder = execa('sleep', ['30'], { reject: false })
      writeFileSync(join(ws.dir, `${clone}.lock`), `${holder.pid} ${hostname()}\n`)
      try {
        ws.writeFleet({ clusters: threeClusters, team: 'platform' })
        const locked = await ws.render('--lock-timeout', '0.3')
        expect(locked.run.exitCode).toBe(1)
        const failed = locked.report.variants.find((v) => v.path === 'edge-01/nginx')!
        expect(failed.status).toBe('failed')
        expect(failed.reasons.join()).toContain(
          `another kpt-variants run (process ${holder.pid} on ${hostname()}) holds the lock`,
        )
        expect(locked.report.variants.filter((v) => v.status === 'updated').map((v) => v.path)).toEqual([
          'edge-02/nginx',
          'edge-03/nginx',
        ])
      } finally {
        holder.kill('SIGKILL')
        await holder
      }
      const taken = await ws.render('--lock-timeout', '0.3')
      expect(taken.report.variants.map((v) => v.status)).toEqual(['updated', 'unchanged', 'unchanged'])
      expect(existsSync(join(ws.dir, `${clone}.lock`))).toBe(false)
    },
    timeout,
  )

  test(
    'a render killed at any point leaves only complete commits on every branch; the next run completes the work',
    async () => {
      const clusters = Array.from({ length: 6 }, (_, i) => ({ name: `edge-0${i + 1}`, region: 'us-east1' }))
      // Each named point of the run (orchestrator/util/stop-point.ts), in the order a run reaches them: the run is held there and killed.
      for (const point of [
        'rendered',
        'git-trees-written',
        'git-commits-imported',
        'git-pushed',
        'committed',
        'recorded',
      ]) {
        ws = await Workspace.create({ clusters: threeClusters })
        for (const c of clusters.slice(3))
          await git(ws.dir, 'init', '-q', '--bare', '-b', 'main', `repos/${c.name}.git`)
        ws.writeFleet({ clusters })
        const env = { ...process.env, ...gitIdentity, KPT_VARIANTS_TEST_STOP_AT: point }
        const child = execa('node', [bin, 'render', 'fleet', '--git', '--cache', 'cache', '--publish'], {
          cwd: ws.dir,
          env,
          reject: false,
          stdin: 'ignore',
        })
        await stoppedAt(child, point)
        await crash(child)
        const files = ['Kptfile', 'README.md', 'deployment.yaml', 'package-context.yaml', 'region-endpoints.yaml'].map(
          (f) => `nginx/${f}`,
        )
        const checkComplete = async () => {
          for (const c of clusters) {
            await git(ws.remote(c.name), 'fsck', '--no-dangling', '--no-progress')
            for (const ref of Object.keys(await ws.refs(c.name)).filter((r) => r.includes('nginx'))) {
              const listed = (await git(ws.remote(c.name), 'ls-tree', '-r', '--name-only', ref, '--', 'nginx')).split(
                '\n',
              )
              expect({ ref, files: files.filter((f) => !listed.includes(f)) }).toEqual({ ref, files: [] })
            }
          }
        }
        await checkComplete()
        const next = await ws.render('--publish', '--lock-timeout', '5')
        expect(next.run.exitCode).toBe(0)
        await checkComplete()
        for (const c of clusters) expect((await ws.refs(c.name))['refs/tags/nginx/v1']).toBeDefined()
        const settled = await ws.render('--publish')
        expect(settled.report.variants.map((v) => v.status)).toEqual(clusters.map(() => 'unchanged'))
        rmSync(ws.dir, { recursive: true, force: true })
      }
    },
    4 * timeout,
  )
})
