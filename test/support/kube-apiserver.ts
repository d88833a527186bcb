/**
 * A real Kubernetes API server for the e2e tests: etcd and kube-apiserver,
 * built by scripts/build-cluster.sh into test/apiserver/bin (see
 * docs/testing.md), started on free loopback ports in a temporary directory.
 * The server generates its own serving certificate (its CA goes into the
 * kubeconfigs), authorizes with RBAC, signs service-account tokens with a key
 * made here (so the TokenRequest API issues real tokens), and knows one
 * admin token (group system:masters). Every request is written to an audit
 * log, so the tests can see what a run asked for. The requests a test makes
 * of it (objects applied, read, watched; tokens; kubeconfigs) are its
 * client's, KubeClient (kube-client.ts). Without the binaries the suites that
 * need them skip with a warning naming the build command; in CI (CI=true)
 * they fail instead.
 */
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, closeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { repositoryRoot } from './root.js'
import { freePorts } from './ports.js'
import { KubeClient } from './kube-client.js'

export const binDir = join(repositoryRoot(), 'test', 'apiserver', 'bin')
export const buildCommand = 'bash scripts/build-cluster.sh'

/** Whether kube-apiserver and etcd are built. */
export function kubeApiServerBuilt(): boolean {
  return existsSync(join(binDir, 'kube-apiserver')) && existsSync(join(binDir, 'etcd'))
}

/** Why a suite that needs the server is skipped (test/support/requires.ts), or fails in CI. */
export const kubeApiServerMissing = `the e2e tests against a real Kubernetes API server need kube-apiserver and etcd built in ${binDir}: run \`${buildCommand}\` (needs Go)`

/** One request as the audit log records it. */
export interface AuditEvent {
  verb: string
  requestURI: string
  user: { username: string }
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string; apiGroup?: string }
  responseStatus?: { code: number }
}

const startTimeout = 60_000
const stopTimeout = 15_000
const auditPolicy =
  'apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n'

/** Processes still running, killed if the test process exits without stopping them (a failed afterAll). */
const running = new Set<ChildProcess>()
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL')
})

/** The two processes of a server, by name. */
export type ServerProcess = 'etcd' | 'kube-apiserver'

/** A user the server knows by a static token (test/support/node-cluster.ts gives one to each component). */
export interface TokenUser {
  token: string
  user: string
  groups: string[]
}

export interface KubeApiServerOptions {
  /**
   * The address the server binds and advertises (default 127.0.0.1). A node's pods reach the
   * server through the `kubernetes` Service, whose endpoint is this address: it may not be loopback.
   */
  address?: string
  /** Default `RBAC`; a cluster with a kubelet adds the Node authorizer. */
  authorization?: string
  /** Users beside the admin. */
  users?: TokenUser[]
  /** More flags (each `--name=value`). */
  args?: string[]
}

/** The server: its two processes and its files (keys, users, audit log), and a client of it (KubeClient). */
export class KubeApiServer extends KubeClient {
  readonly adminToken = randomBytes(16).toString('hex')
  #processes: ChildProcess[] = []
  #names = new Map<ChildProcess, string>()
  /** The arguments each process was started with, to start it again on the same ports and data. */
  #args = new Map<ServerProcess, string[]>()
  #port = 0
  #ca = ''

  private constructor(
    readonly dir: string,
    readonly options: KubeApiServerOptions,
  ) {
    super()
  }

  /** Starts etcd and kube-apiserver, and resolves once /readyz says ok. */
  static async start(options: KubeApiServerOptions = {}): Promise<KubeApiServer> {
    const server = new KubeApiServer(mkdtempSync(join(tmpdir(), 'kpt-variants-kube-apiserver-')), options)
    // A port taken between choosing and binding it makes a process exit at once: then again, with other ports.
    for (let attempt = 1; ; attempt++) {
      try {
        await server.#start()
        return server
      } catch (err) {
        await server.stop({ keepDir: true })
        if (attempt === 3 || !/address already in use/.test((err as Error).message)) {
          rmSync(server.dir, { recursive: true, force: true })
          throw err
        }
      }
    }
  }

