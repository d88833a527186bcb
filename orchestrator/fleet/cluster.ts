/**
 * `render --cluster`: the fleet read from a Kubernetes API server through
 * `@kubernetes/client-node` (cluster-client.ts). Repositories,
 * PackageVariantSets and PackageVariants are listed, then the kinds their
 * object selectors and injectors name and the dependency kinds; the objects
 * are written as a snapshot directory of YAML, which the render (worker
 * threads included) reads as any fleet directory, so a cluster renders
 * exactly as a directory holding the same objects. After the render, status
 * goes back through the status subresource. See docs/cluster.md.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { clusterDir } from '../cache/layout.js'
import { kindKey } from '../../functions/api/builtin-kinds.js'
import { dependenciesGroup } from '../../functions/api/dependencies.js'
import { ClusterClient, ClusterError } from './cluster-client.js'
import type { ConnectOptions, Served } from './cluster-client.js'
import { describe, kindsToRead, snapshotObject, snapshotText } from './cluster-objects.js'
import type { ApiObject, KindRef, ListedObject, StatusUpdate } from './cluster-objects.js'

export { ClusterError }

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined
}

/** Where the fleet comes from: `--kubeconfig`, `--context`, `--namespace`. */
export interface ClusterOptions extends ConnectOptions {
  /** Read only this namespace (and cluster-scoped kinds); all namespaces without it. */
  namespace?: string
  /** The snapshot is written below `<cacheDir>/cluster/`. */
  cacheDir: string
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
  /** The kinds the server serves of those the fleet asked for (`apiVersion|Kind`): a set's selector must name one. */
  servedKinds: string[]
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
] as const
/** The dependency check's kinds and render's DependencyPolicy, read from the fleet; listed when the server serves them. */
const dependencyKinds = ['PackageCatalog', 'InstalledPackage', 'ClusterAPIs', 'DependencyPolicy']

/** kpt-variants' own kinds read from the fleet (its group is the dependency kinds'): listed when served. */
const rolloutKinds = ['Rollout']

/** The resources of the Rollout kind, when the server serves it. */
export async function rolloutResources(client: ClusterClient): Promise<Served[]> {
  const found: Served[] = []
  for (const kind of rolloutKinds)
    found.push(...(await client.discovery.resolve({ group: dependenciesGroup, version: undefined, kind })))
  return found
}

/** The resources of the fleet kinds (Repository, PackageVariantSet, PackageVariant); a kind the server does not serve is an error. */
export async function fleetResources(
  client: ClusterClient,
): Promise<Record<(typeof fleetKinds)[number]['kind'], Served>> {
  const found: Partial<Record<(typeof fleetKinds)[number]['kind'], Served>> = {}
  for (const { kind, versions } of fleetKinds) {
    let served: Served | undefined
    for (const version of versions) if ((served = await client.discovery.find(porchGroup, version, kind))) break
    if (!served) {
      throw new ClusterError(
        `the API server ${client.server} does not serve ${porchGroup}/${versions.join(' or ')} ${kind}: are Porch's CRDs installed? (see docs/cluster.md)`,
      )
    }
    found[kind] = served
  }
  return found as Record<(typeof fleetKinds)[number]['kind'], Served>
}

/**
 * The resources of the other kinds a fleet reads: those its sets' selectors
 * and its injectors name (see kindsToRead), and the dependency kinds the
 * server serves, each once, in the order to list them.
 */
export async function objectResources(client: ClusterClient, refs: readonly KindRef[]): Promise<Served[]> {
  const found = new Map<string, Served>()
  for (const ref of [
    ...refs,
    ...dependencyKinds.map((kind) => ({ group: dependenciesGroup, version: undefined, kind })),
  ]) {
    for (const served of await client.discovery.resolve(ref))
      if (!found.has(resourceKey(served))) found.set(resourceKey(served), served)
  }
  return [...found.values()]
}

/** The kinds of served resources as sets' selectors name them (`apiVersion|Kind`, see kindKey), sorted. */
export function servedKinds(served: readonly Served[]): string[] {
  return [...new Set(served.map((s) => kindKey(s.group ? `${s.group}/${s.version}` : s.version, s.kind)))].sort()
}

/** A resource's identity: `group/resource`. */
export function resourceKey(served: Served): string {
  return `${served.group}/${served.resource}`
}

/** True for the kinds whose status a run writes: their status is left out of the snapshot. */
export function writesStatusOf(served: Served): boolean {
  return served.group === porchGroup && (served.kind === 'PackageVariant' || served.kind === 'PackageVariantSet')
}

