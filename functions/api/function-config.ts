/** Helpers for the functionConfig forms kpt passes (docs/upstream-behaviour.md, "functionConfig forms"). */
import type { KubeObject } from '../krm/index.js'

/** True for a core `v1 ConfigMap`. */
export function isConfigMap(object: KubeObject): boolean {
  return object.isGVK('v1', 'ConfigMap')
}

/** `kind.group/version`, as the Go SDK names expected kinds: `PackageVariant.config.porch.kpt.dev/v1alpha1`. */
export function describeKind(object: KubeObject): string {
  const apiVersion = object.apiVersion || '<no apiVersion>'
  const kind = object.kind || '<no kind>'
  return `${kind}.${apiVersion}`
}
