/**
 * A generated fleet for the end-to-end benchmarks: a blueprint repository
 * whose package has `resources` resources (two tagged revisions), `variants`
 * WorkloadClusters with their deployment Repositories, one
 * PackageVariantSet with CEL templates and an injector, and region
 * endpoints to inject.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { execa } from 'execa'

/** The fleet sizes the end-to-end benchmarks render (KPT_VARIANTS_BENCH_SIZES=100,1000 for a shorter run). */
export const fleetSizes = (process.env['KPT_VARIANTS_BENCH_SIZES'] || '100,1000,10000').split(',').map(Number)

const identity = {
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@example.com',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@example.com',
}
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
  const repo = join(dir, 'repos', 'blueprints')
  mkdirSync(repo, { recursive: true })
  const git = (...args: string[]) => execa('git', args, { cwd: repo, env: { ...process.env, ...identity } })
  await git('init', '-q', '-b', 'main')
  for (let n = 1; n <= (options.dependencies ?? 0); n++) {
    for (const [path, text] of Object.entries(dependencyFiles(n))) {
      mkdirSync(join(repo, `dep-${n}`), { recursive: true })
      writeFileSync(join(repo, `dep-${n}`, path), text)
    }
    await git('add', '-A')
    await git('commit', '-q', '-m', `dep-${n} v1`)
    await git('tag', `dep-${n}/v1`)
  }
  for (const revision of [1, 2]) {
    const files = blueprintFiles(options.resources, revision)
    if (options.dependencies) files['manifest.yaml'] = blueprintManifest(options.dependencies)
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(repo, 'app'), { recursive: true })
      writeFileSync(join(repo, 'app', path), text)
    }
    await git('add', '-A')
    await git('commit', '-q', '-m', `app v${revision}`)
    await git('tag', `app/v${revision}`)
  }
  const fleet = join(dir, 'fleet')
  mkdirSync(fleet, { recursive: true })
  const docs: string[] = [
    `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: blueprints\n  namespace: default\nspec:\n  git:\n    repo: ../repos/blueprints\n`,
  ]
  const clusters: string[] = []
  for (let i = 0; i < options.variants; i++) {
    const name = clusterName(i)
    if (!options.oneRepository)
      docs.push(
        `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: ${name}\n  namespace: default\nspec:\n  deployment: true\n  git:\n    repo: ../repos/${name}\n`,
      )
    clusters.push(
      `apiVersion: infra.nephio.org/v1alpha1\nkind: WorkloadCluster\nmetadata:\n  name: ${name}\n  namespace: default\n  labels:\n    site: edge\n    region: ${regionOf(i)}\nspec:\n  clusterName: ${name}\n`,
    )
  }
  writeFileSync(join(fleet, 'repositories.yaml'), docs.join('---\n'))
  writeFileSync(join(fleet, 'clusters.yaml'), clusters.join('---\n'))
  writeFileSync(
    join(fleet, 'endpoints.yaml'),
    regions
      .map(
        (r) =>
          `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${r}-endpoints\n  namespace: default\ndata:\n  API: https://api.${r}.example.com\n`,
      )
      .join('---\n'),
  )
  if (options.oneRepository) {
    // Every variant in one deployment repository, `deployments` (a bare repository: render --git pushes to it).
    docs.push(
      `apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: deployments\n  namespace: default\nspec:\n  deployment: true\n  git:\n    repo: ../repos/deployments.git\n`,
    )
    writeFileSync(join(fleet, 'repositories.yaml'), docs.join('---\n'))
    await execa('git', ['init', '-q', '--bare', '-b', 'main', join(dir, 'repos', 'deployments.git')])
  }
  writeFileSync(join(fleet, 'set.yaml'), setText(options.revision ?? 1, options.oneRepository))
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
  return `apiVersion: config.porch.kpt.dev/v1alpha2
kind: PackageVariantSet
metadata:
  name: app
  namespace: default
spec:
  upstream: {repo: blueprints, package: app, revision: ${revision}}
  targets:
  - objectSelector:
      apiVersion: infra.nephio.org/v1alpha1
      kind: WorkloadCluster
      matchLabels: {site: edge}
    template:
      downstream:
${oneRepository ? '        repo: deployments\n        packageExpr: target.name' : '        repoExpr: target.name'}
      packageContext:
        dataExprs:
        - {key: region, valueExpr: target.labels.region}
        - {key: cluster, valueExpr: target.name}
      injectors:
      - kind: ConfigMap
        nameExpr: target.labels.region + '-endpoints'
`
}
