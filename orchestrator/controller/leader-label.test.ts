import type { ClusterClient } from '../fleet/cluster-client.js'
import { leaderLabel, podLabel } from './leader-label.js'

/** A client that records each request, and fails those `refuse` says. */
function recordingClient(refuse = false) {
  const requests: { method: string; path: string; body: unknown }[] = []
  const client = {
    async request(method: string, path: string, _query: unknown, body: unknown) {
      requests.push({ method, path, body })
      if (refuse) throw Object.assign(new Error('forbidden'), { code: 403 })
      return {}
    },
    failure: (err: unknown, doing: string) => new Error(`${doing}: ${(err as Error).message}`),
  } as unknown as ClusterClient
  return { client, requests }
}

test('the leader sets the label on its pod with a merge patch, and removes it (null) when it stops leading', async () => {
  const { client, requests } = recordingClient()
  const label = podLabel(client, 'kpt-variants', 'controller-7d9-x2')
  await label.mark(true)
  await label.mark(false)
  expect(requests).toEqual([
    {
      method: 'PATCH',
      path: '/api/v1/namespaces/kpt-variants/pods/controller-7d9-x2',
      body: { metadata: { labels: { [leaderLabel]: 'true' } } },
    },
    {
      method: 'PATCH',
      path: '/api/v1/namespaces/kpt-variants/pods/controller-7d9-x2',
      body: { metadata: { labels: { [leaderLabel]: null } } },
    },
  ])
})

test('a refused write names the pod and the label', async () => {
  const { client } = recordingClient(true)
  await expect(podLabel(client, 'ns', 'pod').mark(true)).rejects.toThrow(
    'label pod ns/pod (kpt-variants.dev/leader): forbidden',
  )
})
