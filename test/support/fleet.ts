/**
 * The fleet the orchestrator's end-to-end tests render: an nginx blueprint
 * with two revisions (v2 changes the image and adds a probe), edge clusters
 * as Nephio WorkloadClusters, region endpoints to inject, and the nginx
 * PackageVariantSet, laid out as `npm run demo` lays out examples/fleet.
 */
import {
  documents,
  packageVariantSetYaml,
  regionEndpointsYaml,
  repositoryYaml,
  workloadClusterYaml,
} from '../../scripts/fleet-builder.js'
import { createRepo } from './git-repo.js'
import type { TreeSpec } from './git-repo.js'
import { source } from './source.js'

// ---------------------------------------------------------------------------
// The upstream: nginx v1 and v2 (v2 changes the image and adds a probe).

export function blueprint(image: string, extraContainerFields = ''): TreeSpec {
  return {
    'nginx/Kptfile': source`
      apiVersion: kpt.dev/v1
      kind: Kptfile
      metadata:
        name: nginx
        annotations:
          config.kubernetes.io/local-config: "true"
      info:
        description: nginx web tier for edge clusters
    `,
    'nginx/README.md': '# nginx\n\nThe web tier every edge cluster runs.\n',
    'nginx/deployment.yaml':
      source`
      # The web tier.
      apiVersion: apps/v1
      kind: Deployment
      metadata:
        name: nginx
        namespace: web
        labels:
          app: nginx
      spec:
        replicas: 2 # raise per cluster as traffic grows
        selector:
          matchLabels:
            app: nginx
        template:
          metadata:
            labels:
              app: nginx
          spec:
            containers:
            - name: nginx
              image: ${image}
              ports:
              - containerPort: 8080
              envFrom:
              - configMapRef:
                  name: region-endpoints
    ` + extraContainerFields,
    'nginx/region-endpoints.yaml': source`
      # Filled in per cluster from the region's endpoints (config injection).
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: region-endpoints
        namespace: web
        annotations:
          kpt.dev/config-injection: required
      data:
        API_ENDPOINT: https://api.example.com
    `,
  }
}

export const v1Image = 'nginx:1.25.5'
export const v2Image = 'nginx:1.27.3'
export const nginxV1 = blueprint(v1Image)
export const nginxV2 = blueprint(
  v2Image,
  '        readinessProbe:\n          httpGet:\n            path: /healthz\n            port: 8080\n',
)

/** The blueprints repository at `dir`: package nginx tagged `nginx/v1` and `nginx/v2`. */
export function createBlueprints(dir: string): Promise<void> {
  return createRepo(dir, [
    ['nginx/v1', nginxV1],
    ['nginx/v2', nginxV2],
  ])
}

// ---------------------------------------------------------------------------
// The fleet.

export interface Cluster {
  name: string
  region: string
  /** nephio.org/site-type; the set selects `edge`. */
  siteType?: string
}

export interface FleetOptions {
  clusters: Cluster[]
  revision?: number
  deletionPolicy?: 'delete' | 'orphan'
  team?: string
  /** More files of the fleet directory. */
  extra?: Record<string, string>
}

export const regions = ['us-east1', 'us-west1', 'eu-west1']

export function repository(name: string, deployment: boolean): string {
  return repositoryYaml({
    name,
    repo: `../repos/${name}`,
    ...(deployment ? { deployment } : { description: 'blueprints' }),
  })
}

/** A cluster's WorkloadCluster: labelled with its site type and region, and `extraLabels`. */
export function workloadCluster(
  c: Cluster,
  extraLabels: Record<string, string> = {},
  ready?: 'True' | 'False',
): string {
  const labels = { 'nephio.org/site-type': c.siteType ?? 'edge', region: c.region, ...extraLabels }
  return workloadClusterYaml({ name: c.name, labels, ...(ready ? { ready } : {}) })
}

export function fleetFiles(options: FleetOptions): Record<string, string> {
  const { clusters, revision = 1, deletionPolicy = 'delete', team = 'web-platform' } = options
  return {
    'repositories.yaml': documents([repository('blueprints', false), ...clusters.map((c) => repository(c.name, true))]),
    'clusters.yaml': documents(clusters.map((c) => workloadCluster(c))),
    'endpoints.yaml': regionEndpointsYaml(regions, 'API_ENDPOINT'),
    'nginx-set.yaml': packageVariantSetYaml({
      name: 'nginx',
      upstream: { repo: 'blueprints', package: 'nginx', revision },
      matchLabels: { 'nephio.org/site-type': 'edge' },
      downstream: { repoExpr: 'target.name' },
      data: { team },
      deletionPolicy,
    }),
    ...options.extra,
  }
}

export const threeClusters: Cluster[] = [
  { name: 'edge-01', region: 'us-east1' },
  { name: 'edge-02', region: 'us-west1' },
  { name: 'edge-03', region: 'eu-west1' },
]
