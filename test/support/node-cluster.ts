/**
 * A real single-node Kubernetes cluster for the e2e tests of test/node/: the API server of
 * kube-apiserver.ts (with the Node authorizer and NodeRestriction, advertising this machine's
 * address so that pods reach it through the `kubernetes` Service), kube-controller-manager,
 * kube-scheduler, containerd with Debian's runc, the CNI bridge, kubelet and kube-proxy, all
 * built by scripts/build-cluster.sh and run from a temporary directory. No registry is reached:
 * images come from the local container engine (podman), saved and imported into containerd,
 * the pod sandbox's "pause" image included (node-images.ts). `stop()` leaves nothing behind:
 * no process, mount, network namespace, bridge, iptables chain or cgroup of the cluster.
 *
 * This machine's constraints, each named where it is handled: cgroup v1 (the kubelet's
 * failCgroupV1 and the cgroupfs driver) and a root without CAP_SYS_RESOURCE (containerd's
 * restrict_oom_score_adj).
 */
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { networkInterfaces } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import { binDir, buildCommand, KubeApiServer } from './kube-apiserver.js'
import type { Json } from './kube-client.js'
import { freePorts } from './ports.js'
import { hostState, mkdtempPrefix, removeLeftovers, removeStaleNodes } from './node-host-state.js'
import type { HostState } from './node-host-state.js'

/** The programs a node needs beyond the API server's. */
const nodePrograms = ['kubelet', 'kube-controller-manager', 'kube-scheduler', 'kube-proxy', 'containerd', 'ctr']
export const podSubnet = '10.244.0.0/24'
export const bridgeName = 'kptv0'
const nodeName = 'kpt-variants-node'
const runc = '/usr/sbin/runc'

/** The program that killed the whole process group on a failed start, so no component outlives its test. */
const running = new Set<ChildProcess>()
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL')
})

/** What a node lacks on this machine (its programs, root, runc), in words; empty when it can run one. */
export function nodeClusterMissing(): string {
  const missing = [...nodePrograms.map((p) => join(binDir, p)), join(binDir, 'cni', 'bridge'), runc].filter(
    (file) => !existsSync(file),
  )
  return [
    ...(missing.length ? [`missing ${missing.join(', ')} (run \`${buildCommand}\`; runc: apt-get install runc)`] : []),
    ...(process.getuid?.() !== 0 ? ['a node needs root (mounts, network namespaces, iptables, cgroups)'] : []),
  ].join('; ')
}

/** This machine's first non-loopback IPv4 address: where pods reach the API server and the tests' git server. */
export function hostAddress(): string {
  for (const addresses of Object.values(networkInterfaces()))
    for (const a of addresses ?? []) if (a.family === 'IPv4' && !a.internal) return a.address
  throw new Error('no non-loopback IPv4 address: pods could not reach the API server')
}

type Component = 'containerd' | 'kube-controller-manager' | 'kube-scheduler' | 'kubelet' | 'kube-proxy'

export class NodeCluster {
  readonly nodeName = nodeName
  #children = new Map<Component, ChildProcess>()
  #args = new Map<Component, string[]>()

  private constructor(
    readonly api: KubeApiServer,
    readonly dir: string,
    readonly address: string,
    readonly before: HostState,
  ) {}

  get containerdSocket(): string {
    return join(this.dir, 'containerd', 'containerd.sock')
  }

