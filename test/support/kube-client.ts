/**
 * Talking to a Kubernetes API server as the tests do: plain HTTPS requests
 * with a bearer token (the admin's unless one is given), objects applied,
 * read, deleted and watched through discovery, service-account tokens and
 * access reviews, and a kubeconfig for the programs under test. The server
 * itself (its processes, certificates and users) is kube-apiserver.ts's.
 */
import { writeFileSync } from 'node:fs'
import { request as httpsRequest } from 'node:https'

export type Json = Record<string, any>

/** A response: the status code and the body (JSON when it is). */
export interface Response {
  status: number
  body: any
}

/** A client of one server: where it is, the CA of its serving certificate, and the admin's token. */
export abstract class KubeClient {
  abstract readonly adminToken: string
  #discovery = new Map<string, Promise<Json[]>>()

  abstract get url(): string

  /** The PEM of the CA of the server's serving certificate. */
  abstract get ca(): string

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
            : { server, 'certificate-authority-data': Buffer.from(this.ca).toString('base64') },
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
          ...(options.insecure ? { rejectUnauthorized: false } : { ca: this.ca }),
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
        await this.until(
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
        { ca: this.ca, headers: { authorization: `Bearer ${this.adminToken}` } },
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
  protected async until(check: () => Promise<boolean>, what: string, timeout = 30_000): Promise<void> {
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
    await this.until(
      answer,
      `${user} ${attributes.verb} ${attributes.resource}: still not ${allowed ? 'allowed' : 'denied'}`,
      timeout,
    )
  }
}
