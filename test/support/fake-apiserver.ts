/**
 * A Kubernetes API server for tests, over plain HTTP (node:http): the few
 * endpoints `render --cluster` uses, so the real `@kubernetes/client-node`
 * talks to it through a kubeconfig file. Discovery (`/api`, `/apis`, a group,
 * a group version), lists (namespaced and across namespaces, `limit` and
 * `continue` pages), and merge patches of an object or its `/status` (a
 * `metadata.resourceVersion` in the patch must be the object's, else 409
 * Conflict, as a real server answers; each patch moves it on). Every request is
 * recorded; a bearer token is required; any request can be made to fail.
 * Lists decorate objects as a real server does (resourceVersion,
 * managedFields, kubectl's last-applied annotation; core items without
 * apiVersion and kind) so the tests see the client strip them.
 *
 * The e2e tests use the real server (kube-apiserver.ts). This one stays for
 * orchestrator/fleet/cluster.test.ts: it runs with the unit tests (no Go, no
 * process to start), records each request's exact path and query, and pages
 * lists below the client's 500 objects a page, which a real server does only
 * past 500 objects.
 */
import { createServer } from 'node:http'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'

export type Json = Record<string, any>

/** A kind the server serves. */
export interface ServedKind {
  group: string
  version: string
  kind: string
  resource: string
  namespaced: boolean
}

/** A request the server received. */
export interface Recorded {
  method: string
  path: string
  query: Record<string, string>
  contentType?: string
  body?: unknown
}

export const token = 'test-token'

/** Porch's kinds and the fleet tests' ones. */
export const defaultKinds: ServedKind[] = [
  {
    group: 'config.porch.kpt.dev',
    version: 'v1alpha1',
    kind: 'Repository',
    resource: 'repositories',
    namespaced: true,
  },
  {
    group: 'config.porch.kpt.dev',
    version: 'v1alpha1',
    kind: 'PackageVariant',
    resource: 'packagevariants',
    namespaced: true,
  },
  {
    group: 'config.porch.kpt.dev',
    version: 'v1alpha2',
    kind: 'PackageVariantSet',
    resource: 'packagevariantsets',
    namespaced: true,
  },
  {
    group: 'infra.nephio.org',
    version: 'v1alpha1',
    kind: 'WorkloadCluster',
    resource: 'workloadclusters',
    namespaced: true,
  },
  { group: '', version: 'v1', kind: 'ConfigMap', resource: 'configmaps', namespaced: true },
  { group: '', version: 'v1', kind: 'Namespace', resource: 'namespaces', namespaced: false },
]

export class FakeApiServer {
  readonly requests: Recorded[] = []
  /** Answers a request with this status instead (e.g. 403), when it returns one. */
  refuse: (request: Recorded) => number | undefined = () => undefined
  /** Objects per page when the client asks for none (`limit` is honoured when smaller). */
  pageSize = 2
  private server: Server | undefined
  /** Each object's resourceVersion, moved on by every patch. */
  private readonly versions = new WeakMap<Json, number>()

