/**
 * The namespace kubectl would give an object applied without one. Manifests
 * written for `kubectl apply` often have no `metadata.namespace`: Porch puts
 * them in the namespace they are applied to. A fleet directory has none, so
 * every namespaced object without a namespace gets the default one (`default`,
 * or `--namespace`), here and nowhere else; cluster-scoped objects keep none.
 */
import type { KubeObject } from '../../functions/krm/index.js'

/** The cluster-scoped kinds of the Kubernetes API (kubectl api-resources --namespaced=false), by group. */
const clusterScoped = new Set([
  '/Namespace',
  '/Node',
  '/PersistentVolume',
  '/ComponentStatus',
  'storage.k8s.io/StorageClass',
  'storage.k8s.io/CSIDriver',
  'storage.k8s.io/CSINode',
  'storage.k8s.io/VolumeAttachment',
  'apiextensions.k8s.io/CustomResourceDefinition',
  'apiregistration.k8s.io/APIService',
  'rbac.authorization.k8s.io/ClusterRole',
  'rbac.authorization.k8s.io/ClusterRoleBinding',
  'scheduling.k8s.io/PriorityClass',
  'admissionregistration.k8s.io/MutatingWebhookConfiguration',
  'admissionregistration.k8s.io/ValidatingWebhookConfiguration',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicy',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding',
  'node.k8s.io/RuntimeClass',
  'networking.k8s.io/IngressClass',
  'certificates.k8s.io/CertificateSigningRequest',
  'flowcontrol.apiserver.k8s.io/FlowSchema',
  'flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration',
])

/**
 * Puts every namespaced object without a namespace in `namespace`. A kind is
 * cluster-scoped when the API says so, when a CustomResourceDefinition of
 * the fleet declares it `scope: Cluster`, or when it is one of `moreClusterScoped`
 * (`group/Kind`: what an API server's discovery said, with `--cluster`);
 * kpt's local-config objects (a Kptfile) are left alone.
 */
export function applyDefaultNamespace(
  objects: readonly KubeObject[],
  namespace: string,
  moreClusterScoped: readonly string[] = [],
): void {
  const scoped = new Set([...clusterScoped, ...moreClusterScoped])
  for (const object of objects) {
    if (object.kind !== 'CustomResourceDefinition' || object.get(['spec', 'scope']) !== 'Cluster') continue
    const group = object.get(['spec', 'group'])
    const kind = object.get(['spec', 'names', 'kind'])
    if (typeof group === 'string' && typeof kind === 'string') scoped.add(`${group}/${kind}`)
  }
  for (const object of objects) {
    if (
      object.namespace !== '' ||
      scoped.has(`${object.group}/${object.kind}`) ||
      object.getAnnotation('config.kubernetes.io/local-config') === 'true'
    )
      continue
    object.set(['metadata', 'namespace'], namespace)
  }
}
