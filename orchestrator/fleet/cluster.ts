/**
 * `render --cluster`: the fleet read from a Kubernetes API server through
 * `@kubernetes/client-node` (loaded only here, and only when `--cluster` is
 * used). Repositories, PackageVariantSets and PackageVariants are listed, then
 * the kinds their object selectors and injectors name and the dependency
 * kinds; the objects are written as a snapshot directory of YAML, which the
 * render (worker threads included) reads as any fleet directory, so a cluster
 * renders exactly as a directory holding the same objects. After the render,
 * status goes back through the status subresource. See docs/cluster.md.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { delimiter, join, resolve } from 'node:path'
import type { KubeConfig, ResponseContext } from '@kubernetes/client-node'
import { dependenciesGroup } from '../../functions/api/dependencies.js'
import { describe, kindsToRead, snapshotObject, snapshotText } from './cluster-objects.js'
import type { ApiObject, KindRef } from './cluster-objects.js'
import { nextStatus } from './cluster-objects.js'
import type { ListedObject, StatusUpdate } from './cluster-objects.js'

/** Where the fleet comes from: `--kubeconfig`, `--context`, `--namespace`. */
export interface ClusterOptions {
  kubeconfig?: string
  context?: string
  /** Read only this namespace (and cluster-scoped kinds); all namespaces without it. */
  namespace?: string
  /** The snapshot is written below `<cacheDir>/cluster/`. */
  cacheDir: string
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

/** The fleet read from a cluster. */
export interface ClusterFleet {
  /** The API server's URL. */
  server: string
  /** The fleet's identity across runs (server and namespace), for the records of earlier renders. */
  id: string
  /** The snapshot: a fleet directory holding every object read. */
  dir: string
  /** `group/Kind` of every cluster-scoped kind read: their objects have no namespace, and get none. */
  clusterScoped: string[]
  /** The PackageVariants and PackageVariantSets as listed, status included. */
  variants: ListedObject[]
  sets: ListedObject[]
  /** The Rollouts (kpt-variants.dev) as listed, `resourceVersion` included, when the server serves them. */
  rollouts: ListedObject[]
  /** What the cluster source could not follow (injectors without a kind). */
  warnings: string[]
  /** Writes each update through the status subresource (a merge patch); failures are returned, never thrown. */
  writeStatus(updates: readonly StatusUpdate[]): Promise<{ written: number; failures: string[] }>
  /** A JSON merge patch of a listed object (or its status subresource); a ClusterError says why not (a conflict: it changed since it was listed). */
  patch(object: ListedObject, patch: Record<string, unknown>, subresource?: 'status'): Promise<void>
  /** Removes the snapshot. */
  close(): void
}

export const porchGroup = 'config.porch.kpt.dev'
/** The kinds every run lists, with the versions tried in order (Porch serves its PackageVariantSet as v1alpha2). */
const fleetKinds = [
  { kind: 'Repository', versions: ['v1alpha1'] },
  { kind: 'PackageVariantSet', versions: ['v1alpha2', 'v1alpha1'] },
  { kind: 'PackageVariant', versions: ['v1alpha1'] },
]
/** The dependency check's kinds read from the fleet; listed when the server serves them. */
const dependencyKinds = ['PackageCatalog', 'InstalledPackage', 'ClusterAPIs']
/** kpt-variants' own kinds read from the fleet (its group is the dependency kinds'): listed when served. */
const rolloutKinds = ['Rollout']
/** Objects per list request; more are fetched with the continue token. */
const pageSize = 500
/** Status writes in flight at once. */
const parallelWrites = 8
/** Writes of one object's status, each after a conflict with another writer. */
const statusAttempts = 5
/** Reads of one path while the server answers 429 (busy), each after the seconds its Retry-After names, at most these. */
const busyAttempts = 5
const maxRetryAfter = 5

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined
}

/** A resource the server serves. */
interface Served {
  group: string
  version: string
  kind: string
  /** The plural resource name, as in the URL. */
  resource: string
  namespaced: boolean
}

/** The client library: an optional dependency, which the function images leave out (only --cluster needs it). */
async function loadClient(): Promise<typeof import('@kubernetes/client-node')> {
  try {
    return await importClient()
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') throw err
    throw new ClusterError('--cluster needs the optional dependency @kubernetes/client-node, which is not installed (npm install @kubernetes/client-node)')
  }
}

