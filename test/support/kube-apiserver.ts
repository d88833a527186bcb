/**
 * A real Kubernetes API server for the e2e tests: etcd and kube-apiserver,
 * built by scripts/build-cluster.sh into test/apiserver/bin (see
 * docs/testing.md), started on free loopback ports in a temporary directory.
 * The server generates its own serving certificate (its CA goes into the
 * kubeconfigs), authorizes with RBAC, signs service-account tokens with a key
 * made here (so the TokenRequest API issues real tokens), and knows one
 * admin token (group system:masters). Every request is written to an audit
 * log, so the tests can see what a run asked for. Without the binaries the
 * suites that need them skip with a warning naming the build command; in CI
 * (CI=true) they fail instead.
 */
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, closeSync } from 'node:fs'
import { request as httpsRequest } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { repositoryRoot } from './root.js'
import { freePorts } from './ports.js'

export type Json = Record<string, any>

export const binDir = join(repositoryRoot(), 'test', 'apiserver', 'bin')
export const buildCommand = 'bash scripts/build-cluster.sh'

/** Whether kube-apiserver and etcd are built. */
export function kubeApiServerBuilt(): boolean {
  return existsSync(join(binDir, 'kube-apiserver')) && existsSync(join(binDir, 'etcd'))
}

/** Why a suite that needs the server is skipped (test/support/requires.ts), or fails in CI. */
export const kubeApiServerMissing = `the e2e tests against a real Kubernetes API server need kube-apiserver and etcd built in ${binDir}: run \`${buildCommand}\` (needs Go)`

/** A response: the status code and the body (JSON when it is). */
export interface Response {
  status: number
  body: any
}

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

export class KubeApiServer {
  readonly adminToken = randomBytes(16).toString('hex')
  #processes: ChildProcess[] = []
  #names = new Map<ChildProcess, string>()
  /** The arguments each process was started with, to start it again on the same ports and data. */
  #args = new Map<ServerProcess, string[]>()
  #port = 0
  #ca = ''
  #discovery = new Map<string, Promise<Json[]>>()

  private constructor(
    readonly dir: string,
    readonly options: KubeApiServerOptions,
  ) {}

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

