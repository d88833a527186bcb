/** CustomResourceDefinitions the tests install besides deploy/'s. */
import type { Json } from './kube-client.js'

/** A CRD without a schema (any fields kept), for the kinds the fleets use that have no CRD in deploy/. */
export function schemalessCrd(group: string, kind: string, scope: 'Namespaced' | 'Cluster' = 'Namespaced'): Json {
  const plural = `${kind.toLowerCase()}${kind.endsWith('s') ? '' : 's'}`
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope,
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      versions: [
        {
          name: 'v1alpha1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          subresources: { status: {} },
        },
      ],
    },
  }
}
