/**
 * The kinds every Kubernetes API server serves, and the kinds of Porch and
 * kpt-variants: a selector naming one of them is valid even when the fleet
 * holds no object of it and no CustomResourceDefinition for it. Any other
 * kind must be declared (an object or a CRD in the fleet) or, with
 * `--cluster`, served (discovery).
 */

/** apiVersion -> kinds (Kubernetes 1.37's GA groups, Porch's and ours). */
const builtinKinds: Readonly<Record<string, readonly string[]>> = {
  v1: [
    'ConfigMap',
    'Endpoints',
    'Event',
    'LimitRange',
    'Namespace',
    'Node',
    'PersistentVolume',
    'PersistentVolumeClaim',
    'Pod',
    'PodTemplate',
    'ReplicationController',
    'ResourceQuota',
    'Secret',
    'Service',
    'ServiceAccount',
  ],
  'apps/v1': ['ControllerRevision', 'DaemonSet', 'Deployment', 'ReplicaSet', 'StatefulSet'],
  'batch/v1': ['CronJob', 'Job'],
  'autoscaling/v1': ['HorizontalPodAutoscaler'],
  'autoscaling/v2': ['HorizontalPodAutoscaler'],
  'policy/v1': ['PodDisruptionBudget'],
  'networking.k8s.io/v1': ['Ingress', 'IngressClass', 'NetworkPolicy'],
  'discovery.k8s.io/v1': ['EndpointSlice'],
  'rbac.authorization.k8s.io/v1': ['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'],
  'storage.k8s.io/v1': ['CSIDriver', 'CSINode', 'CSIStorageCapacity', 'StorageClass', 'VolumeAttachment'],
  'scheduling.k8s.io/v1': ['PriorityClass'],
  'coordination.k8s.io/v1': ['Lease'],
  'node.k8s.io/v1': ['RuntimeClass'],
  'certificates.k8s.io/v1': ['CertificateSigningRequest'],
  'events.k8s.io/v1': ['Event'],
  'apiextensions.k8s.io/v1': ['CustomResourceDefinition'],
  'apiregistration.k8s.io/v1': ['APIService'],
  'admissionregistration.k8s.io/v1': [
    'MutatingWebhookConfiguration',
    'ValidatingAdmissionPolicy',
    'ValidatingAdmissionPolicyBinding',
    'ValidatingWebhookConfiguration',
  ],
  'flowcontrol.apiserver.k8s.io/v1': ['FlowSchema', 'PriorityLevelConfiguration'],
  'config.porch.kpt.dev/v1alpha1': ['PackageVariant', 'PackageVariantSet', 'Repository'],
  'config.porch.kpt.dev/v1alpha2': ['PackageVariantSet'],
  'porch.kpt.dev/v1alpha1': ['PackageRevision', 'PackageRevisionResources'],
  'kpt-variants.dev/v1alpha1': [
    'ClusterAPIs',
    'DependencyCheck',
    'InstalledPackage',
    'PackageCatalog',
    'PackageManifest',
    'Rollout',
  ],
}

const builtin = new Set(
  Object.entries(builtinKinds).flatMap(([apiVersion, kinds]) => kinds.map((kind) => kindKey(apiVersion, kind))),
)

/** The key of a kind in the sets of known kinds: `apiVersion|Kind`. */
export function kindKey(apiVersion: string, kind: string): string {
  return `${apiVersion}|${kind}`
}

/** True for a kind every API server serves, or one of Porch's or kpt-variants'. */
export function isBuiltinKind(apiVersion: string, kind: string): boolean {
  return builtin.has(kindKey(apiVersion, kind))
}

/**
 * apimachinery's NoKindMatchError text for one version (what Porch's
 * PackageVariantSet controller puts in its `NoMatchingTargets` condition).
 */
export function noKindMatchMessage(apiVersion: string, kind: string): string {
  return `no matches for kind ${JSON.stringify(kind)} in version ${JSON.stringify(apiVersion)}`
}
