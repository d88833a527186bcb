/**
 * What `kpt-variants deps` reads of a run's output (opened as `status` opens
 * it: a directory, or the downstream repositories' published branches): every
 * package of a repository, with its PackageManifest (name, version, what it
 * needs, what it serves), how it got there (its PackageVariant, installed as
 * a dependency, or on purpose), and what the fleet's InstalledPackages say was
 * installed outside git; and the published versions of every package, for
 * `--outdated`.
 */
import { crdProvides, isCustomResourceDefinition } from '../../functions/api/dependencies.js'
import { packagePathAnnotation } from '../../functions/krm/index.js'
import type { KubeObject } from '../../functions/krm/index.js'
import { splitPath } from '../output/output.js'
import { dependencyObjects, rootManifest } from '../package/dependency-objects.js'
import type { PackageFiles } from '../package/files.js'
import { readPackageRecord } from '../package/ownership.js'
import { ResourceCodec } from '../package/resources.js'
import { readFleetDependencies } from '../dependencies/repository-plan.js'
import type { Run } from '../run/setup.js'
import { upstreamCatalogs } from '../upstream/catalog.js'
import type { HeldPackage } from './deps.js'

/** The packages of repository `repo` as the output holds them (with `--git`, its published branch). */
export async function readRepositoryPackages(run: Run, repo: string): Promise<HeldPackage[]> {
  const { output, plan } = run
  const codec = new ResourceCodec()
  const variantPaths = plan.variants.map((v) => `${v.downstream.repo}/${v.downstream.package}`)
  const mine = variantPaths.filter((p) => splitPath(p).repo === repo)
  await output.prefetch(mine, { alone: true })
  const held: HeldPackage[] = []
  const add = (path: string, files: PackageFiles | undefined) => {
    if (!files || files.size === 0) return
    const root = output.packageDir(path)
    let objects: KubeObject[]
    try {
      objects = dependencyObjects(codec, files, root)
    } catch {
      // Not YAML: a render says why; deps shows the package without what it declares.
      objects = []
    }
    const manifest = rootManifest(objects, root)
    const record = readPackageRecord(files)
    const crds = objects
      .filter((o) => isCustomResourceDefinition(o) && o.getAnnotation(packagePathAnnotation) === root)
      .flatMap(crdProvides)
    const pkg: HeldPackage = {
      path,
      name: manifest?.name ?? splitPath(path).pkg,
      held: record.owner ? 'variant' : record.installedAsDependency ? 'dependency' : 'on purpose',
      dependencies: manifest?.dependencies ?? [],
      provides: [...(manifest?.provides ?? []), ...crds],
    }
    if (manifest?.version) pkg.version = manifest.version
    if (record.owner) pkg.owner = record.owner
    held.push(pkg)
  }
  for (const path of mine) add(path, (await output.read(path)).published)
  for (const [path, stored] of await output.otherPackages(new Set(variantPaths)))
    if (splitPath(path).repo === repo) add(path, stored.published)
  // What was installed outside git counts where the repository holds no package of its name.
  const fleet = readFleetDependencies(run.fleet.objects, [])
  const names = new Set(held.map((p) => p.name))
  for (const i of [...(fleet.installed.get('') ?? []), ...(fleet.installed.get(repo) ?? [])]) {
    if (names.has(i.package)) continue
    names.add(i.package)
    held.push({
      path: `${repo}/${i.package}`,
      name: i.package,
      version: i.version,
      held: 'outside git',
      dependencies: i.dependencies ?? [],
      provides: i.provides ?? [],
    })
  }
  return held
}

/**
 * Every published version of every package the catalogs know (the upstream
 * repositories' and the fleet's), by name; and the version each published
 * revision of the upstream repositories declares, by `repo|package|revision`.
 */
export async function publishedVersions(
  run: Run,
): Promise<{ byName: Map<string, string[]>; byRevision: Map<string, string> }> {
  const upstream = await upstreamCatalogs(
    run.upstreams.repositories,
    run.upstreams.index,
    run.sources,
    run.settings.cacheDir,
  )
  const fleet = readFleetDependencies(run.fleet.objects, upstream)
  const byName = new Map<string, string[]>()
  for (const catalog of fleet.catalogs)
    for (const pkg of catalog.packages) {
      const list = byName.get(pkg.name) ?? []
      for (const v of pkg.versions) if (!list.includes(v.version)) list.push(v.version)
      byName.set(pkg.name, list)
    }
  const byRevision = new Map<string, string>()
  for (const catalog of upstream)
    for (const pkg of catalog.packages)
      for (const v of pkg.versions)
        if (v.source?.revision !== undefined)
          byRevision.set(`${v.source.repo}|${v.source.package}|${v.source.revision}`, v.version)
  return { byName, byRevision }
}
