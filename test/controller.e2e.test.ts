/**
 * `kpt-variants controller` end to end, as real processes, against a real
 * Kubernetes API server (test/support/kube-apiserver.ts) with Porch's CRDs,
 * rendering into real git repositories. Each step changes the cluster or a
 * repository and waits for the controller's cycle that answers it (its
 * `--json` lines), never for time: a new target is a new draft, rendered
 * alone; a label change an updated draft; a removed target or PackageVariant
 * follows its deletion policy; a change of nothing a render reads renders
 * nothing; a webhook call picks up a new upstream commit; SIGHUP and the
 * timer resync what no watch sees; and when the leader is killed, the
 * standby takes the Lease over and renders what changed meanwhile.
 */
import { createHmac } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseValue } from '../functions/krm/yaml/index.js'
import { gitIdentity, repoRoot } from './e2e/runner.js'
import { ControllerProcess, outcomes } from './support/controller-process.js'
import { createBlueprints, fleetFiles, repository, threeClusters } from './support/fleet.js'
import { git, writeTree } from './support/git-repo.js'
import { KubeApiServer, kubeApiServerBuilt, kubeApiServerMissing } from './support/kube-apiserver.js'
import { describeIfAvailable } from './support/requires.js'
import { schemalessCrd } from './support/schemaless-crd.js'
import type { Json } from './support/kube-client.js'
import { runCli } from './support/cli-run.js'

const timeout = 120_000
const documents = (text: string) => parseValue(text, { stream: true }) as Json[]
const crds = readdirSync(join(repoRoot, 'deploy', 'crds'))
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((f) => documents(readFileSync(join(repoRoot, 'deploy', 'crds', f), 'utf8')))

const cluster = (name: string, region: string, siteType = 'edge'): Json => ({
  apiVersion: 'infra.nephio.org/v1alpha1',
  kind: 'WorkloadCluster',
  metadata: { name, namespace: 'default', labels: { 'nephio.org/site-type': siteType, region } },
  spec: { clusterName: name },
})
const standalone = (
  name: string,
  deletionPolicy: 'delete' | 'orphan',
  upstream: Json = { repo: 'blueprints', package: 'nginx', revision: 1 },
): Json => ({
  apiVersion: 'config.porch.kpt.dev/v1alpha1',
  kind: 'PackageVariant',
  metadata: { name, namespace: 'default' },
  // The region's endpoints fill nginx's required injection point: without them its draft is not ready to publish.
  spec: {
    upstream,
    downstream: { repo: 'edge-01', package: name },
    deletionPolicy,
    injectors: [{ kind: 'ConfigMap', name: 'us-east1-endpoints' }],
  },
})

const suite = describeIfAvailable(kubeApiServerBuilt(), kubeApiServerMissing)

