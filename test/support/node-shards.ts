/**
 * The sharded render on a test node, for test/node/render-job.e2e.test.ts and
 * bench/node-shards.bench.ts: deploy/ applied (its controller at no replicas, so the render
 * alone writes to git), a fleet of `targets` WorkloadClusters and one PackageVariantSet spread
 * over 20 site repositories served by a git daemon; a Job made from deploy/'s sharded CronJob,
 * as `kubectl create job --from=cronjob/kpt-variants-render-sharded` makes it; the same render
 * as one process; and the draft trees either wrote.
 */
import { join } from 'node:path'
import { runCliOk } from './cli-run.js'
import { git } from './git-repo.js'
import type { Json } from './kube-client.js'
import { deployForNode, fleetObjects, liveApply, pods } from './node-fleet.js'
import type { NodeFleet, StartedNodeFleet } from './node-fleet.js'
import { schemalessCrd } from './schemaless-crd.js'
import { source } from './source.js'

const namespace = 'kpt-variants'
export const sites = Array.from({ length: 20 }, (_, i) => `site-${String(i).padStart(2, '0')}`)
const regions = ['us-east1', 'us-west1', 'eu-west1']

/** One set over every edge WorkloadCluster: a package per target, named after it, in its site's repository. */
const set = source`
  apiVersion: config.porch.kpt.dev/v1alpha2
  kind: PackageVariantSet
  metadata:
    name: nginx
    namespace: default
  spec:
    upstream:
      repo: blueprints
      package: nginx
      revision: 1
    targets:
    - objectSelector:
        apiVersion: infra.nephio.org/v1alpha1
        kind: WorkloadCluster
        matchLabels:
          nephio.org/site-type: edge
      template:
        downstream:
          repoExpr: target.labels.site
          packageExpr: target.name
        packageContext:
          dataExprs:
          - key: region
            valueExpr: target.labels.region
        injectors:
        - kind: ConfigMap
          nameExpr: target.labels.region + '-endpoints'
`

const workloadCluster = (i: number): Json => ({
  apiVersion: 'infra.nephio.org/v1alpha1',
  kind: 'WorkloadCluster',
  metadata: {
    name: `cluster-${String(i).padStart(5, '0')}`,
    namespace: 'default',
    labels: { 'nephio.org/site-type': 'edge', region: regions[i % 3]!, site: sites[i % sites.length]! },
  },
  spec: { clusterName: `cluster-${i}` },
})

export interface ShardFleet extends StartedNodeFleet {
  targets: number
}

/**
 * `node` started with the site repositories, deploy/ applied with its controller at no replicas, and the fleet
 * of `targets` in the cluster and git. `node.stop()` ends it.
 */
export async function setUpShardFleet(node: NodeFleet, targets: number): Promise<ShardFleet> {
  const { cluster, daemon, dir } = await node.start('kpt-variants-node-shards-', sites)
  // As deploy/README.md says for the CronJobs, with no controller: applied at none rather than scaled down, so
  // that no pod is started only to be stopped.
  const run = await liveApply(cluster, dir, deployForNode(dir, 0))
  if (run.exitCode !== 0) throw new Error(`kpt live apply: ${run.stderr}`)
  const controllers = await pods(cluster, namespace, { 'app.kubernetes.io/name': 'kpt-variants-controller' })
  if (controllers.length > 0) throw new Error(`controller pods with no replicas: ${controllers.length}`)
  await cluster.api.apply([schemalessCrd('infra.nephio.org', 'WorkloadCluster')])
  const fleet = fleetObjects(
    daemon,
    sites.map((name) => ({ name, region: 'us-east1' })),
    { 'nginx-set.yaml': set },
  )
  await cluster.api.apply(fleet.filter((o) => o['kind'] !== 'WorkloadCluster'))
  await cluster.api.apply(Array.from({ length: targets }, (_, i) => workloadCluster(i)))
  return { cluster, daemon, dir, targets }
}

/** Every draft branch of every site repository with its tree: what a render wrote. */
export async function draftTrees(fleet: ShardFleet): Promise<Record<string, string>> {
  const trees: Record<string, string> = {}
  for (const site of sites) {
    const out = await git(
      join(fleet.dir, 'repos', `${site}.git`),
      'for-each-ref',
      '--format=%(refname:short) %(tree)',
      'refs/heads/drafts/',
    )
    for (const line of out.split('\n').filter(Boolean)) {
      const [ref, tree] = line.split(' ')
      trees[`${site} ${ref}`] = tree!
    }
  }
  return trees
}

/** Deletes every draft branch: the repositories as before any render. */
export async function removeDrafts(fleet: ShardFleet): Promise<void> {
  for (const site of sites) {
    const repo = join(fleet.dir, 'repos', `${site}.git`)
    const refs = (await git(repo, 'for-each-ref', '--format=%(refname)', 'refs/heads/drafts/')).split('\n')
    for (const ref of refs.filter(Boolean)) await git(repo, 'update-ref', '-d', ref)
  }
}

/** `render --cluster --git` as one process on this machine, as the admin, with a cache of its own. */
export async function renderOneProcess(fleet: ShardFleet, cache: string): Promise<void> {
  const kubeconfig = join(fleet.dir, 'admin.kubeconfig')
  fleet.cluster.api.writeKubeconfig(kubeconfig)
  await runCliOk(fleet.dir, ['render', '--cluster', '--git', '--no-progress'], {
    env: { KUBECONFIG: kubeconfig, XDG_CACHE_HOME: cache },
  })
}

/** A Job from the sharded CronJob's template, run to its end: the Job as it ended and its pods. */
export async function runShardJob(fleet: ShardFleet, name: string): Promise<{ job: Json; pods: Json[] }> {
  const { api } = fleet.cluster
  const cronJob = await api.ok('GET', `/apis/batch/v1/namespaces/${namespace}/cronjobs/kpt-variants-render-sharded`)
  await api.ok('POST', `/apis/batch/v1/namespaces/${namespace}/jobs`, {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace, annotations: { 'cronjob.kubernetes.io/instantiate': 'manual' } },
    spec: cronJob['spec']['jobTemplate']['spec'],
  })
  const job = await api.waitFor(
    { apiVersion: 'batch/v1', kind: 'Job', metadata: { name, namespace } },
    (j) =>
      (j['status']?.['conditions'] ?? []).some(
        (c: Json) => ['Complete', 'Failed'].includes(c['type']) && c['status'] === 'True',
      ),
    600_000,
  )
  return { job, pods: await pods(fleet.cluster, namespace, { 'batch.kubernetes.io/job-name': name }) }
}

/** Each pod of a Job as `<completion index> <phase>`, sorted. */
export const shardPhases = (found: Json[]) =>
  found
    .map((p) => `${p['metadata']['annotations']['batch.kubernetes.io/job-completion-index']} ${p['status']['phase']}`)
    .sort()
