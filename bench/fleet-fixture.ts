/**
 * A generated fleet for the end-to-end benchmarks: a blueprint repository
 * whose package has `resources` resources (two tagged revisions), `variants`
 * WorkloadClusters with their deployment Repositories, one
 * PackageVariantSet with CEL templates and an injector, and region
 * endpoints to inject.
 */
import { join } from 'node:path'
import {
  createRepo,
  documents,
  gitIdentity,
  initBareRepos,
  packageVariantSetYaml,
  regionEndpointsYaml,
  repositoryYaml,
  under,
  workloadClusterYaml,
  writeTree,
} from '../scripts/fleet-builder.js'
import type { Revision } from '../scripts/fleet-builder.js'

/** The fleet sizes the end-to-end benchmarks render (KPT_VARIANTS_BENCH_SIZES=100,1000 for a shorter run). */
export const fleetSizes = (process.env['KPT_VARIANTS_BENCH_SIZES'] || '100,1000,10000').split(',').map(Number)

const regions = ['us-east1', 'us-west1', 'eu-west1', 'ap-south1']

/** The blueprint package: a Kptfile, an injection point, and `resources - 1` Deployments and Services. */
export function blueprintFiles(resources: number, revision: number): Record<string, string> {
  const files: Record<string, string> = {
    Kptfile:
      'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n  annotations:\n    config.kubernetes.io/local-config: "true"\ninfo:\n  description: benchmark blueprint\n',
    'endpoints.yaml':
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: endpoints\n  namespace: app\n  annotations:\n    kpt.dev/config-injection: required\ndata:\n  API: https://api.example.com\n',
  }
  for (let i = 0; i < resources - 1; i++) {
    const name = `svc-${String(i).padStart(3, '0')}`
    files[`${name}.yaml`] =
      i % 2 === 0
        ? `# Service ${i}.\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ${name}\n  namespace: app\n  labels:\n    app: ${name}\nspec:\n  replicas: 2 # per cluster\n  selector:\n    matchLabels:\n      app: ${name}\n  template:\n    metadata:\n      labels:\n        app: ${name}\n    spec:\n      containers:\n      - name: main\n        image: example.com/${name}:${revision}.0.0\n        ports:\n        - containerPort: 8080\n        env:\n        - name: MODE\n          value: "production"\n`
        : `apiVersion: v1\nkind: Service\nmetadata:\n  name: ${name}\n  namespace: app\nspec:\n  selector:\n    app: ${name}\n  ports:\n  - port: 80\n    targetPort: 8080\n`
  }
  return files
}

/** The package `dep-<n>` the blueprint needs when the fleet has dependencies: a manifest, a Deployment and a Service. */
export function dependencyFiles(n: number): Record<string, string> {
  const name = `dep-${n}`
  return {
    Kptfile: `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: ${name}\n  annotations:\n    config.kubernetes.io/local-config: "true"\ninfo:\n  description: a dependency\n`,
    'manifest.yaml': `apiVersion: kpt-variants.dev/v1alpha1\nkind: PackageManifest\nmetadata:\n  name: ${name}\n  annotations:\n    config.kubernetes.io/local-config: "true"\nspec:\n  version: v1.0.0\n`,
    'deployment.yaml': `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ${name}\n  namespace: ${name}\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers:\n      - name: main\n        image: example.com/${name}:1.0.0\n`,
    'service.yaml': `apiVersion: v1\nkind: Service\nmetadata:\n  name: ${name}\n  namespace: ${name}\nspec:\n  ports:\n  - port: 80\n`,
  }
}

/** The blueprint's PackageManifest when it needs `count` dependencies (dep-1 ... dep-N, any version from v1.0.0). */
function blueprintManifest(count: number): string {
  const deps = Array.from({ length: count }, (_, i) => `  - name: dep-${i + 1}\n    version: ">= v1.0.0"\n`).join('')
  return `apiVersion: kpt-variants.dev/v1alpha1\nkind: PackageManifest\nmetadata:\n  name: app\n  annotations:\n    config.kubernetes.io/local-config: "true"\nspec:\n  version: v1.0.0\n  dependencies:\n${deps}`
}

