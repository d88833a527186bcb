/**
 * Which items belong to the root package. Under `kpt fn render` a pipeline
 * also sees its subpackages' resources, whose paths are relative to their own
 * package (so `Kptfile` occurs several times); `package-path` tells them apart.
 * Under `kpt fn eval` paths are relative to the eval directory instead.
 */
import { packagePathAnnotation } from './annotations.js'
import type { KubeObject } from './kube-object.js'

/** The `package-path` of the root package: the shortest one among the items, if any. */
export function rootPackagePath(items: readonly KubeObject[]): string | undefined {
  let root: string | undefined
  for (const item of items) {
    const path = item.getAnnotation(packagePathAnnotation)
    if (path !== undefined && (root === undefined || path.length < root.length)) root = path
  }
  return root
}

/** The items at `path` (e.g. `Kptfile`, `package-context.yaml`) in the root package. */
export function findRootObjects(items: readonly KubeObject[], path: string): KubeObject[] {
  const root = rootPackagePath(items)
  return items.filter((item) => item.path === path && item.getAnnotation(packagePathAnnotation) === root)
}

/** True for the `kpt.dev/v1 Kptfile` meta resource. */
export function isKptfile(item: KubeObject): boolean {
  return item.kind === 'Kptfile' && item.group === 'kpt.dev'
}