  constructor(
    private readonly objects: Json[],
    readonly kinds: ServedKind[] = defaultKinds,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res))
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve))
    return this
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections()
    await new Promise<void>((resolve) => this.server?.close(() => resolve()))
  }

  /** The object as stored (status included). */
  object(kind: string, namespace: string, name: string): Json | undefined {
    return this.objects.find(
      (o) =>
        o['kind'] === kind && (o['metadata']?.['namespace'] ?? '') === namespace && o['metadata']?.['name'] === name,
    )
  }

  /** Moves an object's resourceVersion on, as another writer's change would. */
  touch(kind: string, namespace: string, name: string): void {
    const object = this.object(kind, namespace, name)!
    this.versions.set(object, this.versionOf(object) + 1)
  }

  /** Writes a kubeconfig naming this server (context `fake`, and `other` naming nothing reachable). */
  writeKubeconfig(file: string, options: { server?: string; token?: string } = {}): void {
    writeFileSync(
      file,
      [
        'apiVersion: v1',
        'kind: Config',
        'current-context: fake',
        'clusters:',
        `- name: fake`,
        `  cluster: {server: '${options.server ?? this.url}', insecure-skip-tls-verify: true}`,
        'users:',
        `- name: tester`,
        `  user: {token: ${options.token ?? token}}`,
        'contexts:',
        `- name: fake`,
        `  context: {cluster: fake, user: tester}`,
        '',
      ].join('\n'),
    )
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url!, 'http://localhost')
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const text = Buffer.concat(chunks).toString('utf8')
    const recorded: Recorded = { method: req.method!, path: url.pathname, query: Object.fromEntries(url.searchParams) }
    if (req.headers['content-type']) recorded.contentType = req.headers['content-type']
    if (text) recorded.body = JSON.parse(text)
    this.requests.push(recorded)
    const send = (code: number, body: unknown) => {
      res.writeHead(code, { 'content-type': 'application/json' })
      res.end(JSON.stringify(body))
    }
    const status = (code: number, reason: string, message: string) =>
      send(code, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code })
    if (req.headers.authorization !== `Bearer ${token}`) return status(401, 'Unauthorized', 'Unauthorized')
    const refused = this.refuse(recorded)
    if (refused)
      return status(
        refused,
        refused === 403 ? 'Forbidden' : 'Failure',
        `${url.pathname} is refused (${refused}): User "tester" cannot ${req.method === 'GET' ? 'list' : 'patch'} it`,
      )
    const answer =
      req.method === 'GET' ? this.get(url) : req.method === 'PATCH' ? this.patch(url.pathname, recorded) : undefined
    if (answer === undefined)
      return status(404, 'NotFound', `the server could not find the requested resource (${req.method} ${url.pathname})`)
    if (answer === conflict)
      return status(
        409,
        'Conflict',
        `Operation cannot be fulfilled on ${url.pathname}: the object has been modified; please apply your changes to the latest version and try again`,
      )
    send(200, answer)
  }

  private get(url: URL): unknown {
    const path = url.pathname
    if (path === '/api') return { kind: 'APIVersions', versions: ['v1'] }
    if (path === '/apis') {
      const groups = [...new Set(this.kinds.filter((k) => k.group).map((k) => k.group))]
      return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups.map((g) => this.group(g)) }
    }
    const parts = path.split('/').filter(Boolean)
    const [group, version, rest] =
      parts[0] === 'api' ? ['', parts[1], parts.slice(2)] : [parts[1]!, parts[2], parts.slice(3)]
    if (parts[0] === 'apis' && version === undefined)
      return this.kinds.some((k) => k.group === group) ? this.group(group) : undefined
    const served = this.kinds.filter((k) => k.group === group && k.version === version)
    if (served.length === 0) return undefined
    if (rest.length === 0) {
      return {
        kind: 'APIResourceList',
        apiVersion: 'v1',
        groupVersion: group ? `${group}/${version}` : version,
        resources: served.flatMap((k) => [
          {
            name: k.resource,
            singularName: k.kind.toLowerCase(),
            namespaced: k.namespaced,
            kind: k.kind,
            verbs: ['get', 'list', 'patch', 'update'],
          },
          {
            name: `${k.resource}/status`,
            singularName: '',
            namespaced: k.namespaced,
            kind: k.kind,
            verbs: ['get', 'patch', 'update'],
          },
        ]),
      }
    }
    const [namespace, resource] =
      rest[0] === 'namespaces' && rest.length === 3
        ? [rest[1]!, rest[2]!]
        : rest.length === 1
          ? [undefined, rest[0]!]
          : [undefined, undefined]
    const kind = served.find((k) => k.resource === resource)
    if (!kind || (namespace !== undefined && !kind.namespaced)) return undefined
    const all = this.objects
      .filter((o) => o['kind'] === kind.kind && String(o['apiVersion']).replace(/\/?[^/]*$/, '') === group)
      .filter((o) => namespace === undefined || o['metadata']?.['namespace'] === namespace)
      .sort((a, b) => key(a).localeCompare(key(b)))
    const offset = Number(url.searchParams.get('continue') ?? 0)
    const limit = Math.min(Number(url.searchParams.get('limit') ?? Infinity), this.pageSize)
    const page = all.slice(offset, offset + limit)
    const more = offset + limit < all.length
    return {
      apiVersion: group ? `${group}/${version}` : version,
      kind: `${kind.kind}List`,
      metadata: { resourceVersion: '999', ...(more ? { continue: String(offset + limit) } : {}) },
      items: page.map((o) => decorate(o, group === '', this.versionOf(o))),
    }
  }

  private group(name: string): Json {
    const versions = [...new Set(this.kinds.filter((k) => k.group === name).map((k) => k.version))].sort().reverse()
    const list = versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }))
    return { kind: 'APIGroup', apiVersion: 'v1', name, versions: list, preferredVersion: list[0] }
  }

  /** A JSON merge patch of an object (its `status` left alone) or of its `/status` (only `status` taken). */
  private patch(path: string, recorded: Recorded): unknown {
    const match = /^\/apis\/([^/]+)\/([^/]+)\/namespaces\/([^/]+)\/([^/]+)\/([^/]+?)(\/status)?$/.exec(path)
    if (!match || recorded.contentType !== 'application/merge-patch+json') return undefined
    const [, group, version, namespace, resource, name, subresource] = match
    const kind = this.kinds.find((k) => k.group === group && k.version === version && k.resource === resource)
    const object = kind && this.object(kind.kind, namespace!, name!)
    if (!object) return undefined
    const patch = recorded.body as Json
    const expected = patch['metadata']?.['resourceVersion']
    if (expected !== undefined && expected !== String(this.versionOf(object))) return conflict
    if (subresource) object['status'] = mergePatch(object['status'], patch['status'])
    else
      for (const [field, value] of Object.entries(patch))
        if (field !== 'status' && field !== 'metadata') object[field] = mergePatch(object[field], value)
    this.versions.set(object, this.versionOf(object) + 1)
    return object
  }

  private versionOf(o: Json): number {
    return this.versions.get(o) ?? 1000 + key(o).length
  }
}

/** What a patch answers when its resourceVersion is not the object's. */
const conflict = Symbol('conflict')

/** RFC 7386: maps merge key by key, null removes, anything else replaces. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch
  const out: Json =
    typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...(target as Json) } : {}
  for (const [k, v] of Object.entries(patch as Json)) {
    if (v === null) delete out[k]
    else out[k] = mergePatch(out[k], v)
  }
  return out
}

function key(o: Json): string {
  return `${o['metadata']?.['namespace'] ?? ''}/${o['metadata']?.['name']}`
}

/** An object as a list returns it: server fields added, core items without apiVersion and kind. */
function decorate(o: Json, core: boolean, resourceVersion: number): Json {
  const { apiVersion, kind, metadata, ...rest } = o
  const annotations = {
    ...(metadata?.annotations ?? {}),
    'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify(o),
  }
  const decorated = {
    ...metadata,
    annotations,
    resourceVersion: String(resourceVersion),
    generation: 1,
    managedFields: [{ manager: 'kubectl', operation: 'Update', time: '2026-01-01T00:00:00Z' }],
  }
  return core ? { metadata: decorated, ...rest } : { apiVersion, kind, metadata: decorated, ...rest }
}
