/**
 * What the node suites (test/node/) share: deploy/ made to run on the test node (the locally built
 * image, requests a 2-CPU node can schedule, the lease timings of the tests), `kpt live apply` of it,
 * the fleet's repositories behind a git daemon the pods reach, and reading pods.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import { parseValue } from '../../functions/krm/yaml/index.js'
import { repoRoot } from '../e2e/runner.js'
import { installedEngine } from '../../scripts/image-names.js'
import { createBlueprints, fleetFiles, repository } from './fleet.js'
import type { Cluster } from './fleet.js'
import { git } from './git-repo.js'
import { GitDaemon } from './git-daemon.js'
import type { Json } from './kube-client.js'
import { NodeCluster, until } from './node-cluster.js'
import { buildNodeImages, importImages, orchestratorImage } from './node-images.js'
import { pauseImage } from './node-cluster.js'

export const documents = (text: string) => parseValue(text, { stream: true }) as Json[]

/** Builds the images and starts the node with them imported. */
export async function startNode(): Promise<NodeCluster> {
  const engine = installedEngine()!
  await buildNodeImages(engine)
  return NodeCluster.start({
    importImages: (cluster) => importImages(engine, cluster, [orchestratorImage, pauseImage]),
  })
}

/** What a node suite runs on: the node, a temporary directory, and the fleet's repositories in it behind a git daemon. */
export interface StartedNodeFleet {
  cluster: NodeCluster
  daemon: GitDaemon
  dir: string
}

/**
 * The set-up and tear-down of a node suite (and of the node benchmark): `start` before the tests, `stop`
 * after them. Each part is kept as soon as it is started, so `stop` ends whatever a failed start got to.
 */
export class NodeFleet {
  cluster: NodeCluster | undefined
  daemon: GitDaemon | undefined
  dir: string | undefined

  /** Starts the node (startNode), makes a temporary directory `<prefix>…` and serves `repos` from it (fleetRepositories). */
  async start(prefix: string, repos: string[]): Promise<StartedNodeFleet> {
    const cluster = (this.cluster = await startNode())
    const dir = (this.dir = mkdtempSync(join(tmpdir(), prefix)))
    const daemon = (this.daemon = await fleetRepositories(cluster, dir, repos))
    return { cluster, daemon, dir }
  }

  /** Stops the node and the git daemon and removes the directory, as far as they were started. */
  async stop(): Promise<void> {
    await this.cluster?.stop()
    await this.daemon?.stop()
    if (this.dir) rmSync(this.dir, { recursive: true, force: true })
  }
}

/**
 * deploy/ copied to `dir`, for this node: the image built here (never pulled), requests of 100m CPU and
 * 128 MiB (deploy/ asks a whole CPU per pod; the test node has two), and the controller's lease timings
 * shortened to `--lease-duration 6s`. `controllerReplicas` replaces deploy/'s two (0: the CronJob alone writes).
 */
export function deployForNode(dir: string, controllerReplicas?: number): string {
  const copy = join(dir, 'deploy')
  cpSync(join(repoRoot, 'deploy'), copy, { recursive: true })
  for (const file of readdirSync(copy).filter((f) => f.endsWith('.yaml'))) {
    const path = join(copy, file)
    const text = readFileSync(path, 'utf8')
      .replace(
        /^(\s+)image: ghcr\.io\/kpt-variants\/kpt-variants:.*$/gm,
        `$1image: ${orchestratorImage}\n$1imagePullPolicy: Never`,
      )
      .replace(/requests:\n(\s+)cpu: "1"\n\s+memory: 1Gi/g, 'requests:\n$1cpu: 100m\n$1memory: 128Mi')
      .replace(
        /^(\s+)- --resync\n/m,
        '$1- --lease-duration\n$1- 6s\n$1- --renew-deadline\n$1- 4s\n$1- --retry-period\n$1- 1s\n$1- --resync\n',
      )
      .replace(/^(\s+)replicas: 2$/m, `$1replicas: ${controllerReplicas ?? 2}`)
    writeFileSync(path, text)
  }
  return copy
}

