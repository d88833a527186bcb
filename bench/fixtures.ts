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