async function importClient(): Promise<typeof import('@kubernetes/client-node')> {
  try {
    return await import('@kubernetes/client-node')
  } catch (err) {
    // bin/kpt-variants runs this code compiled from a code cache (bin/load-bundle.js), where Node 20 cannot
    // import(); it does so only where Node can require an ES module instead.
    if ((err as NodeJS.ErrnoException).code !== 'ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING') throw err
    return createRequire(import.meta.url)('@kubernetes/client-node') as typeof import('@kubernetes/client-node')
  }
}

/** Lists the fleet's objects from the cluster and writes the snapshot. */
export async function readCluster(options: ClusterOptions): Promise<ClusterFleet> {
  const k8s = await loadClient()
  const kc = loadKubeConfig(k8s, options)
  const server = kc.getCurrentCluster()!.server

  /** The client's object API, used for raw JSON: objects are kept as served, not as the library's typed models. */
  class RawApi extends k8s.KubernetesObjectApi {
    async request(method: 'GET' | 'PATCH', path: string, query: Record<string, string> = {}, body?: unknown): Promise<unknown> {
      const context = this.configuration.baseServer.makeRequestContext(path, method === 'GET' ? k8s.HttpMethod.GET : k8s.HttpMethod.PATCH)
      context.setHeaderParam('Accept', 'application/json')
      for (const [name, value] of Object.entries(query)) context.setQueryParam(name, value)
      if (body !== undefined) {
        context.setHeaderParam('Content-Type', 'application/merge-patch+json')
        context.setBody(JSON.stringify(body))
      }
      return (await this.requestPromise(context)) as unknown
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
  const api = kc.makeApiClient(RawApi)
  const isApiException = (err: unknown): err is { code: number; body: unknown } => err instanceof k8s.ApiException
  const failure = (err: unknown, doing: string): ClusterError => {
    if (isApiException(err)) {
      const body = err.body as { message?: unknown } | string | undefined
      const detail = typeof body === 'object' && body && typeof body.message === 'string' ? body.message : typeof body === 'string' && body ? body.trim() : ''
      const what = err.code === 403 ? 'forbidden' : err.code === 401 ? 'unauthorized' : err.code === 409 ? 'conflict' : `HTTP ${err.code}`
      return new ClusterError(`cannot ${doing} on ${server}: ${what}${detail ? `: ${detail}` : ''}`)
    }
    const e = err as NodeJS.ErrnoException
    return new ClusterError(`cannot reach the Kubernetes API server ${server} (to ${doing}): ${e.code ?? e.message}`)
  }
  // A server that is busy (429), as a CRD's storage is for a moment after the CRD is made, says when to ask again.
  const get = async (path: string, doing: string, query: Record<string, string> = {}): Promise<unknown> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await api.request('GET', path, query)
      } catch (err) {
        if (isApiException(err) && err.code === 404) return undefined
        if (!isApiException(err) || err.code !== 429 || attempt === busyAttempts) throw failure(err, doing)
        const seconds = Number((err as { headers?: Record<string, string> }).headers?.['retry-after'] ?? 1)
        await new Promise((resolve) => setTimeout(resolve, Math.min(Number.isFinite(seconds) ? seconds : 1, maxRetryAfter) * 1000))
      }
    }
  }

  const listedAs = (entry: { served: Served; items: ApiObject[] }): ListedObject[] =>
    entry.items.map((object) => ({ apiVersion: `${entry.served.group}/${entry.served.version}`, kind: entry.served.kind, object }))

  const discovery = new Discovery(get)
  const listed = new Map<string, { served: Served; items: ApiObject[] }>()
  const list = async (served: Served): Promise<ApiObject[]> => {
    const key = `${served.group}/${served.resource}`
    const known = listed.get(key)
    if (known) return known.items
    const base = `${served.group ? `/apis/${served.group}` : '/api'}/${served.version}`
    const scoped = served.namespaced && options.namespace !== undefined
    const path = scoped ? `${base}/namespaces/${encodeURIComponent(options.namespace!)}/${served.resource}` : `${base}/${served.resource}`
    const doing = `list ${served.resource}${served.group ? `.${served.group}` : ''} ${scoped ? `in namespace ${options.namespace}` : served.namespaced ? 'in all namespaces' : '(cluster-scoped)'}`
    const items: ApiObject[] = []
    let page: string | undefined
    do {
      const result = (await get(path, doing, { limit: String(pageSize), ...(page ? { continue: page } : {}) })) as { items?: ApiObject[]; metadata?: { continue?: string } } | undefined
      if (!result) throw new ClusterError(`cannot ${doing} on ${server}: not found`)
      items.push(...(result.items ?? []))
      page = result.metadata?.continue || undefined
    } while (page)
    listed.set(key, { served, items })
    return items
  }

  const byKind = new Map<string, { served: Served; items: ApiObject[] }>()
  for (const { kind, versions } of fleetKinds) {
    let served: Served | undefined
    for (const version of versions) if ((served = await discovery.find(porchGroup, version, kind))) break
    if (!served) {
      throw new ClusterError(`the API server ${server} does not serve ${porchGroup}/${versions.join(' or ')} ${kind}: are Porch's CRDs installed? (see docs/cluster.md)`)
    }
    byKind.set(kind, { served, items: await list(served) })
  }
  const sets = byKind.get('PackageVariantSet')!
  const variants = byKind.get('PackageVariant')!
  const { kinds, warnings } = kindsToRead(sets.items, variants.items)
  for (const ref of kinds) for (const served of await discovery.resolve(ref)) await list(served)
  for (const kind of dependencyKinds) for (const served of await discovery.resolve({ group: dependenciesGroup, version: undefined, kind })) await list(served)
  const rollouts: ListedObject[] = []
  for (const kind of rolloutKinds) {
    for (const served of await discovery.resolve({ group: dependenciesGroup, version: undefined, kind })) rollouts.push(...listedAs({ served, items: await list(served) }))
  }

  const root = join(options.cacheDir, 'cluster')
  mkdirSync(root, { recursive: true })
  const dir = mkdtempSync(join(root, 'snapshot-'))
  try {
    for (const { served, items } of listed.values()) {
      const apiVersion = served.group ? `${served.group}/${served.version}` : served.version
      const ours = served.group === porchGroup && (served.kind === 'PackageVariant' || served.kind === 'PackageVariantSet')
      const objects = items.map((item) => snapshotObject(item, apiVersion, served.kind, ours))
      writeFileSync(join(dir, `${served.resource}.${served.group || 'core'}.yaml`), snapshotText(objects))
    }
  } catch (err) {
    rmSync(dir, { recursive: true, force: true })
    throw err
  }
  /**
   * One status write, conditional on the resourceVersion it was computed from
   * (in the merge patch). When another writer changed the object since (409
   * Conflict), the object is read again (a list of that one name: the `list`
   * the run already has, no `get`), the status computed anew from it, keeping
   * the other writer's conditions, and written again: at most
   * `statusAttempts` times.
   */
  const writeOne = async (collection: string, update: StatusUpdate): Promise<void> => {
    const path = `${collection}/${encodeURIComponent(update.name)}/status`
    let { status, resourceVersion } = update
    for (let attempt = 1; ; attempt++) {
      try {
        await api.request('PATCH', path, {}, { ...(resourceVersion ? { metadata: { resourceVersion } } : {}), status })
        return
      } catch (err) {
        if (!isApiException(err) || err.code !== 409) throw failure(err, `patch ${path}`)
        if (attempt === statusAttempts) throw new ClusterError(`${failure(err, `patch ${path}`).message} (${attempt} attempts, each after reading it again)`)
      }
      const doing = `read ${update.subject} again after a conflict`
      const found = (await get(collection, doing, { fieldSelector: `metadata.name=${update.name}` })) as { items?: ApiObject[] } | undefined
      const current = found?.items?.[0]
      if (!current) throw new ClusterError(`cannot ${doing} on ${server}: it no longer exists`)
      const next = nextStatus(current['status'], update.wanted)
      if (!next) return
      status = next
      resourceVersion = String(current.metadata?.['resourceVersion'] ?? '')
    }
  }

  return {
    server,
    id: `cluster ${server} ${options.namespace ?? '*'}`,
    dir,
    clusterScoped: [...listed.values()].filter((l) => !l.served.namespaced).map((l) => `${l.served.group}/${l.served.kind}`),
    variants: listedAs(variants),
    sets: listedAs(sets),
    rollouts,
    warnings,
    async writeStatus(updates) {
      const failures: string[] = []
      let written = 0
      const resources = new Map([variants.served, sets.served].map((s) => [s.kind, s.resource]))
      const queue = [...updates]
      const worker = async () => {
        for (let update = queue.shift(); update; update = queue.shift()) {
          const collection = `/apis/${update.apiVersion}/namespaces/${encodeURIComponent(update.namespace)}/${resources.get(update.kind)}`
          try {
            await writeOne(collection, update)
            written++
          } catch (err) {
            failures.push(`${update.subject}: status not written: ${err instanceof ClusterError ? err.message : failure(err, 'write status').message}`)
          }
        }
      }
      await Promise.all(Array.from({ length: Math.min(parallelWrites, updates.length) }, worker))
      return { written, failures: failures.sort() }
    },
    async patch(object, patch, subresource) {
      const resource = [...listed.values()].find((l) => `${l.served.group}/${l.served.version}` === object.apiVersion && l.served.kind === object.kind)?.served.resource
      const namespace = str(object.object.metadata?.['namespace'])
      const name = str(object.object.metadata?.['name']) ?? ''
      const path = `/apis/${object.apiVersion}/${namespace ? `namespaces/${encodeURIComponent(namespace)}/` : ''}${resource}/${encodeURIComponent(name)}${subresource ? `/${subresource}` : ''}`
      try {
        await api.request('PATCH', path, {}, patch)
      } catch (err) {
        if (isApiException(err) && err.code === 409)
          throw new ClusterError(`${object.kind} ${describe(object.object)} changed on ${server} since it was read: nothing was written; run the command again`)
        throw failure(err, `patch ${path}`)
      }
    },
    close() {
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/**
 * API discovery, each document fetched once: which resource serves a kind,
 * at which version, namespaced or not. A group or version the server does
 * not serve has no resources (an object selector of an unknown kind selects
 * nothing, as with a directory).
 */
class Discovery {
  readonly #resources = new Map<string, Promise<Served[]>>()
  #groups: Promise<{ group: string; version: string }[]> | undefined

  constructor(private readonly get: (path: string, doing: string) => Promise<unknown>) {}

  /** The resources of `group/version`. */
  resources(group: string, version: string): Promise<Served[]> {
    const gv = group ? `${group}/${version}` : version
    let found = this.#resources.get(gv)
    if (!found) {
      found = this.get(group ? `/apis/${gv}` : `/api/${gv}`, `discover the resources of ${gv}`).then((list) => {
        const resources = ((list as { resources?: { name: string; kind: string; namespaced: boolean }[] } | undefined)?.resources ?? []).filter((r) => !r.name.includes('/'))
        return resources.map((r) => ({ group, version, kind: r.kind, resource: r.name, namespaced: r.namespaced }))
      })
      this.#resources.set(gv, found)
    }
    return found
  }

  async find(group: string, version: string, kind: string): Promise<Served | undefined> {
    return (await this.resources(group, version)).find((r) => r.kind === kind)
  }

  /** Every served group with its preferred version (the core group as `""`, `v1`). */
  groups(): Promise<{ group: string; version: string }[]> {
    this.#groups ??= this.get('/apis', 'discover the API groups').then((list) => {
      const groups = (list as { groups?: { name: string; preferredVersion?: { version: string }; versions?: { version: string }[] }[] } | undefined)?.groups ?? []
      return [
        { group: '', version: 'v1' },
        ...groups.flatMap((g) => ((g.preferredVersion?.version ?? g.versions?.[0]?.version) ? [{ group: g.name, version: (g.preferredVersion?.version ?? g.versions![0]!.version)! }] : [])),
      ]
    })
    return this.#groups
  }

  /** The resources a kind reference names: in its group (or every group serving the kind), at its version or the preferred one. */
  async resolve(ref: KindRef): Promise<Served[]> {
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
function loadKubeConfig(k8s: typeof import('@kubernetes/client-node'), options: ClusterOptions): KubeConfig {
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
  if (options.kubeconfig && !existsSync(files[0]!)) throw new ClusterError(`kubeconfig ${options.kubeconfig} does not exist`)
  try {
    if (files.length > 0) {
      kc.loadFromFile(files[0]!)
      for (const file of files.slice(1)) {
        const more = new k8s.KubeConfig()
        more.loadFromFile(file)
        kc.mergeConfig(more, true)
      }
    } else if (options.env['KUBERNETES_SERVICE_HOST'] && existsSync('/var/run/secrets/kubernetes.io/serviceaccount/token')) {
      kc.loadFromCluster()
    } else {
      throw new ClusterError('no kubeconfig: give --kubeconfig PATH, set KUBECONFIG, or create ~/.kube/config (in a pod, its service account is used)')
    }
  } catch (err) {
    if (err instanceof ClusterError) throw err
    throw new ClusterError(`cannot read the kubeconfig ${files.join(delimiter)}: ${(err as Error).message}`)
  }
  if (options.context !== undefined) {
    if (!kc.getContextObject(options.context)) throw new ClusterError(`no context ${JSON.stringify(options.context)} in the kubeconfig`)
    kc.setCurrentContext(options.context)
  }
  if (!kc.getCurrentCluster()?.server) throw new ClusterError('the kubeconfig has no current context with a cluster: give --context NAME')
  return kc
}
