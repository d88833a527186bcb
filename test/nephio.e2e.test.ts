/**
 * Nephio's own manifests, rendered unchanged by `kpt-variants render`: the
 * PackageVariantSets of Nephio's end-to-end tests (nephio-project/test-infra)
 * and of the GCP install guide's exercise (nephio-project/docs), copied into
 * test/fleets/nephio (see its README.md). They use older Porch's string
 * revisions (`v4.0.0`, `r2`, `main`), have no namespace, inject by kind and
 * name or by `nameExpr: target.name`, and prepend `image:` functions. Small
 * local packages stand in for Nephio's blueprints.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import { parseValue } from '../functions/krm/yaml/index.js'
import { repoRoot } from './e2e/runner.js'
import { kptfile } from './support/catalog-repo.js'
import { runCli } from './support/cli-run.js'
import { createRepo, git, writeTree } from './support/git-repo.js'
import type { TreeSpec } from './support/git-repo.js'
import { source } from './support/source.js'

const fleets = join(repoRoot, 'test', 'fleets', 'nephio')
const timeout = 60_000

/** A blueprint package: a Kptfile, a resource, and optionally an injection point of a kind. */
function blueprint(name: string, resource: string, injectionPoint?: string): TreeSpec {
  return {
    [`${name}/Kptfile`]: kptfile(name, `stands in for Nephio's ${name}`),
    [`${name}/resource.yaml`]: resource,
    ...(injectionPoint ? { [`${name}/injection-point.yaml`]: injectionPoint } : {}),
  }
}

const workloadClusterPoint = source`
  apiVersion: infra.nephio.org/v1alpha1
  kind: WorkloadCluster
  metadata:
    name: example
    annotations:
      config.kubernetes.io/local-config: "true"
      kpt.dev/config-injection: required
  spec:
    clusterName: example
`

const gcpContextPoint = source`
  apiVersion: v1
  kind: ConfigMap
  metadata:
    name: gcp-context
    annotations:
      config.kubernetes.io/local-config: "true"
      kpt.dev/config-injection: required
  data:
    location: us-central1
`

const gkeCluster = (version: string) => source`
  apiVersion: container.cnrm.cloud.google.com/v1beta1
  kind: ContainerCluster
  metadata:
    name: workload
  spec:
    minMasterVersion: "${version}"
`

interface Run {
  exitCode: number
  stderr: string
  report: {
    variants: {
      path?: string
      subject: string
      status: string
      upstream?: string
      previousUpstream?: string
      warnings: string[]
      reasons: { code: string; message: string }[]
    }[]
  }
}

class Workspace {
  readonly dir = mkdtempSync(join(tmpdir(), 'kpt-variants-nephio-'))

  /** Copies a fleet of test/fleets/nephio to `fleet/`. */
  useFleet(name: string): void {
    cpSync(join(fleets, name), join(this.dir, 'fleet'), { recursive: true })
  }

  async render(...args: string[]): Promise<Run> {
    const run = await runCli(this.dir, ['render', 'fleet', '--out', 'out', '--json', ...args])
    return { exitCode: run.exitCode, stderr: run.stderr, report: JSON.parse(run.stdout) }
  }

  yaml(path: string): Record<string, any>[] {
    return readFileSync(join(this.dir, 'out', path), 'utf8')
      .split(/^---$/m)
      .map((doc) => parseValue(doc) as Record<string, any>)
  }
}

const engineRuns = async () =>
  (await execa('docker', ['info'], { reject: false }).catch(() => ({ exitCode: 1 }))).exitCode === 0

