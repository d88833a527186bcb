/**
 * A connection to a Kubernetes API server through `@kubernetes/client-node`
 * (an optional dependency, loaded only here and only when a command needs
 * the cluster): the kubeconfig found as kubectl finds it, raw JSON requests
 * (objects kept as served), lists in pages, API discovery, and status writes
 * through the status subresource. `render --cluster` (cluster.ts) lists the
 * fleet with it; the controller watches it (cluster-watch.ts) and keeps its
 * Lease with it. See docs/cluster.md.
 */
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { delimiter, join, resolve } from 'node:path'
import type { KubeConfig, ResponseContext } from '@kubernetes/client-node'
import type { ApiObject, StatusUpdate } from './cluster-objects.js'
import { nextStatus } from './cluster-objects.js'

/** Which server, as whom: `--kubeconfig`, `--context`. */
export interface ConnectOptions {
  kubeconfig?: string
  context?: string
  cwd: string
  env: Readonly<Record<string, string | undefined>>
}

/** Expected failures (no kubeconfig, unreachable server, a forbidden list): one line, no stack. */
export class ClusterError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ClusterError'
  }
}

/** A resource the server serves. */
export interface Served {
  group: string
  version: string
  kind: string
  /** The plural resource name, as in the URL. */
  resource: string
  namespaced: boolean
}

/** The client library's module. */
export type ClientLibrary = typeof import('@kubernetes/client-node')

/** The HTTP methods this project uses. */
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH'

/** Objects per list request; more are fetched with the continue token. */
const pageSize = 500
/** Status writes in flight at once. */
const parallelWrites = 8
/** Writes of one object's status, each after a conflict with another writer. */
const statusAttempts = 5
/** Reads of one path while the server answers 429 (busy), each after the seconds its Retry-After names, at most these. */
const busyAttempts = 5
const maxRetryAfter = 5

/** The client library: an optional dependency, which the function images leave out (only the cluster commands need it). */
async function loadClient(): Promise<ClientLibrary> {
  try {
    return await importClient()
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') throw err
    throw new ClusterError(
      '--cluster needs the optional dependency @kubernetes/client-node, which is not installed (npm install @kubernetes/client-node)',
    )
  }
}

async function importClient(): Promise<ClientLibrary> {
  try {
    return await import('@kubernetes/client-node')
  } catch (err) {
    // bin/kpt-variants runs this code compiled from a code cache (bin/load-bundle.js), where Node 20 cannot
    // import(); it does so only where Node can require an ES module instead.
    if ((err as NodeJS.ErrnoException).code !== 'ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING') throw err
    return createRequire(import.meta.url)('@kubernetes/client-node') as ClientLibrary
  }
}

/** An API server, reached through the kubeconfig. */
export class ClusterClient {
  readonly discovery: Discovery

  private constructor(
    readonly k8s: ClientLibrary,
    readonly kc: KubeConfig,
    /** The API server's URL. */
    readonly server: string,
    private readonly api: {
      request(
        method: Method,
        path: string,
        query: Record<string, string>,
        body?: unknown,
        contentType?: string,
      ): Promise<unknown>
    },
  ) {
    this.discovery = new Discovery((path, doing) => this.get(path, doing))
  }

  /** Loads the client library and the kubeconfig; nothing is requested yet. */
  static async connect(options: ConnectOptions): Promise<ClusterClient> {
    const k8s = await loadClient()
    const kc = loadKubeConfig(k8s, options)

    /** The client's object API, used for raw JSON: objects are kept as served, not as the library's typed models. */
    class RawApi extends k8s.KubernetesObjectApi {
      async request(
        method: Method,
        path: string,
        query: Record<string, string>,
        body?: unknown,
        contentType = 'application/merge-patch+json',
      ): Promise<unknown> {
        const context = this.configuration.baseServer.makeRequestContext(path, k8s.HttpMethod[method])
        context.setHeaderParam('Accept', 'application/json')
        for (const [name, value] of Object.entries(query)) context.setQueryParam(name, value)
        if (body !== undefined) {
          context.setHeaderParam('Content-Type', method === 'PATCH' ? contentType : 'application/json')
          context.setBody(JSON.stringify(body))
        }
        return await this.requestPromise(context)
      }

      // The JSON as served: the library's serializer would type `metadata` (dropping a list's `continue`, making timestamps Dates).
      protected override async processResponse<T>(response: ResponseContext): Promise<T> {
        const text = await response.body.text()
        if (response.httpStatusCode >= 200 && response.httpStatusCode <= 299) return JSON.parse(text) as T
        let body: unknown = text
        try {
          body = JSON.parse(text)
        } catch {
          // not JSON: the text is the message
        }
        throw new k8s.ApiException(response.httpStatusCode, 'Unsuccessful HTTP Request', body, response.headers)
      }
    }
    return new ClusterClient(k8s, kc, kc.getCurrentCluster()!.server, kc.makeApiClient(RawApi))
  }

