/** Generated inputs shared by benchmarks. */

/** A ResourceList text of `n` Deployments plus a Kptfile and package context, as kpt would send it. */
export function packageResourceList(n: number, functionConfig = ''): string {
  const items: string[] = [
    `- apiVersion: kpt.dev/v1
  kind: Kptfile
  metadata:
    name: blueprint
    annotations:
      config.kubernetes.io/local-config: "true"
      config.kubernetes.io/path: 'Kptfile'
      internal.config.kubernetes.io/path: 'Kptfile'`,
    `- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: kptfile.kpt.dev
    annotations:
      config.kubernetes.io/local-config: "true"
      config.kubernetes.io/path: 'package-context.yaml'
      internal.config.kubernetes.io/path: 'package-context.yaml'
  data:
    name: blueprint`,
  ]
  for (let i = 0; i < n; i++) {
    items.push(`- # workload ${i}
  apiVersion: apps/v1
  kind: Deployment
  metadata: # kpt-merge: default/app-${i}
    name: app-${i}
    namespace: default
    labels:
      app: app-${i}
    annotations:
      config.kubernetes.io/index: '0'
      config.kubernetes.io/path: 'app-${i}.yaml'
      internal.config.kubernetes.io/index: '0'
      internal.config.kubernetes.io/path: 'app-${i}.yaml'
      internal.kpt.dev/upstream-identifier: 'apps|Deployment|default|app-${i}'
  spec:
    replicas: 3
    template:
      spec:
        containers:
        - name: app
          image: "registry.example.com/app:1.${i}.0" # pinned
          ports:
          - containerPort: 8080`)
  }
  return `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
${items.join('\n')}
${functionConfig}`
}

/** A `functionConfig:` block for package-context: a ConfigMap of keys to set. */
export const packageContextConfig = `functionConfig:
  apiVersion: v1
  kind: ConfigMap
  metadata:
    name: function-input
  data:
    region: us-east1
    tier: gold`

/** A `functionConfig:` block: a PackageVariant with package context, a pipeline function and an injector. */
export const packageVariantConfig = `functionConfig:
  apiVersion: config.porch.kpt.dev/v1alpha1
  kind: PackageVariant
  metadata:
    name: blueprint-us-east1
    namespace: edge
  spec:
    upstream: {repo: blueprints, package: blueprint}
    downstream: {repo: edge, package: blueprint}
    packageContext:
      data: {region: us-east1, tier: gold}
    pipeline:
      mutators:
      - {name: set-labels, image: set-labels:v0.2.0, configMap: {region: us-east1}}
    injectors:
    - {kind: ConfigMap, name: us-east1-endpoints}`

/** The in-cluster object packageVariantConfig's injector names (a `--sources` file). */
export const endpointsSource = `apiVersion: v1
kind: ConfigMap
metadata:
  name: us-east1-endpoints
  namespace: edge
data:
  api: https://api.us-east1.example.com
`

/** `n` resources plus the Kptfile, package context and a required injection point, with packageVariantConfig as functionConfig. */
export function packageVariantResourceList(n: number): string {
  return packageResourceList(n, packageVariantConfig).replace('\nitems:\n', `\nitems:\n${injectionPoint}`)
}

const injectionPoint = `- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: endpoints
    annotations:
      kpt.dev/config-injection: required
      config.kubernetes.io/path: 'endpoints.yaml'
      internal.config.kubernetes.io/path: 'endpoints.yaml'
  data:
    api: https://api.example.com # placeholder
`
