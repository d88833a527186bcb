/**
 * `kpt-variants controller` when the world fails around it, as real
 * processes against a real API server (test/support/kube-apiserver.ts) and
 * real git repositories: the API server restarted in the middle of a cycle,
 * etcd stopped for 30 s, and the leader killed between its push and its
 * status write, or told to stop while it sets its watches up; and
 * `render --cluster` with the API server gone at its status write. After
 * each fault the repositories hold complete commits and one draft per
 * package, the status on the API server comes to say what git holds (the
 * PackageVariantSet's and a standalone PackageVariant's), and the
 * controller goes on answering changes. Each test has a namespace and
 * repositories of its own (the controller runs with `-n`). The faults are
 * injected at named stop points (orchestrator/util/stop-point.ts) and the
 * tests wait on the controller's lines and the server's state, never on
 * time, except for the outage that is 30 s by definition.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseValue } from '../../functions/krm/yaml/index.js'
import { gitIdentity, repoRoot } from '../e2e/runner.js'
import { runCli, startCli } from '../support/cli-run.js'
import { ControllerProcess, outcomes } from '../support/controller-process.js'
import type { CycleLine } from '../support/controller-process.js'
import { draftsOf, expectComplete, refusePushes, removeHook, stackLines } from '../support/faults.js'
import { createBlueprints, fleetFiles, threeClusters } from '../support/fleet.js'
import { stoppedAt } from '../support/git-workspace.js'
import { git, writeTree } from '../support/git-repo.js'
import { KubeApiServer, kubeApiServerBuilt, kubeApiServerMissing } from '../support/kube-apiserver.js'
import { describeIfAvailable } from '../support/requires.js'
import type { Json } from '../support/kube-client.js'
import { schemalessCrd } from '../support/schemaless-crd.js'

const timeout = 180_000
const documents = (text: string) => parseValue(text, { stream: true }) as Json[]
const crds = readdirSync(join(repoRoot, 'deploy', 'crds'))
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((f) => documents(readFileSync(join(repoRoot, 'deploy', 'crds', f), 'utf8')))
/** The fleet's PackageVariants: the set's three, and a standalone one (`web`, into edge-01). */
const variants = [...threeClusters.map((c) => `nginx-${c.name}-nginx`), 'web']

const suite = describeIfAvailable(kubeApiServerBuilt(), kubeApiServerMissing)