describe("Nephio's manifests, unchanged", () => {
  let ws: Workspace
  afterEach(() => rmSync(ws.dir, { recursive: true, force: true }))

  test(
    "test-infra's free5gc and OAI sets: string revisions (tags <package>/v4.0.0, <package>/r2), no namespaces, injection by target name",
    async () => {
      ws = new Workspace()
      ws.useFleet('test-infra')
      const resource = (kind: string) =>
        `apiVersion: workload.nephio.org/v1alpha1\nkind: ${kind}\nmetadata:\n  name: example\n`
      await createRepo(join(ws.dir, 'repos', 'catalog-infra-capi'), [
        ['nephio-workload-cluster/v4.0.0', blueprint('nephio-workload-cluster', resource('Cluster'))],
      ])
      await createRepo(join(ws.dir, 'repos', 'catalog-workloads-free5gc'), [
        ['pkg-example-upf-bp/v4.0.0', blueprint('pkg-example-upf-bp', resource('UPFDeployment'), workloadClusterPoint)],
      ])
      await createRepo(join(ws.dir, 'repos', 'oai-core-packages'), [
        ['oai-nrf/r2', blueprint('oai-nrf', resource('NFDeployment'), workloadClusterPoint)],
      ])

      const { exitCode, report } = await ws.render('--image-functions', 'skip')
      expect(exitCode).toBe(0)
      expect(report.variants.map((v) => [v.path, v.status, v.upstream])).toEqual([
        ['core/oai-nrf', 'created', 'oai-core-packages/oai-nrf r2'],
        ['edge01/free5gc-upf', 'created', 'catalog-workloads-free5gc/pkg-example-upf-bp v4.0.0'],
        ['edge02/free5gc-upf', 'created', 'catalog-workloads-free5gc/pkg-example-upf-bp v4.0.0'],
        ['mgmt/edge01', 'created', 'catalog-infra-capi/nephio-workload-cluster v4.0.0'],
        ['mgmt/edge02', 'created', 'catalog-infra-capi/nephio-workload-cluster v4.0.0'],
      ])
      // The older forms are accepted with a warning naming today's; the image pipeline is left for kpt.
      const core = report.variants[0]!
      expect(core.warnings).toContain(
        'PackageVariantSet default/oai-nrf: `spec.upstream.revision: "r2"` is older Porch\'s string form: read as the revision named "r2" (the tag <package>/r2, else the head of branch r2); write `workspaceName: r2`',
      )
      expect(report.variants[3]!.warnings).toContain(
        'pipeline not run (--image-functions skip): it has image functions gcr.io/kpt-fn/set-labels:v0.2.0',
      )

      // nameExpr: target.name injected each cluster's own WorkloadCluster, found in the namespace kubectl would give it.
      const [point] = ws.yaml('edge02/free5gc-upf/injection-point.yaml')
      expect(point!['spec']).toEqual({ clusterName: 'edge02', cnis: ['macvlan'], masterInterface: 'eth1' })
      expect(point!['metadata']['annotations']['kpt.dev/injected-resource']).toBe('edge02')
      const [kptfile] = ws.yaml('core/oai-nrf/Kptfile')
      expect(kptfile!['upstream']['git']['ref']).toBe('oai-nrf/r2')
      expect(kptfile!['metadata']['annotations']['kpt-variants.dev/package-variant']).toBe(
        'default/oai-nrf-core-oai-nrf',
      )
      expect(ws.yaml('mgmt/edge01/Kptfile')[0]!['pipeline']['mutators'][0]).toMatchObject({
        image: 'gcr.io/kpt-fn/set-labels:v0.2.0',
      })

      // Without --image-functions skip, a variant whose image function cannot run fails alone, saying why.
      if (!(await engineRuns())) {
        rmSync(join(ws.dir, 'out'), { recursive: true })
        const strict = await ws.render()
        expect(strict.exitCode).toBe(1)
        expect(strict.report.variants.filter((v) => v.status === 'failed').map((v) => v.path)).toEqual([
          'mgmt/edge01',
          'mgmt/edge02',
        ])
        expect(strict.report.variants.find((v) => v.path === 'mgmt/edge01')!.reasons).toEqual([
          {
            code: 'FunctionFailed',
            message: expect.stringContaining('"gcr.io/kpt-fn/set-labels:v0.2.0" cannot run: no container engine'),
          },
        ])
        expect(strict.report.variants.filter((v) => v.status === 'created')).toHaveLength(3)
      }
    },
    timeout,
  )

  test(
    "the GCP install guide's exercise: revision main tracks the branch head; moving it updates every variant that tracks it, and only those",
    async () => {
      ws = new Workspace()
      ws.useFleet('docs-gcp-exercise')
      // Not from Nephio: one more variant, pinned to revision 1, which must not follow the branch.
      writeTree(join(ws.dir, 'fleet'), {
        'pinned.yaml': source`
          apiVersion: config.porch.kpt.dev/v1alpha1
          kind: PackageVariant
          metadata:
            name: pinned
          spec:
            upstream:
              repo: blueprints-infra-gcp
              package: nephio-workload-cluster-gke
              revision: 1
            downstream:
              repo: nephio
              package: pinned
            injectors:
            - kind: ConfigMap
              name: gcp-context
        `,
      })
      const repo = join(ws.dir, 'repos', 'blueprints-infra-gcp')
      await createRepo(repo, [
        [
          'nephio-workload-cluster-gke/v1',
          blueprint('nephio-workload-cluster-gke', gkeCluster('1.27'), gcpContextPoint),
        ],
      ])
      const head = async () => (await git(repo, 'rev-parse', 'HEAD')).slice(0, 12)
      const first = await head()

      const created = await ws.render('--image-functions', 'skip')
      expect(created.exitCode).toBe(0)
      const tracking = [
        'nephio/edge01',
        'nephio/edge02',
        'nephio/edge03',
        'nephio/zonal-gke-us-west1-a',
        'nephio/zonal-gke-us-west1-b',
        'nephio/zonal-gke-us-west1-c',
      ]
      expect(created.report.variants.map((v) => [v.path, v.status, v.upstream])).toEqual([
        ...tracking
          .slice(0, 3)
          .map((p) => [p, 'created', `blueprints-infra-gcp/nephio-workload-cluster-gke main@${first}`]),
        ['nephio/pinned', 'created', 'blueprints-infra-gcp/nephio-workload-cluster-gke v1'],
        ...tracking
          .slice(3)
          .map((p) => [p, 'created', `blueprints-infra-gcp/nephio-workload-cluster-gke main@${first}`]),
      ])
      const [context] = ws.yaml('nephio/zonal-gke-us-west1-b/injection-point.yaml')
      expect(context!['data']).toEqual({ location: 'us-west1-b', 'project-id': 'your-nephio-project-id' })
      const [kptfile] = ws.yaml('nephio/edge01/Kptfile')
      expect(kptfile!['upstreamLock']['git']).toMatchObject({
        ref: 'main',
        commit: await git(repo, 'rev-parse', 'HEAD'),
      })
      expect(ws.yaml('nephio/zonal-gke-us-west1-c/Kptfile')[0]!['pipeline']['mutators'][0]['configMap']).toEqual({
        'nephio.org/site-type': 'zonal',
        'nephio.org/region': 'us-west1',
        'nephio.org/zone': 'us-west1-c',
      })

      // The branch does not move: nothing changes.
      const again = await ws.render('--image-functions', 'skip')
      expect(again.report.variants.every((v) => v.status === 'unchanged')).toBe(true)

      // The branch moves: every variant tracking it gets a 3-way update, reporting the old and new commits.
      writeTree(repo, { 'nephio-workload-cluster-gke/resource.yaml': gkeCluster('1.28') })
      await git(repo, 'commit', '-qam', 'GKE 1.28')
      const moved = await ws.render('--image-functions', 'skip')
      expect(moved.exitCode).toBe(0)
      const second = await head()
      expect(moved.report.variants.map((v) => [v.path, v.status, v.upstream, v.previousUpstream])).toEqual([
        ...tracking
          .slice(0, 3)
          .map((p) => [
            p,
            'updated',
            `blueprints-infra-gcp/nephio-workload-cluster-gke main@${second}`,
            `main (${first})`,
          ]),
        ['nephio/pinned', 'unchanged', 'blueprints-infra-gcp/nephio-workload-cluster-gke v1', undefined],
        ...tracking
          .slice(3)
          .map((p) => [
            p,
            'updated',
            `blueprints-infra-gcp/nephio-workload-cluster-gke main@${second}`,
            `main (${first})`,
          ]),
      ])
      expect(readFileSync(join(ws.dir, 'out', 'nephio', 'edge02', 'resource.yaml'), 'utf8')).toContain(
        'minMasterVersion: "1.28"',
      )
      expect(readFileSync(join(ws.dir, 'out', 'nephio', 'pinned', 'resource.yaml'), 'utf8')).toContain(
        'minMasterVersion: "1.27"',
      )
    },
    timeout,
  )
})
