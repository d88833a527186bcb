/**
 * The catalog the upstream repositories make: every published revision
 * (tag `<package>/v<N>`) of a package whose root holds a PackageManifest with
 * a `spec.version` is a version of the package that manifest names, with its
 * dependencies and the APIs it provides (its manifest's, and its CRDs'), and
 * it is installed from that revision. One catalog per repository, named after
 * it. A revision is read once per run; what a commit holds never changes, so
 * the entries are also kept in the cache between runs.
 */
import { crdProvides, isCustomResourceDefinition } from '../../functions/api/dependencies.js'
import type { CatalogPackage, CatalogVersion } from '../../functions/api/dependencies.js'
import type { PlanCatalog } from '../../functions/dependency-check/index.js'
import { packagePathAnnotation } from '../../functions/krm/index.js'
import { catalogFile } from '../cache/layout.js'
import { readRecord, writeRecord } from '../cache/record.js'
import type { RecordFormat } from '../cache/record.js'
import { dependencyObjects, rootManifest } from '../package/dependency-objects.js'
import { gitPackageFiles } from '../package/files.js'
import { ResourceCodec } from '../package/resources.js'
import { revisionKey } from '../fleet/fleet.js'
import type { RevisionVersion } from './revisions.js'
import type { RepositoryLocation, UpstreamIndex, GitSources } from './upstreams.js'

/** A revision's catalog entry as kept: the package's name and the version, or none (no manifest with a version). */
type CachedEntry = { name: string; version: Omit<CatalogVersion, 'source'> } | null

/** Catalogs of `repos` (those the index lists), from their published revisions; `cacheDir` keeps what each commit held. */
export async function upstreamCatalogs(
  repos: readonly RepositoryLocation[],
  index: UpstreamIndex,
  sources: GitSources,
  cacheDir?: string,
): Promise<PlanCatalog[]> {
  const codec = new ResourceCodec()
  const catalogs: PlanCatalog[] = []
  for (const repo of repos) {
    const prefix = revisionKey(repo, '')
    const cache = new EntryCache(cacheDir, repo.url, codec, sources)
    const packages = new Map<string, CatalogPackage>()
    for (const [key, revisions] of index.revisions) {
      if (!key.startsWith(prefix)) continue
      for (const revision of revisions) {
        if (revision.kind !== 'published') continue
        const entry = await cache.entry(revision.commit, revision.directory)
        if (!entry) continue
        let pkg = packages.get(entry.name)
        if (!pkg) packages.set(entry.name, (pkg = { name: entry.name, versions: [] }))
        // Two revisions of one version (a re-tag): the later revision wins.
        pkg.versions = pkg.versions.filter((v) => v.version !== entry.version.version)
        pkg.versions.push({
          ...entry.version,
          source: { repo: repo.name, package: revision.packageName, revision: revision.revision },
        })
      }
    }
    cache.save()
    if (packages.size > 0) catalogs.push({ name: `repository ${repo.name}`, packages: [...packages.values()] })
  }
  return catalogs
}

/**
 * The versions the published revisions of `packages` declare (their root
 * PackageManifest's `spec.version` and `spec.kubernetesVersion`), by revision
 * list key and revision number; read as the catalog reads them, and kept in
 * the same cache, so that a package both followed and installed is read once.
 */
export async function declaredVersions(
  packages: readonly { repo: RepositoryLocation; package: string }[],
  index: Pick<UpstreamIndex, 'revisions'>,
  sources: GitSources,
  cacheDir?: string,
): Promise<Map<string, Map<number, RevisionVersion>>> {
  const codec = new ResourceCodec()
  const out = new Map<string, Map<number, RevisionVersion>>()
  const caches = new Map<string, EntryCache>()
  for (const { repo, package: pkg } of packages) {
    const key = revisionKey(repo, pkg)
    let cache = caches.get(repo.url)
    if (!cache) caches.set(repo.url, (cache = new EntryCache(cacheDir, repo.url, codec, sources)))
    const versions = new Map<number, RevisionVersion>()
    for (const revision of index.revisions.get(key) ?? []) {
      if (revision.kind !== 'published') continue
      const entry = await cache.entry(revision.commit, revision.directory)
      if (!entry) continue
      versions.set(revision.revision, {
        version: entry.version.version,
        ...(entry.version.kubernetesVersion ? { kubernetesVersion: entry.version.kubernetesVersion } : {}),
      })
    }
    out.set(key, versions)
  }
  for (const cache of caches.values()) cache.save()
  return out
}

/** Reads a revision's root PackageManifest into a catalog version; null when it has none, or none with a version. */
async function readEntry(
  codec: ResourceCodec,
  sources: GitSources,
  url: string,
  commit: string,
  directory: string,
): Promise<CachedEntry> {
  let files
  try {
    files = gitPackageFiles(await sources.readPackage(url, commit, directory))
  } catch {
    // A revision that cannot be read is no catalog version; the variants that use it meet the error.
    return null
  }
  const root = `/${directory}`
  const objects = dependencyObjects(codec, files, root)
  const manifest = rootManifest(objects, root)
  if (!manifest?.version) return null
  const crds = objects
    .filter((o) => isCustomResourceDefinition(o) && o.getAnnotation(packagePathAnnotation) === root)
    .flatMap(crdProvides)
  const version: Omit<CatalogVersion, 'source'> = {
    version: manifest.version,
    provides: [...manifest.provides, ...crds],
    dependencies: manifest.dependencies.map(({ declaredAt: _at, ...dep }) => dep),
  }
  if (manifest.installationType) version.installationType = manifest.installationType
  if (manifest.kubernetesVersion) version.kubernetesVersion = manifest.kubernetesVersion
  return { name: manifest.name, version }
}

/** The entries of a repository's revisions by `<commit>:<directory>`: what a commit holds never changes. */
const catalogFormat: RecordFormat<{ entries: Record<string, CachedEntry> }> = {
  // 2 keeps each version's Kubernetes range too (a record of 1 is read again).
  version: 2,
  holds: (record) => typeof record.entries === 'object' && record.entries !== null,
}

/** The entries of one repository's revisions, kept in the cache by commit and directory. */
class EntryCache {
  readonly #file: string | undefined
  readonly #entries: Record<string, CachedEntry>
  #changed = false

  constructor(
    cacheDir: string | undefined,
    private readonly url: string,
    private readonly codec: ResourceCodec,
    private readonly sources: GitSources,
  ) {
    this.#file = cacheDir ? catalogFile(cacheDir, url) : undefined
    this.#entries = (this.#file && readRecord(this.#file, catalogFormat)?.entries) || {}
  }

  /** The entry of the revision at `commit` and `directory`, read from git the first time. */
  async entry(commit: string, directory: string): Promise<CachedEntry> {
    const key = `${commit}:${directory}`
    let entry = this.#entries[key]
    if (entry === undefined) {
      this.#entries[key] = entry = await readEntry(this.codec, this.sources, this.url, commit, directory)
      this.#changed = true
    }
    return entry
  }

  /** Writes the entries when new ones were read. */
  save(): void {
    if (this.#file && this.#changed) writeRecord(this.#file, catalogFormat, { entries: this.#entries })
  }
}