  /** True for an HTTP error answer of the server (its status code, body and headers). */
  isApiException(err: unknown): err is { code: number; body: unknown; headers?: Record<string, string> } {
    return err instanceof this.k8s.ApiException
  }

  /** A failed request as one line: what was being done, on which server, and the server's answer or the network error. */
  failure(err: unknown, doing: string): ClusterError {
    if (err instanceof ClusterError) return err
    if (this.isApiException(err)) {
      const body = err.body as { message?: unknown } | string | undefined
      const detail =
        typeof body === 'object' && body && typeof body.message === 'string'
          ? body.message
          : typeof body === 'string' && body
            ? body.trim()
            : ''
      const what =
        err.code === 403
          ? 'forbidden'
          : err.code === 401
            ? 'unauthorized'
            : err.code === 409
              ? 'conflict'
              : `HTTP ${err.code}`
      return new ClusterError(`cannot ${doing} on ${this.server}: ${what}${detail ? `: ${detail}` : ''}`)
    }
    const e = err as NodeJS.ErrnoException
    return new ClusterError(
      `cannot reach the Kubernetes API server ${this.server} (to ${doing}): ${e.code ?? e.message}`,
    )
  }

  /** One request as it is: a failure throws the library's ApiException (see isApiException) or a network error. */
  request(
    method: Method,
    path: string,
    query: Record<string, string> = {},
    body?: unknown,
    contentType?: string,
  ): Promise<unknown> {
    return this.api.request(method, path, query, body, contentType)
  }