suite('kpt-variants controller against a real API server', () => {
  let server: KubeApiServer
  let dir: string
  /** Where the controllers run: the fleet directory, so that the Repositories' relative paths (../repos/NAME) resolve. */
  let cwd: string
  let env: Record<string, string | undefined>

  beforeAll(async () => {
    server = await KubeApiServer.start()
    await server.apply([...crds, schemalessCrd('infra.nephio.org', 'WorkloadCluster')])
    dir = mkdtempSync(join(tmpdir(), 'kpt-variants-controller-e2e-'))
    cwd = join(dir, 'fleet')
    await createBlueprints(join(dir, 'repos', 'blueprints'))
    for (const name of ['edge-01', 'edge-02', 'edge-03', 'edge-04', 'edge-05'])
      await git(dir, 'init', '-q', '--bare', '-b', 'main', `repos/${name}.git`)
    const files = fleetFiles({ clusters: threeClusters })
    writeTree(cwd, files)
    await server.apply(Object.values(files).flatMap(documents))
    server.writeKubeconfig(join(dir, 'kubeconfig'))
    env = { ...process.env, ...gitIdentity, XDG_CACHE_HOME: join(dir, 'xdg'), KUBECONFIG: join(dir, 'kubeconfig') }
  }, timeout)

  afterAll(async () => {
    await server?.stop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  }, timeout)

  const drafts = async (repo: string) =>
    (await git(join(dir, 'repos', `${repo}.git`), 'for-each-ref', '--format=%(refname:short)', 'refs/heads/drafts/'))
      .split('\n')
      .filter(Boolean)
  const show = (repo: string, ref: string, path: string) =>
    git(join(dir, 'repos', `${repo}.git`), 'show', `${ref}:${path}`)
  const publish = async (repo: string) => {
    const run = await runCli(
      dir,
      ['publish', join(dir, 'repos', `${repo}.git`), '--cache', join(dir, 'publish-cache')],
      {
        baseEnv: env,
      },
    )
    expect(run.exitCode).toBe(0)
  }
  const set = {
    apiVersion: 'config.porch.kpt.dev/v1alpha2',
    kind: 'PackageVariantSet',
    metadata: { name: 'nginx', namespace: 'default' },
  }
  const conditions = (o: Json | undefined) =>
    (o?.['status']?.['conditions'] ?? []).map((c: Json) => `${c['type']}=${c['status']} ${c['reason']}`)

  describe('one controller', () => {
    let controller: ControllerProcess
    let port: number
    const secret = 'push-secret'

    beforeAll(async () => {
      writeFileSync(join(dir, 'webhook-secret'), `${secret}\n`)
      controller = new ControllerProcess(
        [
          '--git',
          '--cache',
          join(dir, 'cache-1'),
          '--no-leader-election',
          '--poll',
          '0',
          '--listen',
          '127.0.0.1:0',
          '--webhook-secret-file',
          join(dir, 'webhook-secret'),
        ],
        { cwd, env },
      )
      port = Number(/listening on 127\.0\.0\.1:(\d+)/.exec(await controller.logged(/listening on/))![1])
    }, timeout)

    afterAll(async () => {
      expect(await controller?.stop()).toBe(0)
    }, timeout)

    test(
      'the first cycle renders every variant and writes status',
      async () => {
        const first = await controller.cycle(() => true, 'the first cycle')
        expect(first).toMatchObject({ cycle: 1, trigger: ['start'], scope: 'all' })
        expect(outcomes(first).sort()).toEqual(
          ['nginx-edge-01-nginx', 'nginx-edge-02-nginx', 'nginx-edge-03-nginx'].map(
            (n) => `PackageVariant default/${n} created`,
          ),
        )
        expect(first.status).toMatchObject({ written: 1, changed: 1, failures: [] })
        expect(conditions(await server.get(set))).toEqual(['Stalled=False Valid', 'Ready=True Reconciled'])
        expect(await drafts('edge-01')).toEqual(['drafts/nginx/packagevariant-1'])
      },
      timeout,
    )

    test(
      'a new target is a new draft, rendered alone',
      async () => {
        let last = controller.lastCycle
        // Its repository first: a Repository no variant names yet renders nothing.
        await server.apply(documents(repository('edge-04', true)))
        const quiet = await controller.cycle(
          (c) => c.changed.some((o) => o.includes('repositories')),
          'the cycle of the new Repository',
          last,
        )
        expect(quiet.scope).toEqual({ variants: [], repositories: [], packages: [], declared: false })
        expect(quiet.report.variants).toEqual([])
        last = controller.lastCycle
        await server.apply([cluster('edge-04', 'us-east1')])
        const added = await controller.cycle((c) => c.report.variants.length > 0, 'the cycle of the new target', last)
        expect(added.changed).toEqual(['workloadclusters.infra.nephio.org default/edge-04'])
        // A new variant had no package: nothing of the repository is read, its dependency plan is left alone.
        expect(added.scope).toEqual({
          variants: ['default/nginx-edge-04-nginx'],
          repositories: ['edge-04'],
          packages: [],
          declared: false,
        })
        expect(outcomes(added)).toEqual(['PackageVariant default/nginx-edge-04-nginx created'])
        expect(await drafts('edge-04')).toEqual(['drafts/nginx/packagevariant-1'])
        expect(await show('edge-04', 'drafts/nginx/packagevariant-1', 'nginx/region-endpoints.yaml')).toContain(
          'https://api.us-east1.example.com',
        )
      },
      timeout,
    )

    test(
      'a label change is an updated draft of that variant only',
      async () => {
        const last = controller.lastCycle
        await server.apply([cluster('edge-02', 'eu-west1')])
        const relabelled = await controller.cycle(
          (c) => c.report.variants.length > 0,
          'the cycle of the relabelled target',
          last,
        )
        expect(relabelled.scope).toEqual({
          variants: ['default/nginx-edge-02-nginx'],
          repositories: ['edge-02'],
          packages: ['edge-02/nginx'],
          declared: false,
        })
        expect(outcomes(relabelled)).toEqual(['PackageVariant default/nginx-edge-02-nginx updated'])
        expect(await show('edge-02', 'drafts/nginx/packagevariant-1', 'nginx/region-endpoints.yaml')).toContain(
          'https://api.eu-west1.example.com',
        )
      },
      timeout,
    )

    test(
      'a removed target, a target relabelled out of the selector and a removed PackageVariant follow their deletion policy',
      async () => {
        let last = controller.lastCycle
        await server.apply([standalone('kept', 'orphan')])
        await controller.cycle(
          (c) => outcomes(c).includes('PackageVariant default/kept created'),
          'the new PackageVariant',
          last,
        )
        for (const repo of ['edge-01', 'edge-03']) await publish(repo)

        last = controller.lastCycle
        await server.delete([cluster('edge-03', 'eu-west1')])
        const removed = await controller.cycle(
          (c) => c.report.variants.length > 0,
          'the cycle of the removed target',
          last,
        )
        expect(removed.scope).toEqual({
          variants: ['default/nginx-edge-03-nginx'],
          repositories: ['edge-03'],
          packages: ['edge-03/nginx'],
          declared: false,
        })
        expect(outcomes(removed)).toEqual(['PackageVariant default/nginx-edge-03-nginx deleted'])
        // Proposed as Porch proposes a deletion: a draft without the package.
        expect(await drafts('edge-03')).toEqual([expect.stringMatching(/^drafts\/nginx\//)])

        last = controller.lastCycle
        await server.delete([standalone('kept', 'orphan')])
        const orphaned = await controller.cycle(
          (c) => c.report.variants.length > 0,
          'the cycle of the removed PackageVariant',
          last,
        )
        expect(outcomes(orphaned)).toEqual(['PackageVariant default/kept orphaned'])
        const orphanDraft = (await drafts('edge-01')).find((d) => d.startsWith('drafts/kept/'))!
        expect(await show('edge-01', orphanDraft, 'kept/Kptfile')).not.toContain('kpt-variants.dev/package-variant:')

        last = controller.lastCycle
        await server.apply([cluster('edge-01', 'us-east1', 'core')])
        const relabelled = await controller.cycle(
          (c) => c.report.variants.length > 0,
          'the cycle of the target relabelled out',
          last,
        )
        expect(outcomes(relabelled)).toEqual(['PackageVariant default/nginx-edge-01-nginx deleted'])
      },
      timeout,
    )

    test(
      'a SIGHUP renders everything: what no watch sees (a draft deleted by hand) comes back',
      async () => {
        await git(join(dir, 'repos', 'edge-02.git'), 'branch', '-D', 'drafts/nginx/packagevariant-1')
        const last = controller.lastCycle
        controller.signal('SIGHUP')
        const resync = await controller.cycle((c) => c.trigger.includes('resync'), 'the resync', last)
        expect(resync.scope).toBe('all')
        expect(outcomes(resync)).toContain('PackageVariant default/nginx-edge-02-nginx created')
        expect(outcomes(resync).filter((o) => !o.endsWith(' unchanged'))).toEqual([
          'PackageVariant default/nginx-edge-02-nginx created',
        ])
        expect(await drafts('edge-02')).toEqual(['drafts/nginx/packagevariant-1'])
      },
      timeout,
    )

    test(
      "status changes (the controller's own writes, another controller's) and objects no render reads start no cycle",
      async () => {
        const last = controller.lastCycle
        await server.ok(
          'PATCH',
          await server.path(set, 'status'),
          {
            status: {
              conditions: [
                {
                  type: 'Other',
                  status: 'True',
                  reason: 'Theirs',
                  message: '',
                  lastTransitionTime: '2026-01-01T00:00:00Z',
                },
              ],
            },
          },
          { contentType: 'application/merge-patch+json' },
        )
        await server.apply([
          {
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: { name: 'unread', namespace: 'default' },
            stringData: { a: 'b' },
          },
        ])
        await server.apply([cluster('edge-04', 'us-west1')])
        const next = await controller.cycle(() => true, 'the next cycle', last)
        expect(next.changed).toEqual(['workloadclusters.infra.nephio.org default/edge-04'])
        expect(outcomes(next)).toEqual(['PackageVariant default/nginx-edge-04-nginx updated'])
        // Every cycle so far came from a change of the fleet, a signal or the start: none from a status write.
        const seen = controller.cycles.filter((c) => c.cycle > 1).flatMap((c) => c.changed)
        expect(seen.filter((o) => o.startsWith('packagevariantsets') || o.startsWith('secrets'))).toEqual([])
      },
      timeout,
    )

    test(
      'a webhook call (signed) lists the upstream repositories now: a new commit of the branch a PackageVariant follows is an update',
      async () => {
        let last = controller.lastCycle
        await server.apply([standalone('tip', 'delete', { repo: 'blueprints', package: 'nginx' })])
        await controller.cycle(
          (c) => outcomes(c).includes('PackageVariant default/tip created'),
          'the PackageVariant following main',
          last,
        )
        const blueprints = join(dir, 'repos', 'blueprints')
        writeFileSync(join(blueprints, 'nginx', 'README.md'), '# nginx\n\nNow with a changelog.\n')
        await git(blueprints, 'commit', '-q', '-am', 'README')

        const post = (headers: Record<string, string>) =>
          new Promise<number>((resolve, reject) => {
            const body = '{"ref":"refs/heads/main"}'
            const req = request(
              {
                host: '127.0.0.1',
                port,
                path: '/webhook',
                method: 'POST',
                headers: { 'content-type': 'application/json', ...headers },
              },
              (res) => {
                res.resume()
                resolve(res.statusCode!)
              },
            )
            req.on('error', reject)
            req.end(body)
          })
        expect(await post({})).toBe(401)
        expect(await post({ 'x-hub-signature-256': 'sha256=0000' })).toBe(401)
        last = controller.lastCycle
        const signature = `sha256=${createHmac('sha256', secret).update('{"ref":"refs/heads/main"}').digest('hex')}`
        expect(await post({ 'x-hub-signature-256': signature })).toBe(202)
        const pushed = await controller.cycle(
          (c) => c.trigger.includes('upstream'),
          'the cycle of the webhook call',
          last,
        )
        expect(outcomes(pushed).filter((o) => !o.endsWith(' unchanged'))).toEqual([
          'PackageVariant default/tip updated',
        ])
        expect(
          await show(
            'edge-01',
            (await drafts('edge-01')).find((d) => d.startsWith('drafts/tip/'))!,
            'tip/README.md',
          ),
        ).toContain('Now with a changelog.')
      },
      timeout,
    )
  })

  describe('two replicas and a Lease', () => {
    const lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'controller-e2e', namespace: 'default' },
    }
    // Short durations, so that the test waits seconds; the lease logic itself is tested with an injected clock (lease.test.ts).
    const started: ControllerProcess[] = []
    const replica = (identity: string, ...more: string[]) => {
      const args = [
        '--git',
        '--cache',
        join(dir, `cache-${identity}`),
        '--lease',
        'default/controller-e2e',
        '--lease-duration',
        '6s',
        '--renew-deadline',
        '4s',
        '--retry-period',
        '500ms',
      ]
      const controller = new ControllerProcess([...args, '--identity', identity, ...more], { cwd, env })
      started.push(controller)
      return controller
    }

    afterEach(async () => {
      for (const controller of started.splice(0)) {
        controller.signal('SIGKILL')
        await controller.exited
      }
    })

    test(
      'the standby takes the Lease over when the leader is killed, and renders what changed meanwhile; a resync and a poll come on time',
      async () => {
        const a = replica('replica-a', '--poll', '0')
        await a.logged(/acquired the lease \(created it\)/)
        await a.cycle((c) => c.trigger.includes('start'), "replica-a's first cycle")
        const b = replica('replica-b', '--resync', '3s', '--poll', '1s')
        await b.logged(/standing by: the lease is held by replica-a/)
        expect(b.cycles).toEqual([])

        a.signal('SIGKILL')
        expect(await a.exited).toBeNull()
        await server.apply([...documents(repository('edge-05', true)), cluster('edge-05', 'us-east1')])
        await b.logged(/acquired the lease \(from replica-a, whose lease ran out\)/)
        const first = await b.cycle(() => true, "replica-b's first cycle")
        expect(first).toMatchObject({ trigger: ['start'], scope: 'all' })
        expect(outcomes(first)).toContain('PackageVariant default/nginx-edge-05-nginx created')
        expect(await server.get(lease)).toMatchObject({
          spec: { holderIdentity: 'replica-b', leaseTransitions: 1, leaseDurationSeconds: 6 },
        })

        // The timer's resync: everything rendered again, found unchanged.
        const resync = await b.cycle((c) => c.trigger.includes('resync'), 'a resync', first.cycle)
        expect(resync.scope).toBe('all')
        expect(resync.report.variants.filter((v) => v.status !== 'unchanged')).toEqual([])

        // The poll: a new commit of the branch a PackageVariant follows.
        const blueprints = join(dir, 'repos', 'blueprints')
        writeFileSync(join(blueprints, 'nginx', 'README.md'), '# nginx\n\nPolled.\n')
        await git(blueprints, 'commit', '-q', '-am', 'polled')
        const polled = await b.cycle(
          (c) => c.trigger.includes('upstream') && outcomes(c).includes('PackageVariant default/tip updated'),
          'the poll that finds the commit',
          resync.cycle,
        )
        expect(outcomes(polled).filter((o) => !o.endsWith(' unchanged'))).toEqual([
          'PackageVariant default/tip updated',
        ])

        // Stopped, it gives the Lease up.
        expect(await b.stop()).toBe(0)
        expect((await server.get(lease))!['spec']['holderIdentity']).toBeFalsy()
      },
      timeout,
    )

    test(
      'a replica that finds another holder of its Lease stops leading and exits 1',
      async () => {
        const c = replica('replica-c', '--poll', '0')
        await c.logged(/acquired the lease/)
        await c.cycle(() => true, "replica-c's first cycle")
        const current = (await server.get(lease))!
        await server.ok('PUT', await server.path(lease), {
          ...current,
          spec: { ...current['spec'], holderIdentity: 'intruder' },
        })
        await c.logged(/lost the lease: the lease is held by intruder/)
        expect(await c.exited).toBe(1)
      },
      timeout,
    )
  })
})
