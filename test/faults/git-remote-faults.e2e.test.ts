/**
 * `render --git` and `publish` when a downstream repository fails them in
 * the middle of a push, with real git: the remote moved away between the
 * run's fetch and its push (the run held at a stop point, the repository
 * moved, the run resumed), the connection lost while the remote receives
 * the push (its receive-pack killed by a hook: before it takes any ref, or
 * after it took them all but before it could answer), and a hook that
 * refuses part of a publish. After each, every repository holds all of a
 * run's refs or none of them, one draft per package, the run says which
 * repository failed and why without a stack trace, the next run completes
 * the fleet and the one after changes nothing.
 */
import { existsSync, renameSync, rmSync, writeFileSync, chmodSync } from 'node:fs'
import { join } from 'node:path'
import { expectComplete, refsOf, removeHook, stackLines } from '../support/faults.js'
import { threeClusters } from '../support/fleet.js'
import { heldAt, killHeldRuns, timeout, Workspace } from '../support/git-workspace.js'

/** The three repositories' refs. */
const allRefs = (ws: Workspace) => Promise.all(threeClusters.map((c) => refsOf(ws.remote(c.name))))

/** Every repository sound and complete, one draft per package at most. */
async function expectAllComplete(ws: Workspace): Promise<void> {
  for (const c of threeClusters) await expectComplete(ws.remote(c.name))
}

/** A hook of a bare repository that kills the receive-pack running it (`when`: a shell condition on the hook's arguments), as a lost connection. */
function killReceivePack(remote: string, hook: 'pre-receive' | 'reference-transaction', when = 'true'): void {
  const file = join(remote, 'hooks', hook)
  writeFileSync(file, `#!/bin/sh\nif ${when}; then kill -9 $PPID; fi\nexit 0\n`)
  chmodSync(file, 0o755)
}

afterEach(killHeldRuns)