/** `kpt live init` and `kpt live apply` of `pkg` as the admin, waiting for every object to reconcile. */
export async function liveApply(cluster: NodeCluster, dir: string, pkg: string) {
  const kubeconfig = join(dir, 'admin.kubeconfig')
  cluster.api.writeKubeconfig(kubeconfig)
  const env = { ...process.env, KUBECONFIG: kubeconfig }
  await execa('kpt', ['live', 'init', pkg], { env })
  return execa('kpt', ['live', 'apply', pkg, '--reconcile-timeout=3m'], { env, reject: false })
}

/** The fleet's repositories under `dir/repos` (blueprints, and a bare one per target), served to the pods. */
export async function fleetRepositories(cluster: NodeCluster, dir: string, repos: string[]): Promise<GitDaemon> {
  const base = join(dir, 'repos')
  await createBlueprints(join(base, 'blueprints'))
  for (const name of repos) await git(dir, 'init', '-q', '--bare', '-b', 'main', `repos/${name}.git`)
  return GitDaemon.start(base, cluster.address, 'blueprints')
}

/** The fleet's objects for the cluster, its Repositories pointing at the git daemon. */
export function fleetObjects(daemon: GitDaemon, clusters: Cluster[], extra: Record<string, string> = {}): Json[] {
  const files = fleetFiles({ clusters, extra })
  return Object.values(files)
    .flatMap(documents)
    .map((object) => (object['kind'] === 'Repository' ? pointAt(daemon, object) : object))
}

export function repositoryObject(daemon: GitDaemon, name: string): Json {
  return pointAt(daemon, documents(repository(name, true))[0]!)
}

function pointAt(daemon: GitDaemon, repo: Json): Json {
  const name = repo['metadata']['name'] as string
  return {
    ...repo,
    spec: {
      ...repo['spec'],
      git: { ...repo['spec']['git'], repo: daemon.url(name === 'blueprints' ? 'blueprints' : `${name}.git`) },
    },
  }
}

/** The pods of `namespace` whose labels include `labels`. */
export async function pods(cluster: NodeCluster, namespace: string, labels: Record<string, string>): Promise<Json[]> {
  const selector = encodeURIComponent(
    Object.entries(labels)
      .map(([k, v]) => `${k}=${v}`)
      .join(','),
  )
  return (await cluster.api.ok('GET', `/api/v1/namespaces/${namespace}/pods?labelSelector=${selector}`))[
    'items'
  ] as Json[]
}

export const isReady = (pod: Json) =>
  (pod['status']?.['conditions'] ?? []).some((c: Json) => c['type'] === 'Ready' && c['status'] === 'True')

/** Waits until `check` holds for the pods `pods()` lists; resolves with them. */
export async function waitForPods(
  cluster: NodeCluster,
  namespace: string,
  labels: Record<string, string>,
  check: (pods: Json[]) => boolean,
  what: string,
  timeout = 120_000,
): Promise<Json[]> {
  let last: Json[] = []
  await until(
    async () => check((last = await pods(cluster, namespace, labels))),
    () => `${what} (pods: ${last.map(describePod).join(', ')})`,
    timeout,
  )
  return last
}

/** A pod for a failure message: its name, phase, whether it is being deleted, and its containers' states. */
function describePod(pod: Json): string {
  const deleting = pod['metadata']['deletionTimestamp'] ? ` deleted at ${pod['metadata']['deletionTimestamp']}` : ''
  const containers = ((pod['status']?.['containerStatuses'] ?? []) as Json[]).map((c) => {
    const [state, detail] = Object.entries((c['state'] ?? {}) as Json)[0] ?? ['unknown', {}]
    return `${c['name']} ${state}${detail?.['reason'] ? ` ${detail['reason']}` : ''} restarts ${c['restartCount']}`
  })
  return `${pod['metadata']['name']} ${pod['status']?.['phase']}${deleting} [${containers.join('; ')}]`
}

/** The branches of a bare repository under `dir/repos` whose names start with `prefix`. */
export async function branches(dir: string, repo: string, prefix = 'refs/heads/drafts/'): Promise<string[]> {
  return (await git(join(dir, 'repos', `${repo}.git`), 'for-each-ref', '--format=%(refname:short)', prefix))
    .split('\n')
    .filter(Boolean)
}
