/**
 * Which lists merge element by element. kpt's merge (kyaml `merge3`) takes
 * this from the built-in Kubernetes OpenAPI schema: a list whose field has
 * `x-kubernetes-patch-strategy: merge` is keyed by its list-map keys or patch
 * merge key; every other list, and every list of a kind without a schema
 * (CRDs, anything unknown), is replaced as a whole. This table holds the keyed
 * lists a package actually carries, under the same rule.
 */

/** How a list merges: by key fields, as a set of scalars, or as a whole. */
export type ListStrategy = { kind: 'keyed'; keys: readonly string[] } | { kind: 'set' } | { kind: 'whole' }

const whole: ListStrategy = { kind: 'whole' }
const byName: ListStrategy = { kind: 'keyed', keys: ['name'] }

/** API groups whose kinds have a built-in schema. */
const builtInGroups = new Set([
  '',
  'apps',
  'batch',
  'policy',
  'autoscaling',
  'networking.k8s.io',
  'rbac.authorization.k8s.io',
  'storage.k8s.io',
  'scheduling.k8s.io',
  'admissionregistration.k8s.io',
  'apiextensions.k8s.io',
  'coordination.k8s.io',
  'discovery.k8s.io',
  'node.k8s.io',
  'certificates.k8s.io',
])

/** Keyed fields of a pod spec, and of a container within it. */
const podSpecLists: Record<string, ListStrategy> = {
  containers: byName,
  initContainers: byName,
  ephemeralContainers: byName,
  volumes: byName,
  imagePullSecrets: byName,
  hostAliases: { kind: 'keyed', keys: ['ip'] },
}
const containerLists: Record<string, ListStrategy> = {
  env: byName,
  volumeMounts: { kind: 'keyed', keys: ['mountPath'] },
  volumeDevices: { kind: 'keyed', keys: ['devicePath'] },
  ports: { kind: 'keyed', keys: ['containerPort', 'protocol'] },
}

/**
 * The strategy of the list at `path` (field names, with `[]` for a list
 * element) in a resource of `apiVersion` and `kind`.
 */
export function listStrategy(apiVersion: string, kind: string, path: readonly string[]): ListStrategy {
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : ''
  if (!builtInGroups.has(group)) return whole
  const field = path[path.length - 1]!
  if (path.length === 2 && path[0] === 'metadata' && field === 'finalizers') return { kind: 'set' }
  if (kind === 'Service' && path.join('.') === 'spec.ports') return { kind: 'keyed', keys: ['port', 'protocol'] }
  const parent = path.slice(0, -1)
  if (isPodSpec(kind, parent) && field in podSpecLists) return podSpecLists[field]!
  // A container: <pod spec>.containers.[] (or initContainers, ephemeralContainers).
  if (
    parent.length >= 2 &&
    parent[parent.length - 1] === '[]' &&
    /^(containers|initContainers|ephemeralContainers)$/.test(parent[parent.length - 2]!)
  ) {
    if (isPodSpec(kind, parent.slice(0, -2)) && field in containerLists) return containerLists[field]!
  }
  return whole
}

/** True when `path` is where `kind` holds a pod spec. */
function isPodSpec(kind: string, path: readonly string[]): boolean {
  const at = path.join('.')
  if (kind === 'Pod') return at === 'spec'
  if (kind === 'CronJob') return at === 'spec.jobTemplate.spec.template.spec'
  return at === 'spec.template.spec'
}
