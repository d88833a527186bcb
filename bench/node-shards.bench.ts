/**
 * The sharded render on a real single-node cluster (test/support/node-cluster.ts, built by
 * scripts/build-cluster.sh; needs root and podman, else SKIPPED, loudly): deploy/'s Indexed Job
 * of 4 shards rendering 2,000 variants read from the cluster into git, against one
 * `render --cluster --git` process of the same fleet on the same machine (baseline). Each run
 * starts from repositories without drafts. On a machine of 2 CPUs the shards share them: the
 * figure is what sharding costs or saves there, not on a cluster of many nodes.
 */
import { join } from 'node:path'
import { installedEngine } from '../scripts/image-names.js'
import { nodeClusterMissing } from '../test/support/node-cluster.js'
import { NodeFleet } from '../test/support/node-fleet.js'
import {
  removeDrafts,
  renderOneProcess,
  runShardJob,
  setUpShardFleet,
  shardPhases,
} from '../test/support/node-shards.js'
import type { ShardFleet } from '../test/support/node-shards.js'
import type { Benchmark } from './harness.js'

const targets = 2_000
const available = Boolean(installedEngine()) && nodeClusterMissing() === ''
if (!available)
  console.log(`  SKIPPED: the node benchmarks need podman and a node: ${nodeClusterMissing() || 'no container engine'}`)

const node = new NodeFleet()
let fleet: Promise<ShardFleet> | undefined
let jobs = 0
let single = 0

export const benchmarks: Benchmark[] = !available
  ? []
  : [
      {
        name: `render ${targets.toLocaleString('en')} variants from the cluster into git as an Indexed Job of 4 shards (pods on one 2-CPU node)`,
        setup: () => (fleet ??= setUpShardFleet(node, targets)),
        iterations: 3,
        warmUp: false,
        units: { count: targets, name: 'variant' },
        beforeEach: (input) => removeDrafts(input as ShardFleet),
        run: async (input) => {
          const { pods } = await runShardJob(input as ShardFleet, `bench-shards-${++jobs}`)
          const phases = shardPhases(pods)
          if (phases.join() !== '0 Succeeded,1 Succeeded,2 Succeeded,3 Succeeded')
            throw new Error(`the Job's pods: ${phases.join(', ')}`)
        },
        baseline: {
          name: 'one `render --cluster --git` process on the same machine',
          iterations: 3,
          beforeEach: (input) => removeDrafts(input as ShardFleet),
          run: (input) => {
            const f = input as ShardFleet
            return renderOneProcess(f, join(f.dir, `single-cache-${++single}`))
          },
        },
        teardown: async () => {
          await fleet
          await node.stop()
        },
      },
    ]