  /** A kubeconfig naming this server with its CA: as the admin, or with `token` (a service account's). */
  writeKubeconfig(file: string, options: { token?: string; server?: string } = {}): void {
    const server = options.server ?? this.url
    const config = {
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'test',
      // @kubernetes/client-node takes plain HTTP (a proxy of the tests) only with TLS verification off.
      clusters: [
        {
          name: 'test',
          cluster: server.startsWith('http:')
            ? { server, 'insecure-skip-tls-verify': true }
            : { server, 'certificate-authority-data': Buffer.from(this.#ca).toString('base64') },
        },
      ],
      users: [{ name: 'test', user: { token: options.token ?? this.adminToken } }],
      contexts: [{ name: 'test', context: { cluster: 'test', user: 'test' } }],
    }
    writeFileSync(file, JSON.stringify(config, null, 2))
  }

  /** One request, as the admin unless `token` says otherwise. */
  request(
    method: string,
    path: string,
    body?: unknown,
    options: { token?: string; contentType?: string; insecure?: boolean } = {},
  ): Promise<Response> {
    return new Promise((resolve, reject) => {
      const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body)
      const req = httpsRequest(
        `${this.url}${path}`,
        {
          method,
          ...(options.insecure ? { rejectUnauthorized: false } : { ca: this.#ca }),
          headers: {
            authorization: `Bearer ${options.token ?? this.adminToken}`,
            accept: 'application/json',
            ...(text === undefined ? {} : { 'content-type': options.contentType ?? 'application/json' }),
          },
        },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (chunk: Buffer) => chunks.push(chunk))
          res.on('end', () => {
            const raw = Buffer.concat(chunks).toString('utf8')
            let parsed: unknown = raw
            try {
              parsed = JSON.parse(raw)
            } catch {
              // plain text, as /readyz answers
            }
            resolve({ status: res.statusCode!, body: parsed })
          })
          res.on('error', reject)
        },
      )
      req.on('error', reject)
      req.end(text)
    })
  }

  /** A request that must succeed (2xx): its body. */
  async ok(
    method: string,
    path: string,
    body?: unknown,
    options: { token?: string; contentType?: string } = {},
  ): Promise<Json> {
    const response = await this.request(method, path, body, options)
    if (response.status < 200 || response.status > 299)
      throw new Error(`${method} ${path}: ${response.status}: ${JSON.stringify(response.body)}`)
    return response.body as Json
  }

  /** The REST path of an object (in `namespace` when namespaced and it names none), through discovery. */
  async path(object: Json, subresource?: string, namespace = 'default'): Promise<string> {
    const apiVersion = String(object['apiVersion'])
    const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`
    let resources = this.#discovery.get(base)
    if (!resources) {
      resources = this.ok('GET', base).then((list) => list['resources'] as Json[])
      this.#discovery.set(base, resources)
      resources.catch(() => this.#discovery.delete(base))
    }
    const resource = (await resources).find((r) => r['kind'] === object['kind'] && !String(r['name']).includes('/'))
    if (!resource) throw new Error(`the server does not serve ${apiVersion} ${object['kind']}`)
    const scope = resource['namespaced'] ? `/namespaces/${object['metadata']?.['namespace'] ?? namespace}` : ''
    return `${base}${scope}/${resource['name']}/${object['metadata']['name']}${subresource ? `/${subresource}` : ''}`
  }

  /**
   * Applies objects as they are (server-side apply), in order; a namespaced
   * object without a namespace goes into `namespace`, as `kubectl apply -n` puts it. A
   * CustomResourceDefinition is waited for until it is established. `status`
   * is applied through the status subresource.
   */
  async apply(objects: readonly Json[], namespace = 'default'): Promise<void> {
    for (const object of objects) {
      const query = '?fieldManager=kpt-variants-test&force=true'
      const { status, ...rest } = object
      const apply = { contentType: 'application/apply-patch+yaml' }
      const applied = await this.ok('PATCH', `${await this.path(object, undefined, namespace)}${query}`, rest, apply)
      if (status !== undefined) {
        const metadata = { name: object['metadata']['name'], namespace: applied['metadata']['namespace'] }
        await this.ok(
          'PATCH',
          `${await this.path(object, 'status', namespace)}${query}`,
          { apiVersion: object['apiVersion'], kind: object['kind'], metadata, status },
          apply,
        )
      }
      if (object['kind'] === 'CustomResourceDefinition') {
        await this.waitFor(object, (crd) =>
          (crd['status']?.['conditions'] ?? []).some(
            (c: Json) => c['type'] === 'Established' && c['status'] === 'True',
          ),
        )
        const gv = `/apis/${applied['spec']['group']}/${applied['spec']['versions'][0]['name']}`
        this.#discovery.delete(gv)
        // Established is not yet listable: its watch cache answers 429 "storage is (re)initializing" for a moment.
        await this.#until(
          async () => (await this.request('GET', `${gv}/${applied['spec']['names']['plural']}?limit=1`)).status === 200,
          `${gv}: not listable`,
        )
      }
    }
  }

  /** Deletes objects (those that exist), last first. */
  async delete(objects: readonly Json[], namespace = 'default'): Promise<void> {
    for (const object of [...objects].reverse()) {
      const path = await this.path(object, undefined, namespace)
      const response = await this.request('DELETE', path)
      if (response.status !== 200 && response.status !== 202 && response.status !== 404)
        throw new Error(`DELETE ${path}: ${response.status}: ${JSON.stringify(response.body)}`)
    }
  }

  /** The object as stored now (undefined when it does not exist). */
  async get(object: Json, namespace = 'default'): Promise<Json | undefined> {
    const path = await this.path(object, undefined, namespace)
    const response = await this.request('GET', path)
    if (response.status === 404) return undefined
    if (response.status !== 200) throw new Error(`GET ${path}: ${response.status}: ${JSON.stringify(response.body)}`)
    return response.body as Json
  }

  /** Resolves once the object, watched, satisfies `condition` (its current state counts); rejects after `timeout`. */
  async waitFor(object: Json, condition: (o: Json) => boolean, timeout = 30_000): Promise<Json> {
    const path = await this.path(object)
    const collection = path.slice(0, path.lastIndexOf('/'))
    const name = object['metadata']['name']
    return new Promise((resolve, reject) => {
      let buffered = ''
      const req = httpsRequest(
        `${this.url}${collection}?watch=true&fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}`,
        { ca: this.#ca, headers: { authorization: `Bearer ${this.adminToken}` } },
        (res) => {
          res.setEncoding('utf8')
          res.on('data', (chunk: string) => {
            buffered += chunk
            for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
              const event = JSON.parse(buffered.slice(0, newline)) as { type: string; object: Json }
              buffered = buffered.slice(newline + 1)
              if (event.type !== 'DELETED' && condition(event.object)) {
                finish()
                resolve(event.object)
              }
            }
          })
        },
      )
      const timer = setTimeout(() => {
        finish()
        reject(new Error(`${path}: not as expected after ${timeout / 1000} s`))
      }, timeout)
      const finish = () => {
        clearTimeout(timer)
        req.destroy()
      }
      req.on('error', (err) => {
        finish()
        reject(err)
      })
      req.end()
    })
  }

  /** Polls `check` (every 50 ms, at most `timeout`) until it holds. */
  async #until(check: () => Promise<boolean>, what: string, timeout = 30_000): Promise<void> {
    const deadline = Date.now() + timeout
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`${what} after ${timeout / 1000} s`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  /** A token of a service account from the TokenRequest API, as a pod would be given. */
  async token(namespace: string, serviceAccount: string): Promise<string> {
    const request = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } }
    const response = await this.ok(
      'POST',
      `/api/v1/namespaces/${namespace}/serviceaccounts/${serviceAccount}/token`,
      request,
    )
    return response['status']['token'] as string
  }

  /**
   * Resolves once the RBAC authorizer (which follows roles through a watch)
   * answers `allowed` for `user` doing `verb` on a resource: the point after
   * which a changed role holds.
   */
  async waitForAccess(
    user: string,
    attributes: { verb: string; group: string; resource: string; subresource?: string },
    allowed: boolean,
    timeout = 30_000,
  ): Promise<void> {
    const review = {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: { user, resourceAttributes: attributes },
    }
    const answer = async () =>
      (await this.ok('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', review))['status']['allowed'] ===
      allowed
    await this.#until(
      answer,
      `${user} ${attributes.verb} ${attributes.resource}: still not ${allowed ? 'allowed' : 'denied'}`,
      timeout,
    )
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
