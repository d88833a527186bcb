/**
 * The fleet as the controller watches it: a watch per resource `render
 * --cluster` lists (Repositories, PackageVariantSets, PackageVariants, the
 * kinds their selectors and injectors name, the dependency kinds), and the
 * snapshot directory written from what they saw, byte for byte the one
 * `render --cluster` would list, so that the render reads it as any fleet.
 * Each object's snapshot text is kept, and a change reported only when that
 * text changes: a status write, a new resourceVersion or managedFields
 * change nothing a render reads.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { clusterDir } from '../cache/layout.js'
import { dependenciesGroup } from '../../functions/api/dependencies.js'
import type { ClusterClient, Served } from '../fleet/cluster-client.js'
import {
  fleetResources,
  listedAs,
  objectResources,
  porchGroup,
  rolloutResources,
  resourceKey,
  servedKinds,
  snapshotFile,
  writesStatusOf,
} from '../fleet/cluster.js'
import { kindsToRead, snapshotObject, snapshotText } from '../fleet/cluster-objects.js'
import type { ApiObject, ListedObject } from '../fleet/cluster-objects.js'
import { ResourceWatch } from '../fleet/cluster-watch.js'
import { stopPoint } from '../util/stop-point.js'

/** A change of the fleet a render reads. */
export interface FleetChange {
  served: Served
  /** `namespace/name` of the object. */
  name: string
  /** A dependency kind (PackageCatalog, InstalledPackage, ClusterAPIs): it changes whole repositories' dependency plans. */
  dependencies: boolean
}

/** A snapshot written: what the render and the status writes need. */
export interface Snapshot {
  dir: string
  /** `group/Kind` of the cluster-scoped kinds watched. */
  clusterScoped: string[]
  /** The kinds served of those watched (`apiVersion|Kind`): a set's selector must name one. */
  servedKinds: string[]
  /** The PackageVariants and PackageVariantSets as last seen, status and resourceVersion included. */
  variants: ListedObject[]
  sets: ListedObject[]
  /** The plural resource of each kind whose status is written. */
  statusResources: Map<string, string>
  /** What the cluster source cannot follow (injectors without a kind). */
  warnings: string[]
}

interface Watched {
  watch: ResourceWatch
  /** Snapshot text of each object, by `namespace/name`. */
  documents: Map<string, string>
  /** The file as last written. */
  written?: string
}

export class FleetCache {
  readonly #watched = new Map<string, Watched>()
  #fleet: Awaited<ReturnType<typeof fleetResources>> | undefined
  /** The sets or variants changed since the kinds to watch were worked out. */
  #kindsStale = true
  /** Stopped: a `ready` still under way (the cycle that awaited it has returned) starts no watch (`#watch`). */
  #stopped = false
  readonly dir: string

  constructor(
    private readonly client: ClusterClient,
    /** Watch only this namespace (and cluster-scoped kinds); all without it. */
    private readonly namespace: string | undefined,
    cacheDir: string,
    private readonly onChange: (change: FleetChange) => void,
    private readonly onError: (message: string) => void,
  ) {
    const root = clusterDir(cacheDir)
    mkdirSync(root, { recursive: true })
    this.dir = mkdtempSync(join(root, 'controller-'))
  }

  /** Finds the fleet kinds (an error when Porch's CRDs are missing) and starts watching them. */
  async start(): Promise<void> {
    this.#fleet = await fleetResources(this.client)
    for (const served of Object.values(this.#fleet)) this.#watch(served)
  }

  /**
   * Resolves once every resource the fleet needs is watched and listed: after
   * a set or a variant changed, the kinds they name are worked out again,
   * new ones watched, and those no longer named dropped.
   */
  async ready(): Promise<void> {
    const fleet = this.#fleet!
    for (;;) {
      await Promise.all([...this.#watched.values()].map((w) => w.watch.synced))
      await stopPoint('watches-synced')
      if (this.#stopped || !this.#kindsStale) return
      this.#kindsStale = false
      const { kinds } = kindsToRead(this.#objects(fleet.PackageVariantSet), this.#objects(fleet.PackageVariant))
      const wanted = [
        ...Object.values(fleet),
        ...(await objectResources(this.client, kinds)),
        ...(await rolloutResources(this.client)),
      ]
      const keys = new Set(wanted.map(resourceKey))
      for (const [key, watched] of this.#watched) {
        if (keys.has(key)) continue
        watched.watch.stop()
        this.#watched.delete(key)
        rmSync(join(this.dir, snapshotFile(watched.watch.served)), { force: true })
      }
      for (const served of wanted) if (!this.#watched.has(resourceKey(served))) this.#watch(served)
    }
  }

  /** Asks discovery again at the next `ready` (a CRD made since is then found). */
  rediscover(): void {
    this.client.discovery.reset()
    this.#kindsStale = true
  }

  /** Writes the snapshot of what the watches saw (only files that changed). */
  write(): Snapshot {
    const fleet = this.#fleet!
    for (const watched of this.#watched.values()) {
      const text = [...watched.documents]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([, document]) => document)
      // As the API server lists them: by namespace and name (etcd's key order), one YAML stream per resource.
      const file = text.join('---\n')
      if (file === watched.written) continue
      writeFileSync(join(this.dir, snapshotFile(watched.watch.served)), file)
      watched.written = file
    }
    const served = [...this.#watched.values()].map((w) => w.watch.served)
    return {
      dir: this.dir,
      clusterScoped: served.filter((s) => !s.namespaced).map((s) => `${s.group}/${s.kind}`),
      servedKinds: servedKinds(served),
      variants: listedAs(fleet.PackageVariant, this.#objects(fleet.PackageVariant)),
      sets: listedAs(fleet.PackageVariantSet, this.#objects(fleet.PackageVariantSet)),
      statusResources: new Map([fleet.PackageVariant, fleet.PackageVariantSet].map((s) => [s.kind, s.resource])),
      warnings: kindsToRead(this.#objects(fleet.PackageVariantSet), this.#objects(fleet.PackageVariant)).warnings,
    }
  }

  /** Stops every watch and removes the snapshot. */
  stop(): void {
    this.#stopped = true
    for (const watched of this.#watched.values()) watched.watch.stop()
    this.#watched.clear()
    rmSync(this.dir, { recursive: true, force: true })
  }

  #objects(served: Served): ApiObject[] {
    return this.#watched.get(resourceKey(served))?.watch.objects() ?? []
  }

  #watch(served: Served): void {
    if (this.#stopped) return
    const documents = new Map<string, string>()
    const apiVersion = served.group ? `${served.group}/${served.version}` : served.version
    const dependencies = served.group === dependenciesGroup
    // A set's or a variant's change may name other kinds to watch.
    const namesKinds =
      served.group === porchGroup && (served.kind === 'PackageVariant' || served.kind === 'PackageVariantSet')
    const watch = new ResourceWatch(this.client, served, this.namespace, {
      onEvent: (_, type, object) => {
        const name = `${String(object.metadata?.['namespace'] ?? '')}/${String(object.metadata?.['name'] ?? '')}`
        const text =
          type === 'delete'
            ? undefined
            : snapshotText([snapshotObject(object, apiVersion, served.kind, writesStatusOf(served))])
        if (documents.get(name) === text) return
        if (text === undefined) documents.delete(name)
        else documents.set(name, text)
        if (namesKinds) this.#kindsStale = true
        this.onChange({ served, name, dependencies })
      },
      onError: (_, error, retryMs) => this.onError(`${error.message} (watching again in ${retryMs / 1000} s)`),
    })
    this.#watched.set(resourceKey(served), { watch, documents })
    watch.start()
  }
}
