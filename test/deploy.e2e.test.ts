/**
 * The deployable package, deploy/, against a real Kubernetes API server
 * (test/support/kube-apiserver.ts): kpt renders it unchanged, `kpt live
 * apply` installs it (its CRDs are accepted), Nephio's manifests apply
 * unchanged, and the CronJobs' own arguments, run with a real token of the
 * package's service account (TokenRequest), render the fleet as a directory
 * holding the same objects renders, and write its status, with exactly the
 * access deploy/rbac.yaml grants: every rule is used, and without any one of
 * them the run fails, forbidden.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import { parseValue } from '../functions/krm/yaml/index.js'
import { repoRoot } from './e2e/runner.js'
import { createBlueprints, fleetFiles, threeClusters } from './support/fleet.js'
import { git, readTreeWithModes, writeTree } from './support/git-repo.js'
import { KubeApiServer, kubeApiServerBuilt, kubeApiServerMissing } from './support/kube-apiserver.js'
import { describeIfAvailable } from './support/requires.js'
import { schemalessCrd } from './support/schemaless-crd.js'
import type { Json } from './support/kube-client.js'
import { source } from './support/source.js'
import { runCli } from './support/cli-run.js'

const deploy = join(repoRoot, 'deploy')
const nephio = join(repoRoot, 'test', 'fleets', 'nephio')
const timeout = 120_000

const documents = (file: string) => parseValue(readFileSync(file, 'utf8'), { stream: true }) as Json[]
const manifests = (file: string) => documents(join(deploy, file))
const yamlFiles = (dir: string) =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => join(dir, f))

interface Rule {
  apiGroups: string[]
  resources: string[]
  verbs: string[]
}
// The roles bound to the render's ServiceAccount (rbac.yaml also has a role for the people who edit rollouts).
const bound = new Set(
  manifests('rbac.yaml')
    .filter(
      (o) => o['kind'] === 'ClusterRoleBinding' && (o['subjects'] as Json[]).some((s) => s['name'] === 'kpt-variants'),
    )
    .map((o) => o['roleRef']['name'] as string),
)
const roles = manifests('rbac.yaml').filter((o) => o['kind'] === 'ClusterRole' && bound.has(o['metadata']['name']))
const serviceAccount = 'system:serviceaccount:kpt-variants:kpt-variants'

/** The container's arguments, with its cache in the test's directory and $(SHARD) set. */
function cronJobArgs(file: string, cache: string, shard?: number): string[] {
  const container = manifests(file)[0]!['spec']['jobTemplate']['spec']['template']['spec']['containers'][0] as {
    args: string[]
  }
  return container.args.map((arg) =>
    arg === '/var/cache/kpt-variants' ? cache : arg.replace('$(SHARD)', String(shard)),
  )
}

/** What a render of the whole fleet reports. */
const fleet = [
  'PackageVariant default/nginx-edge-01-nginx created',
  'PackageVariant default/standalone created',
  'PackageVariant default/nginx-edge-02-nginx created',
  'PackageVariant default/nginx-edge-03-nginx created',
]

const suite = describeIfAvailable(kubeApiServerBuilt(), kubeApiServerMissing)