  /**
   * A GET, undefined when the path does not exist (404). A server that is
   * busy (429), as a CRD's storage is for a moment after the CRD is made,
   * says when to ask again.
   */
  async get(path: string, doing: string, query: Record<string, string> = {}): Promise<unknown> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.api.request('GET', path, query)
      } catch (err) {
        if (this.isApiException(err) && err.code === 404) return undefined
        if (!this.isApiException(err) || err.code !== 429 || attempt === busyAttempts) throw this.failure(err, doing)
        const seconds = Number(err.headers?.['retry-after'] ?? 1)
        await new Promise((resolve) =>
          setTimeout(resolve, Math.min(Number.isFinite(seconds) ? seconds : 1, maxRetryAfter) * 1000),
        )
      }
    }
  }

  /** The collection path of a resource: in `namespace` when it is namespaced and one is given, else across namespaces. */
  collection(served: Served, namespace?: string): string {
    const base = `${served.group ? `/apis/${served.group}` : '/api'}/${served.version}`
    return served.namespaced && namespace !== undefined
      ? `${base}/namespaces/${encodeURIComponent(namespace)}/${served.resource}`
      : `${base}/${served.resource}`
  }

  /** What listing a resource is, for messages: `list packagevariants.config.porch.kpt.dev in all namespaces`. */
  listing(served: Served, namespace?: string): string {
    const where =
      served.namespaced && namespace !== undefined
        ? `in namespace ${namespace}`
        : served.namespaced
          ? 'in all namespaces'
          : '(cluster-scoped)'
    return `list ${served.resource}${served.group ? `.${served.group}` : ''} ${where}`
  }

  /** Every object of a resource (in `namespace`, or all), in pages, and the resourceVersion the list was read at. */
  async list(served: Served, namespace?: string): Promise<{ items: ApiObject[]; resourceVersion: string }> {
    const path = this.collection(served, namespace)
    const doing = this.listing(served, namespace)
    const items: ApiObject[] = []
    let page: string | undefined
    let resourceVersion = ''
    do {
      const result = (await this.get(path, doing, { limit: String(pageSize), ...(page ? { continue: page } : {}) })) as
        { items?: ApiObject[]; metadata?: { continue?: string; resourceVersion?: string } } | undefined
      if (!result) throw new ClusterError(`cannot ${doing} on ${this.server}: not found`)
      items.push(...(result.items ?? []))
      page = result.metadata?.continue || undefined
      // Every page is of the first page's resourceVersion: the list is one consistent snapshot.
      resourceVersion ||= result.metadata?.resourceVersion ?? ''
    } while (page)
    return { items, resourceVersion }
  }

  /**
   * Writes each update through the status subresource (a merge patch),
   * `resources` naming the plural resource of each kind; failures are
   * returned, never thrown.
   */
  async writeStatus(
    updates: readonly StatusUpdate[],
    resources: ReadonlyMap<string, string>,
  ): Promise<{ written: number; failures: string[] }> {
    const failures: string[] = []
    let written = 0
    const queue = [...updates]
    const worker = async () => {
      for (let update = queue.shift(); update; update = queue.shift()) {
        const collection = `/apis/${update.apiVersion}/namespaces/${encodeURIComponent(update.namespace)}/${resources.get(update.kind)}`
        try {
          await this.#writeOne(collection, update)
          written++
        } catch (err) {
          failures.push(`${update.subject}: status not written: ${this.failure(err, 'write status').message}`)
        }
      }
    }
    await Promise.all(Array.from({ length: Math.min(parallelWrites, updates.length) }, worker))
    return { written, failures: failures.sort() }
  }

  /**
   * One status write, conditional on the resourceVersion it was computed from
   * (in the merge patch). When another writer changed the object since (409
   * Conflict), the object is read again (a list of that one name: the `list`
   * the run already has, no `get`), the status computed anew from it, keeping
   * the other writer's conditions, and written again: at most
   * `statusAttempts` times.
   */
  async #writeOne(collection: string, update: StatusUpdate): Promise<void> {
    const path = `${collection}/${encodeURIComponent(update.name)}/status`
    let { status, resourceVersion } = update
    for (let attempt = 1; ; attempt++) {
      try {
        await this.api.request(
          'PATCH',
          path,
          {},
          { ...(resourceVersion ? { metadata: { resourceVersion } } : {}), status },
        )
        return
      } catch (err) {
        if (!this.isApiException(err) || err.code !== 409) throw this.failure(err, `patch ${path}`)
        if (attempt === statusAttempts)
          throw new ClusterError(
            `${this.failure(err, `patch ${path}`).message} (${attempt} attempts, each after reading it again)`,
          )
      }
      const doing = `read ${update.subject} again after a conflict`
      const found = (await this.get(collection, doing, { fieldSelector: `metadata.name=${update.name}` })) as
        { items?: ApiObject[] } | undefined
      const current = found?.items?.[0]
      if (!current) throw new ClusterError(`cannot ${doing} on ${this.server}: it no longer exists`)
      const next = nextStatus(current['status'], update.wanted)
      if (!next) return
      status = next
      resourceVersion = String(current.metadata?.['resourceVersion'] ?? '')
    }
  }
}

/**
 * API discovery, each document fetched once: which resource serves a kind,
 * at which version, namespaced or not. A group or version the server does
 * not serve has no resources (an object selector of an unknown kind selects
 * nothing, as with a directory).
 */
export class Discovery {
  readonly #resources = new Map<string, Promise<Served[]>>()
  #groups: Promise<{ group: string; version: string }[]> | undefined

  constructor(private readonly get: (path: string, doing: string) => Promise<unknown>) {}

  /** Forgets what was discovered: a CRD made since is found next time. */
  reset(): void {
    this.#resources.clear()
    this.#groups = undefined
  }

