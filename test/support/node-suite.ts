/** The skip rule of the node suites (test/node/), apart from node-fleet.ts, which the benchmarks import without jest. */
import { installedEngine } from '../../scripts/image-names.js'
import { nodeClusterMissing } from './node-cluster.js'
import { describeIfAvailable } from './requires.js'

/** `describe` for a suite on a test node: skipped, saying what is missing, where a node cannot run (failing in CI). */
export function describeOnNode(): jest.Describe {
  const missing = [
    ...(installedEngine() ? [] : ['no container engine (apt-get install podman runc)']),
    nodeClusterMissing(),
  ]
    .filter(Boolean)
    .join('; ')
  return describeIfAvailable(missing === '', `the e2e tests on a real node: ${missing}`)
}
