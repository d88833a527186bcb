/**
 * One resource of the fleet watched (the controller's): client-node's
 * informer (`ListWatch`: a list, then a watch from the list's
 * resourceVersion, a list again when the server answers 410 Gone), with
 * bookmarks asked for, so that a quiet resource's watch resumes from a
 * recent resourceVersion instead of listing again. The informer gives up
 * on any other error (a refused watch, a lost connection) and stays
 * stopped: it is started again here, after a backoff, resuming from where
 * it was.
 *
 * Stopped while its list or its watch request was under way, the informer
 * (client-node 1.4) goes on to watch anyway, and that open request keeps
 * the process from exiting (a pod told to stop then waits for SIGKILL):
 * here a list that ends after the stop fails, and a watch that connects
 * after it is aborted at once.
 */
import type { KubernetesListObject, KubernetesObject, Watch } from '@kubernetes/client-node'
import { ClusterError } from './cluster-client.js'
import type { ClusterClient, Served } from './cluster-client.js'
import type { ApiObject } from './cluster-objects.js'
import { stopPoint } from '../util/stop-point.js'

/** What a watch reports. */
export interface WatchHandlers {
  /** An object was added, changed or deleted (`object` is then its last state). The initial list reports each object as added. */
  onEvent(served: Served, type: 'add' | 'update' | 'delete', object: ApiObject): void
  /** The watch failed; it starts again after `retryMs`. */
  onError(served: Served, error: ClusterError, retryMs: number): void
}

/** The first restart waits this long; each failure in a row doubles it, up to the maximum. */
const firstRetryMs = 500
const maxRetryMs = 30_000
/** A failure this long after the previous one starts the backoff over. */
const calmMs = 60_000

export class ResourceWatch {
  readonly #informer: { start(): Promise<void>; stop(): Promise<void>; list(): ReadonlyArray<KubernetesObject> }
  #stopped = false
  #listed = false
  #synced: { promise: Promise<void>; resolve: () => void }
  #retry: ReturnType<typeof setTimeout> | undefined
  #retryMs = firstRetryMs
  #lastFailure = 0

  constructor(
    client: ClusterClient,
    readonly served: Served,
    namespace: string | undefined,
    private readonly handlers: WatchHandlers,
  ) {
    const { k8s } = client
    const watch = new k8s.Watch(client.kc)
    // The informer asks for no bookmarks; every watch it opens asks for them here.
    const withBookmarks = {
      watch: (
        path: string,
        query: Record<string, unknown>,
        callback: Parameters<Watch['watch']>[2],
        done: Parameters<Watch['watch']>[3],
      ) => this.#unlessStopped(watch.watch(path, { ...query, allowWatchBookmarks: true }, callback, done)),
    } as unknown as Watch
    const list = async (): Promise<KubernetesListObject<KubernetesObject>> => {
      const { items, resourceVersion } = await client.list(served, namespace)
      await stopPoint('watch-listed')
      if (this.#stopped) throw new Error('stopped')
      this.#listed = true
      return { apiVersion: 'v1', kind: 'List', items: items, metadata: { resourceVersion } }
    }
    const informer = new k8s.ListWatch<KubernetesObject>(
      client.collection(served, namespace),
      withBookmarks,
      list,
      false,
    )
    informer.on('add', (o) => handlers.onEvent(served, 'add', o as ApiObject))
    informer.on('update', (o) => handlers.onEvent(served, 'update', o as ApiObject))
    informer.on('delete', (o) => handlers.onEvent(served, 'delete', o as ApiObject))
    informer.on('error', (err) => this.#failed(err, client, namespace))
    this.#informer = informer
    let resolve = () => {}
    this.#synced = { promise: new Promise<void>((r) => (resolve = r)), resolve: () => resolve() }
  }

  /** Starts listing and watching; `synced` resolves once the first list is in the cache. */
  start(): void {
    void this.#start()
  }

  /** Resolves once the resource has been listed (and its objects reported). */
  get synced(): Promise<void> {
    return this.#synced.promise
  }

  get isSynced(): boolean {
    return this.#listed
  }

  /** The objects as last seen. */
  objects(): ApiObject[] {
    return this.#informer.list() as ApiObject[]
  }

  /** Stops for good (the informer's own `error` on stopping is ignored). */
  stop(): void {
    this.#stopped = true
    clearTimeout(this.#retry)
    void this.#informer.stop()
  }

  /** A watch request that connected after `stop`, aborted (its informer then ends it as stopped). */
  async #unlessStopped(request: Promise<AbortController>): Promise<AbortController> {
    const connected = await request
    if (this.#stopped) connected.abort()
    return connected
  }

  async #start(): Promise<void> {
    if (this.#stopped) return
    await this.#informer.start()
    // The list is in the cache once start() returns from it (whether or not the watch then connected).
    if (this.#listed) this.#synced.resolve()
  }

  #failed(err: unknown, client: ClusterClient, namespace: string | undefined): void {
    if (this.#stopped) return
    const now = Date.now()
    if (now - this.#lastFailure > calmMs) this.#retryMs = firstRetryMs
    this.#lastFailure = now
    const delay = this.#retryMs
    this.#retryMs = Math.min(this.#retryMs * 2, maxRetryMs)
    this.handlers.onError(this.served, watchFailure(err, client, this.served, namespace), delay)
    clearTimeout(this.#retry)
    this.#retry = setTimeout(() => void this.#start(), delay)
  }
}

/** A watch's failure as one line: a refused list as the list says it, a refused watch with its status, a lost connection. */
function watchFailure(
  err: unknown,
  client: ClusterClient,
  served: Served,
  namespace: string | undefined,
): ClusterError {
  if (err instanceof ClusterError) return err
  const doing = client.listing(served, namespace).replace(/^list /, 'watch ')
  const status = (err as { statusCode?: number }).statusCode
  if (typeof status === 'number')
    return new ClusterError(
      `cannot ${doing} on ${client.server}: ${status === 403 ? 'forbidden' : `HTTP ${status}`}: ${(err as Error).message}`,
    )
  return client.failure(err, doing)
}