  get address(): string {
    return this.options.address ?? '127.0.0.1'
  }

  get url(): string {
    return `https://${this.address}:${this.#port}`
  }

  /** The PEM of the CA the server made for its serving certificate. */
  get ca(): string {
    return this.#ca
  }

  async #start(): Promise<void> {
    const [etcdPort, peerPort, port] = await freePorts(3)
    this.#port = port!
    const data = join(this.dir, `etcd-${etcdPort}`)
    const { privateKey, publicKey } = generateKeyPairSync('ec', {
      namedCurve: 'prime256v1',
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    })
    writeFileSync(join(this.dir, 'sa.key'), privateKey, { mode: 0o600 })
    writeFileSync(join(this.dir, 'sa.pub'), publicKey)
    const users = [
      { token: this.adminToken, user: 'kpt-variants-test-admin', groups: ['system:masters'] },
      ...(this.options.users ?? []),
    ]
    const tokens = users.map((u) => `${u.token},${u.user},${u.user},"${u.groups.join(',')}"\n`).join('')
    writeFileSync(join(this.dir, 'tokens.csv'), tokens, { mode: 0o600 })
    writeFileSync(join(this.dir, 'audit-policy.yaml'), auditPolicy)
    writeFileSync(join(this.dir, 'audit.log'), '')

