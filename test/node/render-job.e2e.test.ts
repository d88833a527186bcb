/**
 * The fleet sharded across pods, as deploy/render-sharded-cronjob.yaml runs it, on a real node
 * (test/support/node-shards.ts): a Job made from the CronJob renders 2,000 variants read from the
 * cluster into git in 4 shards, into draft trees byte for byte those of one `render --cluster --git`
 * process over the same fleet; the one shard whose push is refused (once) fails, the Job runs its
 * index again, and every index ends Succeeded.
 */
import { chmodSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describeOnNode } from '../support/node-suite.js'
import { NodeFleet } from '../support/node-fleet.js'
import {
  draftTrees,
  removeDrafts,
  renderOneProcess,
  runShardJob,
  setUpShardFleet,
  shardPhases,
} from '../support/node-shards.js'
import type { ShardFleet } from '../support/node-shards.js'

const timeout = 600_000
const targets = 2_000
const suite = describeOnNode()

suite('the render as an Indexed Job of 4 shards on a real node', () => {
  const node = new NodeFleet()
  let fleet: ShardFleet
  let single: Record<string, string>

  beforeAll(async () => {
    fleet = await setUpShardFleet(node, targets)
  }, timeout)

  afterAll(() => node.stop(), timeout)

  test(
    'one process renders the 2,000 variants from the cluster: the reference',
    async () => {
      const started = Date.now()
      await renderOneProcess(fleet, join(fleet.dir, 'single-cache'))
      console.log(`node: one process rendered ${targets} variants in ${((Date.now() - started) / 1000).toFixed(1)} s`)
      single = await draftTrees(fleet)
      expect(Object.keys(single)).toHaveLength(targets)
      await removeDrafts(fleet)
    },
    timeout,
  )

  test(
    'the Indexed Job renders them in 4 pods into exactly the same trees; a shard whose push is refused is retried',
    async () => {
      // The first push to site-07 is refused (a pre-receive hook that refuses once): whichever shard makes it fails,
      // and the Job runs its index again; the other shards' pods succeed at once.
      const hook = join(fleet.dir, 'repos', 'site-07.git', 'hooks', 'pre-receive')
      writeFileSync(
        hook,
        '#!/bin/sh\n[ -e refused-once ] && exit 0\ntouch refused-once\necho "refused once" >&2\nexit 1\n',
      )
      chmodSync(hook, 0o755)
      const started = Date.now()
      const { job, pods } = await runShardJob(fleet, 'render-sharded')
      console.log(
        `node: the Job of 4 shards rendered ${targets} variants in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      )
      const failed = pods.filter((p) => p['status']['phase'] === 'Failed')
      expect(failed).toHaveLength(1)
      const index = failed[0]!['metadata']['annotations']['batch.kubernetes.io/job-completion-index'] as string
      expect(shardPhases(pods)).toEqual(
        ['0', '1', '2', '3'].flatMap((i) => (i === index ? [`${i} Failed`, `${i} Succeeded`] : [`${i} Succeeded`])),
      )
      expect(job['status']['succeeded']).toBe(4)
      expect(await draftTrees(fleet)).toEqual(single)
    },
    timeout,
  )
})