describe('git remotes that fail in the middle of a push', () => {
  let ws: Workspace
  afterEach(() => rmSync(ws.dir, { recursive: true, force: true }))

  test(
    'render --git: a remote moved away between the fetch and the push fails its own variants only; back, the next run drafts it',
    async () => {
      ws = await Workspace.create()
      const { child: held } = await heldAt(ws.dir, 'git-commits-imported', [
        'render',
        'fleet',
        '--git',
        '--cache',
        'cache',
        '--json',
      ])
      const away = `${ws.remote('edge-02')}.away`
      renameSync(ws.remote('edge-02'), away)
      held.kill('SIGUSR2')
      const run = await held
      expect(run.exitCode).toBe(1)
      const report = JSON.parse(String(run.stdout)) as {
        variants: { path: string; status: string; reasons: { code: string; message: string }[] }[]
      }
      expect(report.variants.map((v) => [v.path, v.status])).toEqual([
        ['edge-01/nginx', 'created'],
        ['edge-02/nginx', 'failed'],
        ['edge-03/nginx', 'created'],
      ])
      expect(report.variants[1]!.reasons).toEqual([
        {
          code: 'GitPushRefused',
          message: expect.stringMatching(
            /^pushing to .*\/repos\/edge-02\.git was refused: .*edge-02\.git' does not appear to be a git repository$/,
          ),
        },
      ])
      expect(String(run.stderr)).toContain('edge-02/nginx: pushing to ')
      expect(stackLines(String(run.stderr))).toEqual([])
      renameSync(away, ws.remote('edge-02'))
      // Nothing of the run reached edge-02.
      expect(await refsOf(ws.remote('edge-02'))).toEqual({})
      await expectAllComplete(ws)

      const second = await ws.render()
      expect(second.run.exitCode).toBe(0)
      expect(second.report.variants.map((v) => v.status)).toEqual(['unchanged', 'created', 'unchanged'])
      await expectAllComplete(ws)
      const settled = await allRefs(ws)
      const third = await ws.render()
      expect(third.report.variants.map((v) => v.status)).toEqual(['unchanged', 'unchanged', 'unchanged'])
      expect(await allRefs(ws)).toEqual(settled)
    },
    timeout,
  )

  test(
    'render --git --publish: the connection lost before the remote took a ref leaves that repository as it was; the next run publishes it',
    async () => {
      ws = await Workspace.create()
      killReceivePack(ws.remote('edge-01'), 'pre-receive')
      const first = await ws.render('--publish')
      expect(first.run.exitCode).toBe(1)
      expect(first.report.variants.map((v) => [v.path, v.status, v.published])).toEqual([
        ['edge-01/nginx', 'failed', undefined],
        ['edge-02/nginx', 'created', 'nginx/v1'],
        ['edge-03/nginx', 'created', 'nginx/v1'],
      ])
      expect(first.report.variants[0]!.reasons).toEqual([
        {
          code: 'GitPushRefused',
          message: expect.stringMatching(
            /^pushing to .*\/repos\/edge-01\.git was refused: .*the remote end hung up unexpectedly/,
          ),
        },
      ])
      expect(stackLines(first.run.stderr)).toEqual([])
      // All or nothing: no branch, no tag, no draft.
      expect(await refsOf(ws.remote('edge-01'))).toEqual({})
      await expectAllComplete(ws)

      removeHook(ws.remote('edge-01'))
      const second = await ws.render('--publish')
      expect(second.run.exitCode).toBe(0)
      expect(second.report.variants.map((v) => [v.status, v.published])).toEqual([
        ['created', 'nginx/v1'],
        ['unchanged', undefined],
        ['unchanged', undefined],
      ])
      expect(Object.keys(await refsOf(ws.remote('edge-01'))).sort()).toEqual(['refs/heads/main', 'refs/tags/nginx/v1'])
      await expectAllComplete(ws)
      const settled = await allRefs(ws)
      const third = await ws.render('--publish')
      expect(third.report.variants.map((v) => v.status)).toEqual(['unchanged', 'unchanged', 'unchanged'])
      expect(await allRefs(ws)).toEqual(settled)
    },
    timeout,
  )

  test(
    'render --git: the connection lost after the remote took every ref, before it answered: the run says it failed, and the next finds the draft there and drafts nothing twice',
    async () => {
      ws = await Workspace.create()
      killReceivePack(ws.remote('edge-02'), 'reference-transaction', '[ "$1" = committed ]')
      const first = await ws.render()
      expect(first.run.exitCode).toBe(1)
      expect(first.report.variants[1]).toMatchObject({ path: 'edge-02/nginx', status: 'failed' })
      expect(first.report.variants[1]!.reasons.map((r) => r.message).join()).toMatch(
        /the remote end hung up unexpectedly/,
      )
      removeHook(ws.remote('edge-02'), 'reference-transaction')
      // The remote took the draft whole.
      expect(Object.keys(await refsOf(ws.remote('edge-02')))).toEqual(['refs/heads/drafts/nginx/packagevariant-1'])
      await expectAllComplete(ws)

      const landed = await allRefs(ws)
      const second = await ws.render()
      expect(second.run.exitCode).toBe(0)
      expect(second.report.variants.map((v) => v.status)).toEqual(['unchanged', 'unchanged', 'unchanged'])
      expect(await allRefs(ws)).toEqual(landed)
      const status = JSON.parse((await ws.ok('status', 'fleet', '--cache', 'cache', '--json')).stdout)
      expect(status.variants[1].lastFailure).toBeUndefined()
    },
    timeout,
  )

  test(
    'publish --fleet: a remote moved away between the fetch and the push publishes nothing there; back, the next publish completes and the one after has nothing to do',
    async () => {
      ws = await Workspace.create()
      await ws.ok('render', 'fleet', '--git', '--cache', 'cache')
      const drafted = await allRefs(ws)
      const { child: held } = await heldAt(ws.dir, 'git-commits-imported', [
        'publish',
        '--fleet',
        'fleet',
        '--cache',
        'cache',
      ])
      const away = `${ws.remote('edge-03')}.away`
      renameSync(ws.remote('edge-03'), away)
      held.kill('SIGUSR2')
      const run = await held
      expect(run.exitCode).toBe(1)
      expect(String(run.stderr)).toMatch(
        /^edge-03\/nginx: not published: .*edge-03.*does not appear to be a git repository$/m,
      )
      expect(String(run.stderr)).toMatch(/^2 published, 0 removed, 0 held back, 1 not published$/m)
      expect(stackLines(String(run.stderr))).toEqual([])
      renameSync(away, ws.remote('edge-03'))
      // edge-03 as the render left it: its draft, no tag, its branch where it was.
      expect(await refsOf(ws.remote('edge-03'))).toEqual(drafted[2])
      await expectAllComplete(ws)

      const second = await ws.run('publish', '--fleet', 'fleet', '--cache', 'cache')
      expect(second.exitCode).toBe(0)
      expect(second.stderr).toMatch(/^edge-03\/nginx: published nginx\/v1$/m)
      expect(second.stderr).toMatch(/^1 published, 0 removed, 0 held back, 0 not published$/m)
      await expectAllComplete(ws)
      for (const c of threeClusters)
        expect(Object.keys(await refsOf(ws.remote(c.name))).filter((r) => r.includes('nginx'))).toEqual([
          'refs/tags/nginx/v1',
        ])
      const settled = await allRefs(ws)
      const third = await ws.run('publish', '--fleet', 'fleet', '--cache', 'cache')
      expect(third.exitCode).toBe(0)
      expect(third.stderr).toMatch(/^0 published, 0 removed, 0 held back, 0 not published$/m)
      expect(await allRefs(ws)).toEqual(settled)
    },
    timeout,
  )

  test(
    'publish --fleet: the connection lost after the remote took the publish, before it answered: told it failed, the next publish finds nothing left to publish and tags nothing twice',
    async () => {
      ws = await Workspace.create()
      await ws.ok('render', 'fleet', '--git', '--cache', 'cache')
      killReceivePack(ws.remote('edge-01'), 'reference-transaction', '[ "$1" = committed ]')
      const lost = await ws.run('publish', '--fleet', 'fleet', '--cache', 'cache')
      expect(lost.exitCode).toBe(1)
      expect(lost.stderr).toMatch(/^edge-01\/nginx: not published: .*the remote end hung up unexpectedly$/m)
      expect(stackLines(lost.stderr)).toEqual([])
      removeHook(ws.remote('edge-01'), 'reference-transaction')
      // The remote took all of it: the branch, the tag, the draft deleted.
      expect(Object.keys(await refsOf(ws.remote('edge-01'))).sort()).toEqual(['refs/heads/main', 'refs/tags/nginx/v1'])
      await expectAllComplete(ws)

      const settled = await allRefs(ws)
      const again = await ws.run('publish', '--fleet', 'fleet', '--cache', 'cache')
      expect(again.exitCode).toBe(0)
      expect(again.stderr).toMatch(/^0 published, 0 removed, 0 held back, 0 not published$/m)
      expect(await allRefs(ws)).toEqual(settled)
      const render = await ws.render('--publish')
      expect(render.report.variants.map((v) => v.status)).toEqual(['unchanged', 'unchanged', 'unchanged'])
      expect(await allRefs(ws)).toEqual(settled)
    },
    timeout,
  )

  test(
    'publish REPO: a hook that refuses the tag refuses the whole publish (the branch, the tag and the draft’s deletion); allowed, the next publish completes',
    async () => {
      ws = await Workspace.create()
      await ws.ok('render', 'fleet', '--git', '--cache', 'cache')
      const remote = ws.remote('edge-01')
      const drafted = await refsOf(remote)
      const hook = join(remote, 'hooks', 'pre-receive')
      // Refuses a push that creates a tag: the others of the same push go with it.
      writeFileSync(
        hook,
        '#!/bin/sh\nwhile read old new ref; do case $ref in refs/tags/*) echo "tags are frozen: $ref" >&2; exit 1;; esac; done\nexit 0\n',
      )
      chmodSync(hook, 0o755)
      const refused = await ws.run('publish', remote, '--cache', 'cache')
      expect(refused.exitCode).toBe(1)
      expect(refused.stderr).toMatch(/^nginx: not published: the push was refused: .*pre-receive hook declined/m)
      expect(stackLines(refused.stderr)).toEqual([])
      expect(await refsOf(remote)).toEqual(drafted)
      await expectComplete(remote)

      removeHook(remote)
      const published = await ws.run('publish', remote, '--cache', 'cache')
      expect(published.exitCode).toBe(0)
      expect(published.stderr).toBe('nginx: published nginx/v1')
      expect(Object.keys(await refsOf(remote)).sort()).toEqual(['refs/heads/main', 'refs/tags/nginx/v1'])
      await expectComplete(remote)
      const settled = await refsOf(remote)
      const again = await ws.run('publish', remote, '--cache', 'cache')
      expect(again).toMatchObject({ exitCode: 0, stderr: `no open drafts in ${remote}` })
      expect(await refsOf(remote)).toEqual(settled)
      // The next render finds the published package as it wants it.
      expect((await ws.render()).report.variants.map((v) => v.status)).toEqual(['unchanged', 'unchanged', 'unchanged'])
      expect(existsSync(hook)).toBe(false)
    },
    timeout,
  )
})
