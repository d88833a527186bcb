/**
 * The leader's pod label (`--label-pod`): the replica that leads marks its own pod
 * `kpt-variants.dev/leader: "true"` and the one that stops leading unmarks it, so that the
 * webhook Service, selecting the label, sends a git host's calls to the leader while every
 * replica stays Ready (a Deployment whose standby is never Ready never finishes rolling out,
 * and `kpt live apply` would wait for it forever). A replica unmarks its pod as it starts:
 * a restarted container keeps its pod's labels, but not the lease.
 */
import type { ClusterClient } from '../fleet/cluster-client.js'

export const leaderLabel = 'kpt-variants.dev/leader'

export interface PodLabel {
  /** Sets (`true`) or removes the label on the pod. */
  mark(leading: boolean): Promise<void>
}

/** The label of pod `name` in `namespace`, written with a merge patch (RBAC: `patch` on pods there). */
export function podLabel(client: ClusterClient, namespace: string, name: string): PodLabel {
  const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`
  return {
    async mark(leading) {
      const patch = { metadata: { labels: { [leaderLabel]: leading ? 'true' : null } } }
      try {
        await client.request('PATCH', path, {}, patch)
      } catch (err) {
        throw client.failure(err, `${leading ? 'label' : 'unlabel'} pod ${namespace}/${name} (${leaderLabel})`)
      }
    },
  }
}
