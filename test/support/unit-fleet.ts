/** The unit tests' small fleet: the nginx blueprint's revisions as the planner sees them, and the Repositories. */
import type { PackageRevision } from '../../orchestrator/upstream/revisions.js'
import { documents, repositoryYaml } from '../../scripts/fleet-builder.js'

/** Revision `n` of the nginx blueprint, published in `blueprints` as tag `nginx/vN`. */
export const nginxRevision = (n: number, commit = `c${n}`): PackageRevision => ({
  kind: 'published',
  repository: 'blueprints',
  namespace: 'default',
  packageName: 'nginx',
  revision: n,
  workspaceName: `v${n}`,
  ref: `nginx/v${n}`,
  commit,
  directory: 'nginx',
})

/** The Repositories `blueprints` and a deployment repository per name in `deployments`. */
export function repositories(...deployments: string[]): string {
  return documents([
    repositoryYaml({ name: 'blueprints', repo: '../repos/blueprints' }),
    ...deployments.map((name) => repositoryYaml({ name, repo: `../repos/${name}`, deployment: true })),
  ])
}