  /**
   * Starts the cluster and resolves once the node is Ready and the `default` ServiceAccount
   * exists (pods are refused before it does). `images` are imported into containerd first
   * (engine image names, e.g. localhost/kpt-variants/kpt-variants:0.1.0).
   */
  static async start(options: { importImages: (cluster: NodeCluster) => Promise<void> }): Promise<NodeCluster> {
    await removeStaleNodes(binDir, bridgeName)
    const before = await hostState()
    const address = hostAddress()
    const users = {
      kubelet: { token: token(), user: `system:node:${nodeName}`, groups: ['system:nodes'] },
      controllerManager: { token: token(), user: 'system:kube-controller-manager', groups: [] },
      scheduler: { token: token(), user: 'system:kube-scheduler', groups: [] },
      proxy: { token: token(), user: 'system:kube-proxy', groups: [] },
    }
    const api = await KubeApiServer.start({
      address,
      authorization: 'Node,RBAC',
      users: Object.values(users),
      args: ['--enable-admission-plugins=NodeRestriction', '--kubelet-preferred-address-types=InternalIP,Hostname'],
    })
    const cluster = new NodeCluster(api, mkdtempSync(mkdtempPrefix), address, before)
    try {
      const kubeconfig = (name: string, user: { token: string }) => {
        const file = join(cluster.dir, `${name}.kubeconfig`)
        api.writeKubeconfig(file, { token: user.token })
        return file
      }
      cluster.#startControlPlane(
        kubeconfig('controller-manager', users.controllerManager),
        kubeconfig('scheduler', users.scheduler),
      )
      await cluster.#startContainerd()
      await options.importImages(cluster)
      await cluster.#startKubelet(kubeconfig('kubelet', users.kubelet))
      await cluster.#startProxy(kubeconfig('proxy', users.proxy))
      await api
        .waitFor(
          { apiVersion: 'v1', kind: 'Node', metadata: { name: nodeName } },
          (node) =>
            (node['status']?.['conditions'] ?? []).some((c: Json) => c['type'] === 'Ready' && c['status'] === 'True'),
          60_000,
        )
        .catch((err: Error) => {
          throw new Error(`the node not Ready: ${err.message}\nthe kubelet's log:\n${cluster.log('kubelet', 40)}`)
        })
      await cluster.waitForServiceAccount('default', 'default')
      return cluster
    } catch (err) {
      await cluster.stop().catch(() => undefined)
      throw err
    }
  }

  #startControlPlane(controllerManager: string, scheduler: string): void {
    const certs = join(this.api.dir, 'certs')
    this.#spawn('kube-controller-manager', [
      `--kubeconfig=${controllerManager}`,
      '--leader-elect=false',
      '--secure-port=0',
      // Each controller acts as its own service account, as in a cluster set up by kubeadm.
      '--use-service-account-credentials=true',
      `--service-account-private-key-file=${join(this.api.dir, 'sa.key')}`,
      // Published to every namespace as kube-root-ca.crt: how a pod's client trusts the API server.
      `--root-ca-file=${join(certs, 'apiserver.crt')}`,
      '--allocate-node-cidrs=false',
    ])
    this.#spawn('kube-scheduler', [`--kubeconfig=${scheduler}`, '--leader-elect=false', '--secure-port=0'])
  }

  async #startContainerd(): Promise<void> {
    const dir = join(this.dir, 'containerd')
    const cniConf = join(this.dir, 'cni')
    mkdirSync(dir, { recursive: true })
    mkdirSync(cniConf, { recursive: true })
    writeFileSync(
      join(cniConf, '10-kpt-variants.conflist'),
      JSON.stringify({
        cniVersion: '1.0.0',
        name: 'kpt-variants-test',
        plugins: [
          {
            type: 'bridge',
            bridge: bridgeName,
            isGateway: true,
            ipMasq: true,
            hairpinMode: true,
            ipam: {
              type: 'host-local',
              ranges: [[{ subnet: podSubnet }]],
              routes: [{ dst: '0.0.0.0/0' }],
              dataDir: join(this.dir, 'cni-ipam'),
            },
          },
          { type: 'portmap', capabilities: { portMappings: true } },
        ],
      }),
    )
    const toml = (s: string) => JSON.stringify(s)
    writeFileSync(
      join(dir, 'config.toml'),
      [
        'version = 3',
        `root = ${toml(join(dir, 'root'))}`,
        `state = ${toml(join(dir, 'state'))}`,
        `disabled_plugins = ["io.containerd.nri.v1.nri"]`,
        '[grpc]',
        `address = ${toml(this.containerdSocket)}`,
        "[plugins.'io.containerd.cri.v1.images']",
        "snapshotter = 'overlayfs'",
        "[plugins.'io.containerd.cri.v1.images'.pinned_images]",
        `sandbox = ${toml(pauseImage)}`,
        "[plugins.'io.containerd.cri.v1.runtime']",
        // This kernel's root lacks CAP_SYS_RESOURCE: without it every sandbox fails to lower its OOM score.
        'restrict_oom_score_adj = true',
        "[plugins.'io.containerd.cri.v1.runtime'.cni]",
        `bin_dirs = [${toml(join(binDir, 'cni'))}]`,
        `conf_dir = ${toml(cniConf)}`,
        "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]",
        "runtime_type = 'io.containerd.runc.v2'",
        "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]",
        `BinaryName = ${toml(runc)}`,
        'SystemdCgroup = false',
        "[plugins.'io.containerd.grpc.v1.cri']",
        "stream_server_address = '127.0.0.1'",
        '',
      ].join('\n'),
    )
    this.#spawn('containerd', ['--config', join(dir, 'config.toml')])
    await until(
      () =>
        this.ctr(['version']).then(
          () => true,
          () => false,
        ),
      'containerd did not answer',
      30_000,
    )
  }

  async #startKubelet(kubeconfig: string): Promise<void> {
    const [port] = await freePorts(1)
    const root = join(this.dir, 'kubelet')
    mkdirSync(root, { recursive: true })
    const config = {
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      // This machine's cgroups are v1, which the kubelet refuses unless told otherwise.
      failCgroupV1: false,
      cgroupDriver: 'cgroupfs',
      containerRuntimeEndpoint: `unix://${this.containerdSocket}`,
      address: this.address,
      port,
      readOnlyPort: 0,
      healthzPort: 0,
      authentication: { anonymous: { enabled: false }, webhook: { enabled: true } },
      authorization: { mode: 'Webhook' },
      failSwapOn: false,
      clusterDomain: 'cluster.local',
      podLogsDir: join(this.dir, 'pod-logs'),
      volumePluginDir: join(this.dir, 'volume-plugins'),
      // The images were imported, not pulled: they must never be collected.
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '1%', 'imagefs.available': '1%' },
      serializeImagePulls: false,
    }
    writeFileSync(join(this.dir, 'kubelet.yaml'), JSON.stringify(config, null, 2))
    this.#spawn('kubelet', [
      `--config=${join(this.dir, 'kubelet.yaml')}`,
      `--kubeconfig=${kubeconfig}`,
      `--root-dir=${root}`,
      `--cert-dir=${join(this.dir, 'kubelet-pki')}`,
      `--hostname-override=${nodeName}`,
      `--node-ip=${this.address}`,
    ])
  }

  async #startProxy(kubeconfig: string): Promise<void> {
    const [healthz, metrics] = await freePorts(2)
    this.#spawn('kube-proxy', [
      ...this.#proxyArgs(kubeconfig),
      `--healthz-bind-address=127.0.0.1:${healthz}`,
      `--metrics-bind-address=127.0.0.1:${metrics}`,
    ])
  }

  #proxyArgs(kubeconfig: string): string[] {
    return [
      `--kubeconfig=${kubeconfig}`,
      `--hostname-override=${nodeName}`,
      '--proxy-mode=iptables',
      `--cluster-cidr=${podSubnet}`,
      // Leave the machine's conntrack table size alone.
      '--conntrack-max-per-core=0',
    ]
  }

  /** `ctr` against this node's containerd, in the namespace the kubelet's images and containers live in. */
  ctr(args: string[]): Promise<string> {
    return execa(join(binDir, 'ctr'), ['--address', this.containerdSocket, '--namespace', 'k8s.io', ...args]).then(
      (r) => r.stdout,
    )
  }

  /** Resolves once the ServiceAccount exists (the controller-manager makes `default` in every namespace). */
  async waitForServiceAccount(namespace: string, name: string): Promise<void> {
    await until(
      async () =>
        (await this.api.request('GET', `/api/v1/namespaces/${namespace}/serviceaccounts/${name}`)).status === 200,
      `ServiceAccount ${namespace}/${name} not made`,
      30_000,
    )
  }

  /** The logs of the containers of pods in `namespace` whose names start with `prefix`, the last `lines` lines of each. */
  podLogs(namespace: string, prefix = '', lines = 40): string {
    const root = join(this.dir, 'pod-logs')
    const out: string[] = []
    for (const pod of existsSync(root) ? readdirSync(root).sort() : []) {
      if (!pod.startsWith(`${namespace}_${prefix}`)) continue
      for (const container of readdirSync(join(root, pod)))
        for (const file of readdirSync(join(root, pod, container)).sort()) {
          const text = readFileSync(join(root, pod, container, file), 'utf8')
            .trimEnd()
            .split('\n')
          out.push(`--- ${pod}/${container}/${file}`, ...text.slice(-lines))
        }
    }
    return out.join('\n')
  }

  /** A component's log, the last `lines` lines. */
  log(component: Component, lines = 30): string {
    const text = readFileSync(join(this.dir, `${component}.log`), 'utf8')
      .trimEnd()
      .split('\n')
    return text.slice(-lines).join('\n')
  }

  #spawn(name: Component, args: string[]): ChildProcess {
    this.#args.set(name, args)
    const log = openSync(join(this.dir, `${name}.log`), 'a')
    const child = spawn(join(binDir, name), args, {
      stdio: ['ignore', log, log],
      cwd: this.dir,
      // containerd finds its shim and runc on PATH.
      env: { ...process.env, PATH: `${binDir}:${process.env['PATH']}` },
    })
    closeSync(log)
    this.#children.set(name, child)
    running.add(child)
    child.once('exit', () => running.delete(child))
    return child
  }

  /**
   * Stops the cluster and leaves nothing behind. The controller-manager goes first, so nothing
   * recreates the pods the kubelet is then asked to remove (each sandbox's network is torn down
   * through CNI as a pod ends); then the node, its proxy rules (kube-proxy --cleanup) and
   * containerd, the API server last; what a crash could still leave (shims, mounts, network
   * namespaces, the bridge, iptables chains, cgroups) is removed by node-host-state.ts.
   */
  async stop(): Promise<void> {
    await stopChild(this.#children.get('kube-controller-manager'))
    await this.#removePods().catch((err: Error) =>
      console.warn(`node cluster: pods not removed cleanly: ${err.message}`),
    )
    for (const name of ['kube-scheduler', 'kubelet', 'kube-proxy'] as const) await stopChild(this.#children.get(name))
    const proxyArgs = this.#args.get('kube-proxy')
    if (proxyArgs) await execa(join(binDir, 'kube-proxy'), ['--cleanup', ...proxyArgs.slice(0, 1)], { reject: false })
    await stopChild(this.#children.get('containerd'))
    await removeLeftovers(this.dir, this.before)
    await this.api.stop()
    rmSync(this.dir, { recursive: true, force: true })
  }

  async #removePods(): Promise<void> {
    const pods = (await this.api.ok('GET', '/api/v1/pods'))['items'] as Json[]
    for (const pod of pods)
      await this.api.request(
        'DELETE',
        `/api/v1/namespaces/${pod['metadata']['namespace']}/pods/${pod['metadata']['name']}?gracePeriodSeconds=1`,
      )
    await until(
      async () => ((await this.api.ok('GET', '/api/v1/pods'))['items'] as Json[]).length === 0,
      'pods still there',
      60_000,
    )
  }
}

/** The sandbox image the kubelet's pods start with (node-images.ts builds it from this machine's Node). */
export const pauseImage = 'localhost/kpt-variants/pause:1'

function token(): string {
  return randomBytes(16).toString('hex')
}

async function stopChild(child: ChildProcess | undefined, timeout = 15_000): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), timeout)
  await exited
  clearTimeout(timer)
}

/** Polls `check` every 100 ms until it holds; rejects with `what` (read then) after `timeout`. */
export async function until(
  check: () => Promise<boolean>,
  what: string | (() => string),
  timeout: number,
): Promise<void> {
  const deadline = Date.now() + timeout
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${typeof what === 'string' ? what : what()} after ${timeout / 1000} s`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