suite('kpt-variants controller when its world fails', () => {
  let server: KubeApiServer
  let dir: string
  const started: ControllerProcess[] = []

  beforeAll(async () => {
    server = await KubeApiServer.start()
    await server.apply([...crds, schemalessCrd('infra.nephio.org', 'WorkloadCluster')])
    dir = mkdtempSync(join(tmpdir(), 'kpt-variants-controller-faults-'))
    server.writeKubeconfig(join(dir, 'kubeconfig'))
  }, timeout)

  afterEach(async () => {
    for (const controller of started.splice(0)) {
      controller.signal('SIGKILL')
      await controller.exited
    }
  })

  afterAll(async () => {
    await server?.stop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  }, timeout)

  /**
   * A namespace of its own: the blueprints, a bare repository per cluster
   * (below `<dir>/<ns>/repos`), the fleet of test/support/fleet.ts applied
   * in the namespace with a standalone PackageVariant `web` (nginx v1 into
   * edge-01/web); `cwd` is where a controller runs (the fleet's
   * Repositories name `../repos/<name>`).
   */
  async function fleetIn(ns: string) {
    const root = join(dir, ns)
    const cwd = join(root, 'fleet')
    await createBlueprints(join(root, 'repos', 'blueprints'))
    for (const c of threeClusters) await git(root, 'init', '-q', '--bare', '-b', 'main', `repos/${c.name}.git`)
    const files = fleetFiles({ clusters: threeClusters })
    writeTree(cwd, files)
    await server.apply([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }])
    const objects = Object.values(files)
      .flatMap(documents)
      .map((o) => ({ ...o, metadata: { ...o['metadata'], namespace: ns } }))
    const web = {
      apiVersion: 'config.porch.kpt.dev/v1alpha1',
      kind: 'PackageVariant',
      metadata: { name: 'web', namespace: ns },
      spec: {
        upstream: { repo: 'blueprints', package: 'nginx', revision: 1 },
        downstream: { repo: 'edge-01', package: 'web' },
        deletionPolicy: 'delete',
        // nginx's required injection point: without it the package is not ready (Ready=False NotReady).
        injectors: [{ kind: 'ConfigMap', name: 'us-east1-endpoints' }],
      },
    }
    await server.apply([...objects, web])
    const env = {
      ...process.env,
      ...gitIdentity,
      XDG_CACHE_HOME: join(root, 'xdg'),
      KUBECONFIG: join(dir, 'kubeconfig'),
    }
    const set = {
      apiVersion: 'config.porch.kpt.dev/v1alpha2',
      kind: 'PackageVariantSet',
      metadata: { name: 'nginx', namespace: ns },
    }
    return {
      cwd,
      env,
      set,
      web,
      remote: (name: string) => join(root, 'repos', `${name}.git`),
      /** A controller of this namespace (`--git -n NS --poll 0`, a cache of its own), and more arguments. */
      controller(cache: string, args: string[], extraEnv: Record<string, string> = {}): ControllerProcess {
        const controller = new ControllerProcess(
          ['--git', '-n', ns, '--cache', join(root, cache), '--poll', '0', ...args],
          { cwd, env: { ...env, ...extraEnv } },
        )
        started.push(controller)
        return controller
      },
      /** The set's conditions (or the standalone PackageVariant's) on the API server: `Type=Status Reason`. */
      async conditions(object: Json = set): Promise<string[]> {
        return ((await server.get(object))?.['status']?.['conditions'] ?? []).map(
          (c: Json) => `${c['type']}=${c['status']} ${c['reason']}`,
        )
      },
      /**
       * The status on the API server says what git holds: every package has its
       * draft, so the set and the PackageVariant are Ready, the PackageVariant
       * naming its downstream package.
       */
      async expectStatusAsGit(): Promise<void> {
        await this.oneDraftEach()
        expect(await this.conditions()).toEqual(['Stalled=False Valid', 'Ready=True Reconciled'])
        const pv = await server.get(web)
        expect(await this.conditions(web)).toEqual(['Stalled=False Valid', 'Ready=True NoErrors'])
        expect(pv?.['status']?.['downstreamTargets']).toEqual([{ name: 'edge-01/web' }])
      },
      /** Resolves once the set's status says every variant is rendered (Ready=True), and to when that was seen. */
      async reconciled(within = 120_000): Promise<number> {
        await server.waitFor(
          set,
          (o) =>
            (o['status']?.['conditions'] ?? []).some(
              (c: Json) => c['type'] === 'Ready' && c['status'] === 'True' && c['reason'] === 'Reconciled',
            ),
          within,
        )
        return Date.now()
      },
      /** Every repository complete, with exactly one draft of each package: `drafts/nginx/packagevariant-1`, and web's. */
      async oneDraftEach(): Promise<void> {
        for (const c of threeClusters) {
          const remote = join(root, 'repos', `${c.name}.git`)
          await expectComplete(remote)
          if (c.name === 'edge-01') await expectComplete(remote, 'web')
          expect({ repo: c.name, drafts: await draftsOf(remote) }).toEqual({
            repo: c.name,
            drafts: ['drafts/nginx/packagevariant-1', ...(c.name === 'edge-01' ? ['drafts/web/packagevariant-1'] : [])],
          })
        }
      },
    }
  }

  const cluster = (ns: string, name: string, region: string): Json => ({
    apiVersion: 'infra.nephio.org/v1alpha1',
    kind: 'WorkloadCluster',
    metadata: { name, namespace: ns, labels: { 'nephio.org/site-type': 'edge', region } },
    spec: { clusterName: name },
  })

  /** The cycle after `after` that rendered something, and what it rendered. */
  const renderedCycle = (controller: ControllerProcess, after: number, what: string): Promise<CycleLine> =>
    controller.cycle((c) => c.report.variants.length > 0, what, after)

  test(
    'the API server goes down between a cycle’s push and its status write and comes back: the status is written once it is back, and the watches carry on',
    async () => {
      const ns = 'apiserver-restart'
      const fleet = await fleetIn(ns)
      const controller = fleet.controller('cache', ['--no-leader-election'], {
        KPT_VARIANTS_TEST_STOP_AT: 'status-computed',
      })
      await controller.logged(/^kpt-variants: stopped at status-computed$/)
      // Pushed: every draft is in git; no status yet.
      await fleet.oneDraftEach()
      expect(await fleet.conditions()).toEqual([])
      expect(await fleet.conditions(fleet.web)).toEqual([])

      await server.stopProcess('kube-apiserver')
      const down = controller.log.length
      controller.signal('SIGUSR2')
      const first = await controller.cycle(() => true, 'the first cycle')
      expect(outcomes(first).sort()).toEqual(variants.map((v) => `PackageVariant ${ns}/${v} created`))
      // Its status writes failed, saying what and where, and the controller runs on.
      expect(first.status.written).toBe(0)
      const refused = (kind: string, version: string, resource: string, name: string) =>
        expect.stringMatching(
          new RegExp(
            `^${kind} ${ns}/${name}: status not written: cannot reach the Kubernetes API server https://127\\.0\\.0\\.1:\\d+ \\(to patch /apis/config\\.porch\\.kpt\\.dev/${version}/namespaces/${ns}/${resource}/${name}/status\\): ECONNREFUSED$`,
          ),
        )
      expect(first.status.failures).toEqual([
        refused('PackageVariant', 'v1alpha1', 'packagevariants', 'web'),
        refused('PackageVariantSet', 'v1alpha2', 'packagevariantsets', 'nginx'),
      ])
      await controller.logged(/^kpt-variants controller: writing the status again in 2 s$/, down)
      expect(controller.running).toBe(true)

      await server.startProcess('kube-apiserver')
      const back = Date.now()
      const written = await fleet.reconciled()
      const convergedMs = written - back
      await fleet.expectStatusAsGit()
      expect(stackLines(controller.log.slice(down).join('\n'))).toEqual([])

      // The watches resumed: a change made after the restart is rendered, alone.
      const last = controller.lastCycle
      await server.apply([cluster(ns, 'edge-02', 'eu-west1')])
      const relabelled = await renderedCycle(controller, last, 'the cycle of the relabelled target')
      expect(outcomes(relabelled)).toEqual([`PackageVariant ${ns}/nginx-edge-02-nginx updated`])
      await fleet.oneDraftEach()
      expect(
        await git(fleet.remote('edge-02'), 'show', 'drafts/nginx/packagevariant-1:nginx/region-endpoints.yaml'),
      ).toContain('https://api.eu-west1.example.com')
      expect(await controller.stop()).toBe(0)
      console.log(`API server restarted mid-cycle: status written ${convergedMs} ms after it was back`)
    },
    timeout,
  )

  test(
    'the leader killed between its push and its status write: the standby takes over, finds the drafts in git, writes the status they call for, and drafts nothing twice',
    async () => {
      const ns = 'leader-killed'
      const fleet = await fleetIn(ns)
      // A first run fails edge-02's variant (its repository refuses the push): the status says so.
      refusePushes(fleet.remote('edge-02'), 'edge-02 is frozen')
      const once = await runCli(fleet.cwd, [
        'render',
        '--cluster',
        '--kubeconfig',
        join(dir, 'kubeconfig'),
        '-n',
        ns,
        '--git',
        '--cache',
        join(dir, ns, 'once'),
      ])
      expect(once.exitCode).toBe(1)
      expect(await fleet.conditions()).toEqual(['Stalled=True UnexpectedError', 'Ready=False UnexpectedError'])
      removeHook(fleet.remote('edge-02'))

      const lease = [
        '--lease',
        `${ns}/controller`,
        '--lease-duration',
        '6s',
        '--renew-deadline',
        '4s',
        '--retry-period',
        '500ms',
      ]
      const leader = fleet.controller('cache-a', [...lease, '--identity', 'a'], {
        KPT_VARIANTS_TEST_STOP_AT: 'status-computed',
      })
      await leader.logged(/acquired the lease/)
      await leader.logged(/^kpt-variants: stopped at status-computed$/)
      // edge-02's draft is pushed; the status still says it failed.
      await fleet.oneDraftEach()
      expect(await fleet.conditions()).toEqual(['Stalled=True UnexpectedError', 'Ready=False UnexpectedError'])

      const standby = fleet.controller('cache-b', [...lease, '--identity', 'b'])
      await standby.logged(/standing by: the lease is held by a/)
      const killed = Date.now()
      leader.signal('SIGKILL')
      expect(await leader.exited).toBeNull()
      await standby.logged(/acquired the lease \(from a, whose lease ran out\)/)
      const acquired = Date.now()
      const first = await standby.cycle(() => true, "the standby's first cycle")
      const written = Date.now()
      expect(first.trigger).toEqual(['start'])
      // Found in git as the leader left it: nothing to push, no second draft.
      expect(outcomes(first).sort()).toEqual(variants.map((v) => `PackageVariant ${ns}/${v} unchanged`))
      expect(first.status).toMatchObject({ written: 1, changed: 1, failures: [] })
      await fleet.expectStatusAsGit()
      expect(await standby.stop()).toBe(0)
      console.log(
        `leader killed: the standby took the Lease ${acquired - killed} ms later (--lease-duration 6s), and wrote the status ${written - acquired} ms after that`,
      )
    },
    timeout,
  )

  test.each([
    ['watch-listed', 'its watches still listing', 'the lists'],
    ['watches-synced', 'working out the kinds to watch', 'the kinds worked out'],
  ])(
    'SIGTERM at %s (%s): the leader gives the lease up and exits 0, no watch left open',
    async (point, _, resumed) => {
      const ns = `faults-${point}`
      const fleet = await fleetIn(ns)
      const lease = ['--lease', `${ns}/controller`, '--identity', 'a']
      const controller = fleet.controller('cache', lease, { KPT_VARIANTS_TEST_STOP_AT: point })
      await controller.logged(/acquired the lease/)
      // Held there, as a pod deleted just after it started can be.
      await controller.logged(new RegExp(`^kpt-variants: stopped at ${point}$`))
      controller.signal('SIGTERM')
      // Given up once the controller has stopped its watches.
      await controller.logged(/released the lease/)
      controller.signal('SIGUSR2')
      // A watch that went on to connect, or one started after the stop, would keep the process alive until SIGKILL
      // (a pod's grace period).
      await controller.until(() => (controller.running ? undefined : true), `its exit after ${resumed}`, 30_000)
      expect(await controller.exited).toBe(0)
    },
    timeout,
  )

  test(
    'render --cluster with the API server gone between its push and its status write: exit 1 naming each status not written; the next run writes them, the one after nothing',
    async () => {
      const ns = 'render-cluster'
      const fleet = await fleetIn(ns)
      const args = ['render', '--cluster', '-n', ns, '--git', '--cache', join(dir, ns, 'cache')]
      const held = startCli(fleet.cwd, args, {
        baseEnv: fleet.env,
        env: { KPT_VARIANTS_TEST_STOP_AT: 'status-computed' },
      })
      try {
        await stoppedAt(held, 'status-computed')
        await server.stopProcess('kube-apiserver')
        held.kill('SIGUSR2')
        const first = await held
        expect(first.exitCode).toBe(1)
        const stderr = String(first.stderr)
        expect(stderr).toMatch(
          new RegExp(
            `^kpt-variants: PackageVariant ${ns}/web: status not written: cannot reach the Kubernetes API server https://127\\.0\\.0\\.1:\\d+ \\(to patch \\S+\\): ECONNREFUSED$`,
            'm',
          ),
        )
        expect(stderr).toMatch(new RegExp(`^kpt-variants: PackageVariantSet ${ns}/nginx: status not written: `, 'm'))
        expect(stderr).toMatch(/^status: 0 of 2 changed PackageVariant\(s\) and PackageVariantSet\(s\) written to /m)
        expect(stackLines(stderr)).toEqual([])
      } finally {
        held.kill('SIGKILL')
        await server.startProcess('kube-apiserver')
      }
      await fleet.oneDraftEach()
      expect(await fleet.conditions()).toEqual([])

      const run = () => runCli(fleet.cwd, args, { baseEnv: fleet.env })
      const second = await run()
      expect(second.exitCode).toBe(0)
      expect(second.stderr).toMatch(/^4 variant\(s\): 0 created, 0 updated, 4 unchanged, 0 failed$/m)
      expect(second.stderr).toMatch(/^status: 2 of 2 changed /m)
      await fleet.expectStatusAsGit()
      const third = await run()
      expect(third.exitCode).toBe(0)
      expect(third.stderr).toMatch(/^status: 0 of 0 changed /m)
      await fleet.expectStatusAsGit()
    },
    timeout,
  )

  test(
    'etcd stopped for 30 s: the controller keeps running and pushing, reports the status it cannot write, and writes it once etcd is back',
    async () => {
      const ns = 'etcd-outage'
      const fleet = await fleetIn(ns)
      refusePushes(fleet.remote('edge-03'), 'edge-03 is frozen')
      const controller = fleet.controller('cache', ['--no-leader-election'])
      const first = await controller.cycle(() => true, 'the first cycle')
      expect(outcomes(first).filter((o) => o.endsWith(' failed'))).toEqual([
        `PackageVariant ${ns}/nginx-edge-03-nginx failed`,
      ])
      expect(await fleet.conditions()).toEqual(['Stalled=True UnexpectedError', 'Ready=False UnexpectedError'])

      const stopped = Date.now()
      // Killed, as a crash (stopped with SIGTERM, it takes seconds to go).
      await server.stopProcess('etcd', 'SIGKILL')
      const from = controller.log.length
      // Meanwhile edge-03 takes pushes again, and a resync renders it: git moves on without etcd.
      removeHook(fleet.remote('edge-03'))
      const last = controller.lastCycle
      controller.signal('SIGHUP')
      const resync = await controller.cycle((c) => c.trigger.includes('resync'), 'the resync', last, 120_000)
      expect(outcomes(resync).filter((o) => !o.endsWith(' unchanged'))).toEqual([
        `PackageVariant ${ns}/nginx-edge-03-nginx created`,
      ])
      await fleet.oneDraftEach()
      // The status it cannot write is reported, naming the object and the server's answer.
      expect(resync.status.written).toBe(0)
      expect(resync.status.failures).toEqual([
        expect.stringMatching(new RegExp(`^PackageVariantSet ${ns}/nginx: status not written: cannot `)),
      ])
      const reported = Date.now() - stopped
      // The outage lasts 30 s at least, whatever the time the failed write took to be reported.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 30_000 - reported)))
      expect(controller.running).toBe(true)
      const outage = Date.now() - stopped
      await server.startProcess('etcd')
      const ready = Date.now()
      const written = await fleet.reconciled(180_000)
      await fleet.expectStatusAsGit()
      expect(stackLines(controller.log.slice(from).join('\n'))).toEqual([])

      // And the watches carry on.
      const before = controller.lastCycle
      await server.apply([cluster(ns, 'edge-01', 'eu-west1')])
      const relabelled = await renderedCycle(controller, before, 'the cycle of the relabelled target')
      expect(outcomes(relabelled)).toEqual([`PackageVariant ${ns}/nginx-edge-01-nginx updated`])
      expect(await controller.stop()).toBe(0)
      console.log(
        `etcd stopped for ${outage} ms (failed status write reported after ${reported} ms); API server ready ${ready - stopped - outage} ms after etcd started; status written ${written - ready} ms after that`,
      )
    },
    2 * timeout,
  )
})