/**
 * Writes the fleet under `dir` (`dir/fleet`, `dir/repos/blueprints`); returns
 * the fleet directory. With `dependencies`, the blueprint needs that many
 * packages, published beside it (`dep-<n>/v1`), which every repository then
 * gets installed.
 */
export async function createFleet(
  dir: string,
  options: { variants: number; resources: number; revision?: number; oneRepository?: boolean; dependencies?: number },
): Promise<string> {
  const dependencies = Array.from({ length: options.dependencies ?? 0 }, (_, i) => i + 1)
  const app = (revision: number): Revision => {
    const files = blueprintFiles(options.resources, revision)
    if (options.dependencies) files['manifest.yaml'] = blueprintManifest(options.dependencies)
    return [`app/v${revision}`, under('app', files), `app v${revision}`]
  }
  await createRepo(
    join(dir, 'repos', 'blueprints'),
    [
      ...dependencies.map((n): Revision => [`dep-${n}/v1`, under(`dep-${n}`, dependencyFiles(n)), `dep-${n} v1`]),
      app(1),
      app(2),
    ],
    gitIdentity('bench'),
  )
  const names = Array.from({ length: options.variants }, (_, i) => clusterName(i))
  const repositories = [repositoryYaml({ name: 'blueprints', repo: '../repos/blueprints' })]
  if (options.oneRepository) {
    // Every variant in one deployment repository, `deployments` (a bare repository: render --git pushes to it).
    repositories.push(repositoryYaml({ name: 'deployments', repo: '../repos/deployments.git', deployment: true }))
    await initBareRepos(join(dir, 'repos'), ['deployments'])
  } else repositories.push(...names.map((name) => repositoryYaml({ name, repo: `../repos/${name}`, deployment: true })))
  const fleet = join(dir, 'fleet')
  writeTree(fleet, {
    'repositories.yaml': documents(repositories),
    'clusters.yaml': documents(
      names.map((name, i) => workloadClusterYaml({ name, labels: { site: 'edge', region: regionOf(i) } })),
    ),
    'endpoints.yaml': regionEndpointsYaml(regions, 'API'),
    'set.yaml': setText(options.revision ?? 1, options.oneRepository),
  })
  return fleet
}

/** The name of WorkloadCluster `i`, which is also its deployment repository's. */
export function clusterName(i: number): string {
  return `edge-${String(i).padStart(5, '0')}`
}

/** The region label of WorkloadCluster `i`. */
export function regionOf(i: number): string {
  return regions[i % regions.length]!
}

/**
 * The PackageVariant the set expands to for cluster `i` (downstream
 * `edge-NNNNN/app`), as a functionConfig for `kpt fn eval --exec
 * package-variant`: what the orchestrator applies to that variant.
 */
export function packageVariantText(i: number, revision = 1): string {
  const cluster = clusterName(i)
  return `apiVersion: config.porch.kpt.dev/v1alpha1
kind: PackageVariant
metadata:
  name: app-${cluster}-app
  namespace: default
spec:
  upstream: {repo: blueprints, package: app, revision: ${revision}}
  downstream: {repo: ${cluster}, package: app}
  packageContext:
    data: {region: ${regionOf(i)}, cluster: ${cluster}}
  injectors:
  - {kind: ConfigMap, name: ${regionOf(i)}-endpoints}
`
}

/** The PackageVariantSet, at an upstream revision: a package `app` per cluster repository, or a package per cluster in `deployments`. */
export function setText(revision: number, oneRepository = false): string {
  return packageVariantSetYaml({
    name: 'app',
    upstream: { repo: 'blueprints', package: 'app', revision },
    matchLabels: { site: 'edge' },
    downstream: oneRepository ? { repo: 'deployments', packageExpr: 'target.name' } : { repoExpr: 'target.name' },
  })
}