/** The snapshot file of a resource's objects (`packagevariants.config.porch.kpt.dev.yaml`). */
export function snapshotFile(served: Served): string {
  return `${served.resource}.${served.group || 'core'}.yaml`
}

/** Objects as listed, each with the group version it was listed at. */
export function listedAs(served: Served, items: readonly ApiObject[]): ListedObject[] {
  return items.map((object) => ({ apiVersion: `${served.group}/${served.version}`, kind: served.kind, object }))
}

/** Each resource listed, once, by resourceKey: what the snapshot holds. */
type Listed = Map<string, { served: Served; items: ApiObject[] }>

/** Lists the fleet's objects from the cluster and writes the snapshot. */
export async function readCluster(options: ClusterOptions): Promise<ClusterFleet> {
  const client = await ClusterClient.connect(options)
  const { server } = client
  const { listed, sets, variants, rollouts, warnings } = await listFleet(client, options.namespace)
  const dir = writeSnapshot(clusterDir(options.cacheDir), listed)
  return {
    server,
    id: `cluster ${server} ${options.namespace ?? '*'}`,
    dir,
    clusterScoped: [...listed.values()]
      .filter((l) => !l.served.namespaced)
      .map((l) => `${l.served.group}/${l.served.kind}`),
    servedKinds: servedKinds([...listed.values()].map((l) => l.served)),
    variants: listedAs(variants.served, variants.items),
    sets: listedAs(sets.served, sets.items),
    rollouts,
    warnings,
    writeStatus(updates) {
      return client.writeStatus(updates, new Map([variants.served, sets.served].map((s) => [s.kind, s.resource])))
    },
    patch: patcher(client, listed),
    close() {
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** Lists the fleet's kinds, then the kinds its sets and injectors name, and the Rollouts: each resource once. */
async function listFleet(client: ClusterClient, namespace: string | undefined) {
  const listed: Listed = new Map()
  const list = async (served: Served): Promise<ApiObject[]> => {
    const known = listed.get(resourceKey(served))
    if (known) return known.items
    const { items } = await client.list(served, namespace)
    listed.set(resourceKey(served), { served, items })
    return items
  }
  const fleet = await fleetResources(client)
  await list(fleet.Repository)
  const sets = { served: fleet.PackageVariantSet, items: await list(fleet.PackageVariantSet) }
  const variants = { served: fleet.PackageVariant, items: await list(fleet.PackageVariant) }
  const { kinds, warnings } = kindsToRead(sets.items, variants.items)
  for (const served of await objectResources(client, kinds)) await list(served)
  const rollouts: ListedObject[] = []
  for (const served of await rolloutResources(client)) rollouts.push(...listedAs(served, await list(served)))
  return { listed, sets, variants, rollouts, warnings }
}

/** Writes a file per resource into a new snapshot directory under `root`; none is left behind if one fails. */
function writeSnapshot(root: string, listed: Listed): string {
  mkdirSync(root, { recursive: true })
  const dir = mkdtempSync(join(root, 'snapshot-'))
  try {
    for (const { served, items } of listed.values()) {
      const apiVersion = served.group ? `${served.group}/${served.version}` : served.version
      writeFileSync(
        join(dir, snapshotFile(served)),
        snapshotText(items.map((item) => snapshotObject(item, apiVersion, served.kind, writesStatusOf(served)))),
      )
    }
  } catch (err) {
    rmSync(dir, { recursive: true, force: true })
    throw err
  }
  return dir
}

/** ClusterFleet's patch, for objects of the resources listed. */
function patcher(client: ClusterClient, listed: Listed): ClusterFleet['patch'] {
  return async (object, patch, subresource) => {
    const resource = [...listed.values()].find(
      (l) => `${l.served.group}/${l.served.version}` === object.apiVersion && l.served.kind === object.kind,
    )?.served.resource
    const namespace = str(object.object.metadata?.['namespace'])
    const name = str(object.object.metadata?.['name']) ?? ''
    const path = `/apis/${object.apiVersion}/${namespace ? `namespaces/${encodeURIComponent(namespace)}/` : ''}${resource}/${encodeURIComponent(name)}${subresource ? `/${subresource}` : ''}`
    try {
      await client.request('PATCH', path, {}, patch)
    } catch (err) {
      if (client.isApiException(err) && err.code === 409)
        throw new ClusterError(
          `${object.kind} ${describe(object.object)} changed on ${client.server} since it was read: nothing was written; run the command again`,
        )
      throw client.failure(err, `patch ${path}`)
    }
  }
}
