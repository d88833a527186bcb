/**
 * `kpt-variants render --git`, `publish` and `status` end to end, as real
 * processes, against downstream repositories made on the fly: bare ones
 * reached by path, and an ordinary one (a work tree) reached by a `file://`
 * URL. Published revisions are read back with the real `kpt pkg get` and
 * updated with `kpt pkg update`.
 */
import { chmodSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { execa } from 'execa'
import { gitIdentity } from './e2e/runner.js'
import { threeClusters, v1Image, v2Image } from './support/fleet.js'
import { git } from './support/git-repo.js'
import { timeout, Workspace } from './support/git-workspace.js'

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
      expect(failed.reasons.map((r) => r.code)).toEqual(['GitPushRefused'])
      expect(failed.reasons.map((r) => r.message).join()).toMatch(
        /pushing to .*edge-02\.git was refused: .*pre-receive hook declined/,
      )
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
})