  /** The resources of `group/version`. */
  resources(group: string, version: string): Promise<Served[]> {
    const gv = group ? `${group}/${version}` : version
    let found = this.#resources.get(gv)
    if (!found) {
      found = this.get(group ? `/apis/${gv}` : `/api/${gv}`, `discover the resources of ${gv}`).then((list) => {
        const resources = (
          (list as { resources?: { name: string; kind: string; namespaced: boolean }[] } | undefined)?.resources ?? []
        ).filter((r) => !r.name.includes('/'))
        return resources.map((r) => ({ group, version, kind: r.kind, resource: r.name, namespaced: r.namespaced }))
      })
      // A failed discovery is asked again next time.
      found.catch(() => this.#resources.delete(gv))
      this.#resources.set(gv, found)
    }
    return found
  }

  async find(group: string, version: string, kind: string): Promise<Served | undefined> {
    return (await this.resources(group, version)).find((r) => r.kind === kind)
  }

  /** Every served group with its preferred version (the core group as `""`, `v1`). */
  groups(): Promise<{ group: string; version: string }[]> {
    if (!this.#groups) {
      const groups = this.get('/apis', 'discover the API groups').then((list) => {
        const groups =
          (
            list as
              | {
                  groups?: { name: string; preferredVersion?: { version: string }; versions?: { version: string }[] }[]
                }
              | undefined
          )?.groups ?? []
        return [
          { group: '', version: 'v1' },
          ...groups.flatMap((g) =>
            (g.preferredVersion?.version ?? g.versions?.[0]?.version)
              ? [{ group: g.name, version: g.preferredVersion?.version ?? g.versions![0]!.version }]
              : [],
          ),
        ]
      })
      groups.catch(() => {
        if (this.#groups === groups) this.#groups = undefined
      })
      this.#groups = groups
    }
    return this.#groups
  }

  /** The resources a kind reference names: in its group (or every group serving the kind), at its version or the preferred one. */
  async resolve(ref: { group: string | undefined; version: string | undefined; kind: string }): Promise<Served[]> {
    const groups = (await this.groups()).filter((g) => ref.group === undefined || g.group === ref.group)
    const found: Served[] = []
    for (const g of groups) {
      const served = await this.find(g.group, ref.version ?? g.version, ref.kind)
      if (served) found.push(served)
    }
    return found
  }
}

/**
 * The kubeconfig as kubectl finds it: `--kubeconfig`, else `$KUBECONFIG`
 * (files merged, the first one's context wins), else `~/.kube/config`, else
 * the pod's service account; then `--context`.
 */
function loadKubeConfig(k8s: ClientLibrary, options: ConnectOptions): KubeConfig {
  const kc = new k8s.KubeConfig()
  const home = options.env['HOME']
  const files = options.kubeconfig
    ? [resolve(options.cwd, options.kubeconfig)]
    : options.env['KUBECONFIG']
      ? options.env['KUBECONFIG']
          .split(delimiter)
          .filter(Boolean)
          .map((f) => resolve(options.cwd, f))
          .filter((f) => existsSync(f))
      : home && existsSync(join(home, '.kube', 'config'))
        ? [join(home, '.kube', 'config')]
        : []
  if (options.kubeconfig && !existsSync(files[0]!))
    throw new ClusterError(`kubeconfig ${options.kubeconfig} does not exist`)
  try {
    if (files.length > 0) {
      kc.loadFromFile(files[0]!)
      for (const file of files.slice(1)) {
        const more = new k8s.KubeConfig()
        more.loadFromFile(file)
        kc.mergeConfig(more, true)
      }
    } else if (
      options.env['KUBERNETES_SERVICE_HOST'] &&
      existsSync('/var/run/secrets/kubernetes.io/serviceaccount/token')
    ) {
      kc.loadFromCluster()
    } else {
      throw new ClusterError(
        'no kubeconfig: give --kubeconfig PATH, set KUBECONFIG, or create ~/.kube/config (in a pod, its service account is used)',
      )
    }
  } catch (err) {
    if (err instanceof ClusterError) throw err
    throw new ClusterError(`cannot read the kubeconfig ${files.join(delimiter)}: ${(err as Error).message}`)
  }
  if (options.context !== undefined) {
    if (!kc.getContextObject(options.context))
      throw new ClusterError(`no context ${JSON.stringify(options.context)} in the kubeconfig`)
    kc.setCurrentContext(options.context)
  }
  if (!kc.getCurrentCluster()?.server)
    throw new ClusterError('the kubeconfig has no current context with a cluster: give --context NAME')
  return kc
}
