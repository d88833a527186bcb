/** Reading the fleet from a cluster for a command (`--cluster`): its expected failures are usage errors. */
import type { ClusterFleet } from '../fleet/cluster.js'
import { UsageError } from './cli-io.js'
import type { CliIO } from './cli-io.js'

/** The `--cluster` options every command that reads a cluster takes. */
export interface ClusterOptions {
  kubeconfig?: string
  context?: string
  namespace?: string
}

/**
 * Lists the fleet from the cluster into a snapshot directory (see fleet/cluster.ts), printing its
 * warnings unless `printWarnings` is false; a ClusterError becomes a usage error (exit 1, no stack).
 */
export async function readClusterFleet(
  options: ClusterOptions,
  cacheDir: string,
  io: CliIO,
  { printWarnings = true } = {},
): Promise<ClusterFleet> {
  // Loaded only with --cluster: most runs read a directory.
  const { ClusterError, readCluster } = await import('../fleet/cluster.js')
  try {
    const cluster = await readCluster({
      ...(options.kubeconfig !== undefined ? { kubeconfig: options.kubeconfig } : {}),
      ...(options.context !== undefined ? { context: options.context } : {}),
      ...(options.namespace !== undefined ? { namespace: options.namespace } : {}),
      cacheDir,
      cwd: io.cwd,
      env: io.env,
    })
    if (printWarnings) for (const warning of cluster.warnings) io.stderr(`kpt-variants: warning: ${warning}\n`)
    return cluster
  } catch (err) {
    if (err instanceof ClusterError) throw new UsageError(err.message)
    throw err
  }
}
