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
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { writeTree } from './support/git-repo.js'
import { source } from './support/source.js'
import { nginxV1, threeClusters, v1Image, v2Image } from './support/fleet.js'
import type { Cluster } from './support/fleet.js'
import { timeout, snapshot, summaryRow, paths, entry, useWorkspaces } from './support/render-workspace.js'

describe('kpt-variants render', () => {
  const workspace = useWorkspaces()

  test(
    'creates one package per target: Kptfile upstream and lock, package context, injected ConfigMap',
    async () => {
      const ws = await workspace({ clusters: threeClusters })
      const run = await ws.renderOk()

      expect(run.stdout).toBe('')
      expect(readdirSync(ws.out).sort()).toEqual(['edge-01', 'edge-02', 'edge-03'])
      for (const c of threeClusters) expect(readdirSync(join(ws.out, c.name))).toEqual(['nginx'])
      expect(readdirSync(join(ws.out, 'edge-01', 'nginx')).sort()).toEqual([
        'Kptfile',
        'README.md',
        'deployment.yaml',
        'package-context.yaml',
        'region-endpoints.yaml',
      ])

      // Kptfile: upstream names the tag, upstreamLock the tag and its commit, owner recorded.
      const commit = await ws.commitOf('nginx/v1')
      for (const c of threeClusters) {
        const kptfile = ws.yaml(`${c.name}/nginx/Kptfile`)
        expect(kptfile['metadata']['name']).toBe('nginx')
        expect(kptfile['upstream']).toMatchObject({
          type: 'git',
          git: { directory: '/nginx', ref: 'nginx/v1' },
          updateStrategy: 'resource-merge',
        })
        expect(kptfile['upstreamLock']).toMatchObject({
          type: 'git',
          git: { directory: '/nginx', ref: 'nginx/v1', commit },
        })
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
      for (const c of threeClusters)
        expect(run.stderr).toMatch(
          summaryRow('created', `${c.name}/nginx`, `default/nginx-${c.name}-nginx`, 'blueprints/nginx v1'),
        )
      expect(run.stderr).toContain('3 variant(s): 3 created, 0 updated, 0 unchanged, 0 failed')
      expect(run.stderr).not.toContain('Failed:')
      // No staging directory is left behind.
      expect(readdirSync(ws.out).filter((name) => name.startsWith('.'))).toEqual([])
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
      expect(ws.yaml('edge-02/nginx/package-context.yaml')['data']).toMatchObject({
        cluster: 'edge-02',
        region: 'us-west1',
      })
      expect(entry(report, 'edge-01/nginx').status).toBe('created')
      expect(entry(report, 'edge-02/nginx').status).toBe('created')

      // The target whose name is not a DNS label.
      const badTarget = report.variants.filter((v) => v.subject.includes('Edge_03'))
      expect(badTarget).toHaveLength(1)
      expect(badTarget[0]).toMatchObject({
        status: 'failed',
        subject: 'PackageVariantSet default/nginx target WorkloadCluster "Edge_03"',
      })
      expect(badTarget[0]!.reasons.map((r) => r.code)).toEqual(['UnexpectedError'])
      expect(badTarget[0]!.reasons.map((r) => r.message).join('\n')).toContain('nginx-Edge_03-nginx')
      expect(badTarget[0]!.reasons.map((r) => r.message).join('\n')).toMatch(/RFC 1123/)

      // The PackageVariant naming a revision that does not exist: Porch's message.
      const missing = entry(report, 'edge-01/web')
      expect(missing).toMatchObject({ status: 'failed', subject: 'PackageVariant default/web-missing' })
      expect(missing.reasons).toEqual([
        {
          code: 'UpstreamNotFound',
          message:
            'could not find upstream package revision &v1alpha1.Upstream{Repo:"blueprints", Package:"nginx", Revision:9, WorkspaceName:""}',
        },
      ])

      expect(report.summary).toEqual({ created: 2, updated: 0, unchanged: 0, deleted: 0, orphaned: 0, failed: 2 })
      expect(report.variants).toHaveLength(4)
      expect(run.stderr).toContain('\nFailed:\n')
      expect(run.stderr).toContain('  edge-01/web: could not find upstream package revision')
      expect(run.stderr).toMatch(
        /^ {2}(Edge_03\/nginx|PackageVariantSet default\/nginx target WorkloadCluster "Edge_03"): invalid PackageVariant name "nginx-Edge_03-nginx"/m,
      )
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
      expect(ws.yaml('edge-02/nginx/Kptfile')['metadata']['annotations']['kpt-variants.dev/deletion-policy']).toBe(
        deletionPolicy,
      )
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
        for (const file of [
          'nginx/deployment.yaml',
          'nginx/package-context.yaml',
          'nginx/region-endpoints.yaml',
          'nginx/README.md',
        ]) {
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
        reasons: [
          {
            code: 'DownstreamNotOwned',
            message:
              'downstream package edge-01/nginx exists and is not owned by any PackageVariant; adoptionPolicy adoptNone leaves it alone (adoptExisting takes it over)',
          },
        ],
      })
      expect(entry(report, 'edge-02/nginx').status).toBe('created')
      expect(existsSync(join(ws.out, 'edge-02', 'nginx', 'Kptfile'))).toBe(true)
      expect(report.summary).toMatchObject({ created: 1, failed: 1 })
      expect(run.stderr).toContain(
        '  edge-01/nginx: downstream package edge-01/nginx exists and is not owned by any PackageVariant',
      )

      // Nor is it deleted when no variant wants that path any more.
      ws.writeFleet({ clusters: threeClusters.slice(1, 2) })
      const again = await ws.renderJson()
      expect(again.run.exitCode).toBe(0)
      expect(paths(again.report)).toEqual(['edge-02/nginx'])
      expect(snapshot(join(ws.out, 'edge-01'))).toEqual(before)
    },
    timeout,
  )

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
      expect({ exitCode: run.exitCode, failures: report.variants.flatMap((v) => v.reasons) }).toEqual({
        exitCode: 0,
        failures: [],
      })
      expect(report.summary).toMatchObject({ updated: 2, failed: 0 })
      for (const c of clusters) {
        const v = entry(report, `${c.name}/nginx`)
        expect(v.status).toBe('updated')
        expect(v.upstream).toBe('blueprints/nginx v2')
        expect(v.conflicts).toEqual([])
      }
      const from = `nginx/v1 (${(await ws.commitOf('nginx/v1')).slice(0, 12)})`
      for (const c of clusters) expect(entry(report, `${c.name}/nginx`).previousUpstream).toBe(from)
      expect(run.stderr).toMatch(
        summaryRow('updated', 'edge-01/nginx', 'default/nginx-edge-01-nginx', `blueprints/nginx v2 (from ${from})`),
      )

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
        expect(kptfile['metadata']['annotations']['kpt-variants.dev/package-variant']).toBe(
          `default/nginx-${c.name}-nginx`,
        )

        // What the PackageVariant added stays.
        expect(ws.yaml(`${c.name}/nginx/package-context.yaml`)['data']).toMatchObject({
          cluster: c.name,
          team: 'web-platform',
        })
        expect(ws.yaml(`${c.name}/nginx/region-endpoints.yaml`)['data']).toEqual({
          API_ENDPOINT: `https://api.${c.region}.example.com`,
        })
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