    const etcdUrl = `http://127.0.0.1:${etcdPort}`
    const peerUrl = `http://127.0.0.1:${peerPort}`
    const etcd = this.#spawn('etcd', [
      ...['--name', 'test', '--data-dir', data, '--log-level', 'warn'],
      ...['--listen-client-urls', etcdUrl, '--advertise-client-urls', etcdUrl],
      ...[
        '--listen-peer-urls',
        peerUrl,
        '--initial-advertise-peer-urls',
        peerUrl,
        '--initial-cluster',
        `test=${peerUrl}`,
      ],
      // A test's data need not survive a crash.
      '--unsafe-no-fsync',
    ])
    const apiserver = this.#spawn('kube-apiserver', [
      `--etcd-servers=${etcdUrl}`,
      ...[`--bind-address=${this.address}`, `--advertise-address=${this.address}`, `--secure-port=${port}`],
      // The `kubernetes` Service's endpoints may not be a loopback address: without a node nothing needs them.
      ...(this.address.startsWith('127.') ? ['--endpoint-reconciler-type=none'] : []),
      // No certificate given: the server makes a self-signed one (and its CA) here.
      `--cert-dir=${join(this.dir, 'certs')}`,
      `--authorization-mode=${this.options.authorization ?? 'RBAC'}`,
      `--token-auth-file=${join(this.dir, 'tokens.csv')}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${join(this.dir, 'sa.pub')}`,
      `--service-account-signing-key-file=${join(this.dir, 'sa.key')}`,
      '--service-cluster-ip-range=10.96.0.0/24',
      `--audit-policy-file=${join(this.dir, 'audit-policy.yaml')}`,
      `--audit-log-path=${join(this.dir, 'audit.log')}`,
      ...(this.options.args ?? []),
    ])
    await this.#ready([etcd, apiserver])
    this.#ca = readFileSync(join(this.dir, 'certs', 'apiserver.crt'), 'utf8')
  }

  /** Resolves once /readyz says ok; rejects when one of `children` exits first, or after the start timeout. */
  async #ready(children: ChildProcess[]): Promise<void> {
    const exited = Promise.race(
      children.map(
        (child) => new Promise<never>((_, reject) => child.once('exit', () => reject(this.#exitError(child)))),
      ),
    )
    exited.catch(() => undefined)
    const deadline = Date.now() + startTimeout
    for (;;) {
      const ready = await Promise.race([this.#readyz(), exited])
      if (ready) break
      if (Date.now() > deadline)
        throw new Error(
          `kube-apiserver not ready after ${startTimeout / 1000} s; its log: ${join(this.dir, 'kube-apiserver.log')}\n${this.#logTail('kube-apiserver')}`,
        )
      await Promise.race([new Promise((resolve) => setTimeout(resolve, 100)), exited])
    }
  }

  /**
   * Stops one of the two processes (`signal`, default SIGTERM; SIGKILL after
   * 15 s), as an outage: the other goes on. `startProcess` starts it again, on the same ports,
   * with the same data and certificates.
   */
  async stopProcess(name: ServerProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.#processes.find(
      (c) => this.#names.get(c) === name && c.exitCode === null && c.signalCode === null,
    )
    if (!child) throw new Error(`${name} is not running`)
    await stopChild(child, signal)
    this.#processes = this.#processes.filter((c) => c !== child)
  }

  /** Starts a process `stopProcess` stopped, and resolves once the server is ready again (/readyz). */
  async startProcess(name: ServerProcess): Promise<void> {
    this.#spawn(name, this.#args.get(name)!)
    await this.#ready(this.#processes)
  }

  #spawn(name: ServerProcess, args: string[]): ChildProcess {
    this.#args.set(name, args)
    const log = openSync(join(this.dir, `${name}.log`), 'a')
    const child = spawn(join(binDir, name), args, { stdio: ['ignore', log, log], cwd: this.dir })
    closeSync(log)
    this.#names.set(child, name)
    this.#processes.push(child)
    running.add(child)
    child.once('exit', () => running.delete(child))
    return child
  }

  #exitError(child: ChildProcess): Error {
    const name = this.#names.get(child)!
    return new Error(
      `${name} exited (${child.exitCode ?? child.signalCode}) before kube-apiserver was ready:\n${this.#logTail(name)}`,
    )
  }

  #logTail(name: string): string {
    const lines = readFileSync(join(this.dir, `${name}.log`), 'utf8')
      .trimEnd()
      .split('\n')
    return lines.slice(-15).join('\n')
  }

  async #readyz(): Promise<boolean> {
    try {
      const response = await this.request('GET', '/readyz', undefined, { insecure: true })
      return response.status === 200
    } catch {
      return false
    }
  }

  /** Stops kube-apiserver, then etcd (SIGTERM, SIGKILL after 15 s), and removes the directory. */
  async stop(options: { keepDir?: boolean } = {}): Promise<void> {
    const apiserverFirst = (c: ChildProcess) => (this.#names.get(c) === 'kube-apiserver' ? 0 : 1)
    for (const child of this.#processes.sort((a, b) => apiserverFirst(a) - apiserverFirst(b))) await stopChild(child)
    this.#processes = []
    if (!options.keepDir) rmSync(this.dir, { recursive: true, force: true })
  }

  /**
   * The audit log's events from `since` on (a count of earlier events, as
   * `auditEvents().length` returned). A request of its own, logged last,
   * marks that every earlier one is in the log.
   */
  async auditEvents(since = 0): Promise<AuditEvent[]> {
    const marker = `/api/v1/namespaces/default?audit-marker=${randomBytes(6).toString('hex')}`
    await this.request('GET', marker)
    const read = () =>
      readFileSync(join(this.dir, 'audit.log'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as AuditEvent)
    const deadline = Date.now() + 10_000
    let events = read()
    while (!events.some((e) => e.requestURI === marker)) {
      if (Date.now() > deadline) throw new Error('the audit log does not show the marker request')
      await new Promise((resolve) => setTimeout(resolve, 20))
      events = read()
    }
    return events.filter((e) => !e.requestURI.includes('audit-marker=')).slice(since)
  }
}

/** `signal` (SIGTERM), then SIGKILL after the stop timeout; resolves once the process has exited. */
async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill(signal)
  const timer = setTimeout(() => child.kill('SIGKILL'), stopTimeout)
  await exited
  clearTimeout(timer)
}