test(
  'kpt renders the package, changing nothing',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kpt-variants-deploy-e2e-'))
    try {
      const copy = join(dir, 'deploy')
      cpSync(deploy, copy, { recursive: true })
      const render = await execa('kpt', ['fn', 'render', copy], { reject: false })
      expect(render.exitCode).toBe(0)
      for (const file of [
        'Kptfile',
        'namespace.yaml',
        'rbac.yaml',
        'controller-rbac.yaml',
        'controller-deployment.yaml',
        'render-cronjob.yaml',
        'render-sharded-cronjob.yaml',
      ]) {
        expect(readFileSync(join(copy, file), 'utf8')).toBe(readFileSync(join(deploy, file), 'utf8'))
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  },
  timeout,
)

suite('deploy/ in a real API server', () => {
  let server: KubeApiServer
  let dir: string
  let liveApply: { exitCode: number; stdout: string; stderr: string }
  let token: string

  beforeAll(async () => {
    server = await KubeApiServer.start()
    dir = mkdtempSync(join(tmpdir(), 'kpt-variants-deploy-e2e-'))
    server.writeKubeconfig(join(dir, 'admin.kubeconfig'))
    const env = { ...process.env, KUBECONFIG: join(dir, 'admin.kubeconfig') }
    cpSync(deploy, join(dir, 'deploy'), { recursive: true })
    await execa('kpt', ['live', 'init', join(dir, 'deploy')], { env })
    const applying = execa('kpt', ['live', 'apply', join(dir, 'deploy'), '--reconcile-timeout=2m'], {
      env,
      reject: false,
    })
    // No kube-controller-manager, scheduler or kubelet runs beside this server: once the controller's Deployment is
    // stored, its status is written as they would write it (two replicas ready), so that kpt's reconcile wait can end.
    const deployment = manifests('controller-deployment.yaml').find((o) => o['kind'] === 'Deployment')!
    const ready = server
      .waitFor(deployment, () => true, timeout)
      .then((stored) =>
        server.ok(
          'PATCH',
          '/apis/apps/v1/namespaces/kpt-variants/deployments/kpt-variants-controller/status',
          {
            status: {
              observedGeneration: stored['metadata']['generation'],
              replicas: 2,
              updatedReplicas: 2,
              readyReplicas: 2,
              availableReplicas: 2,
              conditions: [
                { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' },
                { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable' },
              ],
            },
          },
          { contentType: 'application/merge-patch+json' },
        ),
      )
    const run = await Promise.race([applying, ready.then(() => applying)])
    liveApply = { exitCode: run.exitCode ?? -1, stdout: String(run.stdout), stderr: String(run.stderr) }
    // The other kind the fleets use: Nephio's WorkloadCluster (deploy/ brings the dependency check's kinds).
    await server.apply(['WorkloadCluster'].map((kind) => schemalessCrd('infra.nephio.org', kind)))
    token = await server.token('kpt-variants', 'kpt-variants')
    server.writeKubeconfig(join(dir, 'kubeconfig'), { token })
  }, timeout)

  afterAll(async () => {
    await server?.stop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  }, timeout)

  async function run(
    args: string[],
    cwd = dir,
  ): Promise<{ exitCode: number; stderr: string; variants: string[]; stdout: string }> {
    const result = await runCli(cwd, [...args, '--json'], {
      env: { XDG_CACHE_HOME: join(dir, 'cache'), KUBECONFIG: join(dir, 'kubeconfig') },
    })
    const report = JSON.parse(result.stdout || '{"variants":[]}') as { variants: Json[] }
    return {
      ...result,
      variants: report.variants.map((v) => `${v['subject']} ${v['status']}`),
    }
  }

  test(
    '`kpt live apply` installs it: the CRDs are accepted and established, every object reconciles',
    async () => {
      // Its stderr says it installs its ResourceGroup CRD (and may show a discovery miss just after the CRDs are made).
      expect(liveApply.stderr).toContain('installing inventory ResourceGroup CRD')
      expect(liveApply.exitCode).toBe(0)
      const objects = [
        'namespace.yaml',
        'rbac.yaml',
        'controller-rbac.yaml',
        'controller-deployment.yaml',
        'render-cronjob.yaml',
        'render-sharded-cronjob.yaml',
        ...readdirSync(join(deploy, 'crds')).map((f) => `crds/${f}`),
      ].flatMap(manifests)
      expect(liveApply.stdout).toContain(
        `apply result: ${objects.length} attempted, ${objects.length} successful, 0 skipped, 0 failed`,
      )
      expect(liveApply.stdout).toContain(
        `reconcile result: ${objects.length} attempted, ${objects.length} successful, 0 skipped, 0 failed, 0 timed out`,
      )
      for (const object of objects)
        expect([object['kind'], object['metadata']['name'], (await server.get(object)) !== undefined]).toEqual([
          object['kind'],
          object['metadata']['name'],
          true,
        ])
      const crd = await server.get(manifests('crds/config.porch.kpt.dev_packagevariantsets.yaml')[0]!)
      expect(crd!['status']['conditions']).toContainEqual(
        expect.objectContaining({ type: 'Established', status: 'True' }),
      )
      // The API server serves the package's kinds at the versions the render asks for.
      expect(
        (await server.ok('GET', '/apis/config.porch.kpt.dev/v1alpha2'))['resources'].map((r: Json) => r['name']),
      ).toEqual(['packagevariantsets', 'packagevariantsets/status'])
    },
    timeout,
  )

  test(
    "Nephio's manifests apply unchanged, but for older Porch's string revisions, which Porch's CRD (ours) refuses",
    async () => {
      // What is applied is stored as written (the Repository CRD adds its default `spec.content: Package`): nothing is pruned.
      const unchanged = async (objects: Json[], namespace: string) => {
        await server.apply(objects, namespace)
        for (const object of objects) {
          const { metadata, ...rest } = object
          const written = JSON.parse(
            JSON.stringify({ ...rest, metadata: { labels: metadata['labels'], annotations: metadata['annotations'] } }),
          ) as Json
          expect(await server.get(object, namespace)).toMatchObject(written)
        }
        await server.delete(objects, namespace)
      }
      const refused: string[] = []
      for (const fleet of ['test-infra', 'docs-gcp-exercise']) {
        await server.apply([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: fleet } }])
        const objects = yamlFiles(join(nephio, fleet)).flatMap(documents)
        const stringRevision = (o: Json) => typeof o['spec']?.['upstream']?.['revision'] === 'string'
        await unchanged(
          objects.filter((o) => !stringRevision(o)),
          fleet,
        )
        // Created as `kubectl apply` (client-side) creates them: refused by the schema, `revision` being an integer in Porch's CRDs.
        for (const o of objects.filter(stringRevision)) {
          const created = await server.request(
            'POST',
            (await server.path(o, undefined, fleet)).replace(/\/[^/]+$/, ''),
            o,
          )
          refused.push(`${created.status} ${created.body['message']}`)
        }
      }
      expect(refused).toEqual([
        ...['edge-clusters', 'edge-free5gc-upf', 'oai-nrf', 'edge-clusters', 'uswest1-zonal-clusters'].map(
          (name) =>
            `422 PackageVariantSet.config.porch.kpt.dev "${name}" is invalid: spec.upstream.revision: Invalid value: "string": spec.upstream.revision in body must be of type integer: "string"`,
        ),
      ])
    },
    timeout,
  )

  describe('the fleet of the other e2e tests, rendered as the service account', () => {
    let objects: Json[]
    /** Where the runs start: the fleet directory, so that its relative repository paths (../repos/NAME) resolve alike from the cluster. */
    let fleetDir: string

    beforeAll(async () => {
      await createBlueprints(join(dir, 'repos', 'blueprints'))
      for (const name of ['edge-01', 'edge-02', 'edge-03'])
        await git(dir, 'init', '-q', '--bare', '-b', 'main', `repos/${name}.git`)
      const standalone = source`
        apiVersion: config.porch.kpt.dev/v1alpha1
        kind: PackageVariant
        metadata: {name: standalone, namespace: default}
        spec:
          upstream: {repo: blueprints, package: nginx, revision: 2}
          downstream: {repo: edge-01, package: standalone}
      `
      const files = fleetFiles({ clusters: threeClusters, extra: { 'variants.yaml': standalone } })
      fleetDir = join(dir, 'fleet')
      writeTree(fleetDir, files)
      objects = Object.values(files).flatMap((text) => parseValue(text, { stream: true }) as Json[])
      await server.apply(objects)
    }, timeout)

    test(
      'render --cluster, with a TokenRequest token of the service account, renders the same packages as the same objects in a directory',
      async () => {
        const fromDir = await run(['render', '.', '--out', '../from-dir'], fleetDir)
        const fromCluster = await run(['render', '--cluster', '--out', '../from-cluster'], fleetDir)
        expect(fromCluster.stderr).not.toMatch(/forbidden|cannot/)
        expect([fromDir.exitCode, fromCluster.exitCode]).toEqual([0, 0])
        expect(fromCluster.variants).toEqual(fleet)
        expect(fromCluster.variants).toEqual(fromDir.variants)
        expect(readTreeWithModes(join(dir, 'from-cluster'))).toEqual(readTreeWithModes(join(dir, 'from-dir')))
        expect(fromCluster.stderr).toContain(`written to ${server.url}`)
      },
      timeout,
    )

    test(
      "the CronJob's render needs exactly what deploy/rbac.yaml grants: every rule is used, and without any one the run is forbidden",
      async () => {
        const cache = join(dir, 'cache-cronjob')
        const before = (await server.auditEvents()).length
        // A status is written only when it changes: none yet, so that this run writes them.
        const clearStatus = async () => {
          for (const o of objects.filter((o) => o['kind'] === 'PackageVariant' || o['kind'] === 'PackageVariantSet'))
            await server.ok(
              'PATCH',
              await server.path(o, 'status'),
              { status: null },
              { contentType: 'application/merge-patch+json' },
            )
        }
        await clearStatus()
        const result = await run(cronJobArgs('render-cronjob.yaml', cache), fleetDir)
        expect(result.stderr).not.toMatch(/forbidden|refused|cannot/)
        expect(result.exitCode).toBe(0)
        expect(result.variants).toEqual(fleet)
        const set = (await server.get(objects.find((o) => o['kind'] === 'PackageVariantSet')!))!
        expect(set['status']['conditions']).toContainEqual(
          expect.objectContaining({ type: 'Ready', status: 'True', reason: 'Reconciled' }),
        )

        // Every resource of every rule was asked for, with the rule's verb, and nothing else was.
        const asked = (await server.auditEvents(before)).filter(
          (e) => e.user.username === serviceAccount && e.objectRef?.resource,
        )
        const key = (group: string, resource: string, verb: string) => `${verb} ${resource}${group ? `.${group}` : ''}`
        const granted = roles.flatMap((role) =>
          (role['rules'] as Rule[]).flatMap((r) =>
            r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => key(g, res, v)))),
          ),
        )
        const used = new Set(
          asked.map((e) =>
            key(
              e.objectRef!.apiGroup ?? '',
              `${e.objectRef!.resource}${e.objectRef!.subresource ? `/${e.objectRef!.subresource}` : ''}`,
              e.verb,
            ),
          ),
        )
        expect([...used].sort()).toEqual([...granted].sort())

        // Without any one of them: forbidden, saying which.
        const proven: string[] = []
        for (const role of roles) {
          const rules = role['rules'] as Rule[]
          for (const [index, rule] of rules.entries()) {
            for (const resource of rule.resources) {
              const [group, verb] = [rule.apiGroups[0]!, rule.verbs[0]!]
              const [plain, subresource] = resource.split('/') as [string, string | undefined]
              const attributes = { verb, group, resource: plain, ...(subresource ? { subresource } : {}) }
              const without = rules
                .map((r, i) => (i === index ? { ...r, resources: r.resources.filter((x) => x !== resource) } : r))
                .filter((r) => r.resources.length > 0)
              await server.apply([{ ...role, rules: without }])
              await server.waitForAccess(serviceAccount, attributes, false)
              if (subresource) await clearStatus()
              const denied = await run(cronJobArgs('render-cronjob.yaml', cache), fleetDir)
              expect([resource, denied.exitCode === 0]).toEqual([resource, false])
              expect(denied.stderr).toContain(`forbidden: `)
              expect(denied.stderr).toContain(
                `User "${serviceAccount}" cannot ${verb} resource "${resource}" in API group "${group}"`,
              )
              proven.push(key(group, resource, verb))
              await server.apply([role])
              await server.waitForAccess(serviceAccount, attributes, true)
            }
          }
        }
        expect(proven.sort()).toEqual([...granted].sort())
      },
      5 * timeout,
    )

    test(
      "the sharded CronJob's four shards render the fleet between them",
      async () => {
        const rendered: string[] = []
        for (let shard = 0; shard < 4; shard++) {
          const result = await run(
            cronJobArgs('render-sharded-cronjob.yaml', join(dir, `cache-${shard}`), shard),
            fleetDir,
          )
          expect(result.stderr).not.toMatch(/forbidden|cannot/)
          expect(result.exitCode).toBe(0)
          rendered.push(...result.variants)
        }
        // Each variant once (created by the CronJob's run above, or now).
        const subjects = (variants: string[]) => variants.map((v) => v.replace(/ [a-z]+$/, '')).sort()
        expect(subjects(rendered)).toEqual(subjects(fleet))
      },
      timeout,
    )
  })
})
