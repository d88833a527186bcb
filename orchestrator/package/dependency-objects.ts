/**
 * What a package declares to the dependency check: its PackageManifests and
 * CustomResourceDefinitions (the APIs it serves), each annotated with the
 * path of its (sub)package, which is how the check tells packages apart.
 */
import {
  installedPackageKind,
  isCustomResourceDefinition,
  isDependencyKind,
  packageManifestKind,
  readPackageManifest,
} from '../../functions/api/dependencies.js'
import type { PackageManifest } from '../../functions/api/dependencies.js'
import { KubeObject, packagePathAnnotation } from '../../functions/krm/index.js'
import type { PackageFiles } from './files.js'
import { owningPackage, packageDirectories } from './files.js'
import type { ResourceCodec } from './resources.js'

/** True for the objects the check reads from a package. */
export function isDependencyObject(object: KubeObject): boolean {
  return isDependencyKind(object, packageManifestKind) || isCustomResourceDefinition(object)
}

/** True for an InstalledPackage. */
export function isInstalledPackage(object: KubeObject): boolean {
  return isDependencyKind(object, installedPackageKind)
}

/**
 * The package's PackageManifests and CRDs, each a copy annotated with the
 * absolute path of its (sub)package below `root`. Only the files that may
 * hold one are parsed.
 */
export function dependencyObjects(codec: ResourceCodec, files: PackageFiles, root: string): KubeObject[] {
  const dirs = packageDirectories(files)
  const candidates = new Map(
    [...files].filter(([path, file]) => /(^|\/)\.krmignore$/.test(path) || mayDeclareDependencies(file.content)),
  )
  if (![...candidates.values()].some((file) => mayDeclareDependencies(file.content))) return []
  return codec
    .read(candidates, { style: 'eval' }, dirs)
    .items.filter(isDependencyObject)
    .map((item) => {
      const copy = KubeObject.fromItemSource(item.toItemText(), 0)
      const dir = owningPackage(item.path ?? '', dirs)
      copy.setAnnotation(packagePathAnnotation, dir === '' ? root : `${root}/${dir}`)
      return copy
    })
}

/** The package's own PackageManifest (the one at its root), read; undefined when it has none or it cannot be read. */
export function rootManifest(objects: readonly KubeObject[], root: string): PackageManifest | undefined {
  for (const object of objects) {
    if (!isDependencyKind(object, packageManifestKind) || object.getAnnotation(packagePathAnnotation) !== root) continue
    const read = readPackageManifest(object)
    return read.ok ? read.value : undefined
  }
  return undefined
}

/** Whether a file's content names a dependency kind; answered once per content, which a blueprint's clones share. */
const declaresDependencies = new WeakMap<Buffer, boolean>()
function mayDeclareDependencies(content: Buffer): boolean {
  let answer = declaresDependencies.get(content)
  if (answer === undefined)
    declaresDependencies.set(
      content,
      (answer = content.includes('PackageManifest') || content.includes('CustomResourceDefinition')),
    )
  return answer
}
