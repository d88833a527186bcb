/** The controller's Lease (`coordination.k8s.io/v1`) on the API server: the LeaseApi of lease.ts. */
import type { ClusterClient } from '../fleet/cluster-client.js'
import type { LeaseApi, LeaseSpec } from './lease.js'

/** Reads and writes the Lease `name` in `namespace`: get, create, and replace at a resourceVersion (a 409 is `false`). */
export function leaseApi(client: ClusterClient, namespace: string, name: string): LeaseApi {
  const collection = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`
  const path = `${collection}/${encodeURIComponent(name)}`
  const object = (spec: LeaseSpec, resourceVersion?: string) => ({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace, ...(resourceVersion ? { resourceVersion } : {}) },
    spec,
  })
  const write = async (method: 'POST' | 'PUT', at: string, body: unknown, doing: string): Promise<string | false> => {
    try {
      const written = (await client.request(method, at, {}, body)) as { metadata?: { resourceVersion?: string } }
      return written.metadata?.resourceVersion ?? ''
    } catch (err) {
      if (client.isApiException(err) && err.code === 409) return false
      throw client.failure(err, doing)
    }
  }
  return {
    async get() {
      const lease = (await client.get(path, `get lease ${namespace}/${name}`)) as
        { spec?: LeaseSpec; metadata?: { resourceVersion?: string } } | undefined
      return lease ? { spec: lease.spec ?? {}, resourceVersion: lease.metadata?.resourceVersion ?? '' } : undefined
    },
    create: (spec) => write('POST', collection, object(spec), `create lease ${namespace}/${name}`),
    update: (spec, resourceVersion) =>
      write('PUT', path, object(spec, resourceVersion), `update lease ${namespace}/${name}`),
  }
}
