/**
 * A fleet: the objects of a fleet directory, sorted into what the
 * orchestrator acts on (Repositories, PackageVariantSets, PackageVariants)
 * and the rest, which functions read as sources (targets, injected objects,
 * catalogs). A namespaced object without a namespace is in the default one,
 * as kubectl apply would put it.
 */
import { isPackageVariant } from '../../functions/api/package-variant.js'
import { isPackageVariantSet } from '../../functions/api/package-variant-set.js'
import { isRepository, readRepository } from '../../functions/api/repository.js'
import type { Repository } from '../../functions/api/repository.js'
import type { KubeObject } from '../../functions/krm/index.js'
import type { LoadedFleet } from './load.js'
import { appendTo } from '../util/collections.js'
import { applyDefaultNamespace } from './namespaces.js'

/** Something in the fleet that could not be used, with the file it is in. */
export interface FleetProblem {
  file: string
  message: string
}

/** The fleet, sorted. */
export interface Fleet {
  /** The fleet directory. */
  root: string
  /** Where relative `spec.git.repo` paths of Repositories resolve: the fleet directory, or (with `--cluster`) the working directory. */
  base: string
  /** Every object, in file order: what functions see as sources. */
  objects: readonly KubeObject[]
  repositories: readonly Repository[]
  sets: readonly KubeObject[]
  variants: readonly KubeObject[]
  /** Files that could not be read and objects that could not be understood. */
  problems: readonly FleetProblem[]
  /** A digest of the fleet's files: equal digests, equal fleets. */
  digest: string
  /** The kinds the API server serves (`--cluster`; kindKey's `apiVersion|Kind`): a set's selector must name one. */
  servedKinds?: ReadonlySet<string>
}

/** Where a fleet came from, when not from a directory a user wrote. */
export interface FleetOrigin {
  /** Where relative repository paths resolve (default: the fleet directory). */
  base?: string
  /** `group/Kind` of further cluster-scoped kinds (an API server's discovery): their objects get no namespace. */
  clusterScoped?: readonly string[]
  /** The kinds the API server serves (its discovery, kindKey's `apiVersion|Kind`): none for a directory of YAML. */
  servedKinds?: readonly string[]
}

/**
 * Sorts loaded objects into a Fleet, every namespaced object without a
 * namespace put in `namespace` first (as kubectl apply would); an invalid
 * Repository is a problem naming its file and field.
 */
export function buildFleet(loaded: LoadedFleet, namespace = 'default', origin: FleetOrigin = {}): Fleet {
  applyDefaultNamespace(loaded.objects, namespace, origin.clusterScoped)
  const problems: FleetProblem[] = loaded.problems.map((p) => ({ file: p.file, message: p.message }))
  const repositories: Repository[] = []
  for (const object of loaded.objects) {
    if (!isRepository(object)) continue
    const read = readRepository(object)
    if (read.ok) repositories.push(read.value)
    else
      for (const e of read.errors)
        problems.push({ file: object.origin?.file ?? '', message: `${object.describe()}: ${e.message}` })
  }
  return {
    root: loaded.root,
    base: origin.base ?? loaded.root,
    objects: loaded.objects,
    repositories,
    sets: loaded.objects.filter(isPackageVariantSet),
    variants: loaded.objects.filter(isPackageVariant),
    problems,
    digest: loaded.digest,
    ...(origin.servedKinds ? { servedKinds: new Set(origin.servedKinds) } : {}),
  }
}

/** Repositories by name, indexed once per list: a fleet of N clusters looks up 2N repositories among N. */
const repositoryIndexes = new WeakMap<readonly Repository[], Map<string, Repository[]>>()

function repositoriesNamed(repositories: readonly Repository[], name: string): readonly Repository[] {
  let index = repositoryIndexes.get(repositories)
  if (!index) {
    index = new Map()
    for (const repo of repositories) appendTo(index, repo.name, repo)
    repositoryIndexes.set(repositories, index)
  }
  return index.get(name) ?? []
}

/**
 * The Repository `name` visible from `namespace`: one in that namespace, else
 * one without a namespace (or any, when `namespace` is empty).
 */
export function findRepository(
  fleet: Pick<Fleet, 'repositories'>,
  namespace: string,
  name: string,
): Repository | undefined {
  let fallback: Repository | undefined
  for (const repo of repositoriesNamed(fleet.repositories, name)) {
    if (repo.namespace === namespace) return repo
    if ((repo.namespace === '' || namespace === '') && !fallback) fallback = repo
  }
  return fallback
}

/** A Repository's key (`namespace|name`), by which unreadable repositories are told and revision lists begin. */
export function repositoryKey(repo: Pick<Repository, 'namespace' | 'name'>): string {
  return `${repo.namespace}|${repo.name}`
}

/** The key of a revision list in a RevisionIndex. */
export function revisionKey(repo: Pick<Repository, 'namespace' | 'name'>, packageName: string): string {
  return `${repositoryKey(repo)}|${packageName}`
}

/** `namespace/name`, or `name` for an object without a namespace. */
export function objectKey(object: { namespace: string; name: string }): string {
  return object.namespace ? `${object.namespace}/${object.name}` : object.name
}
