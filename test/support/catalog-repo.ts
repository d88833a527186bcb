/** Packages that declare themselves (a PackageManifest), for the e2e tests of dependencies and versions: trees to commit and tag. */
import { source } from './source.js'
import type { TreeSpec } from './git-repo.js'

/** A package's Kptfile, described as `description`. */
export function kptfile(name: string, description = name): string {
  return source`
    apiVersion: kpt.dev/v1
    kind: Kptfile
    metadata:
      name: ${name}
      annotations:
        config.kubernetes.io/local-config: "true"
    info:
      description: ${description}
  `
}

/** A PackageManifest; `more` is appended under `spec` (two spaces in). */
export function manifest(name: string, version: string, more = ''): string {
  return (
    source`
    apiVersion: kpt-variants.dev/v1alpha1
    kind: PackageManifest
    metadata:
      name: ${name}
      annotations:
        config.kubernetes.io/local-config: "true"
    spec:
      version: ${version}
  ` + more
  )
}

/** `  dependencies:` needing each `[name, range]`. */
export function needs(...deps: [string, string][]): string {
  return `  dependencies:\n${deps.map(([name, range]) => `  - name: ${name}\n    version: "${range}"\n`).join('')}`
}

/** A package `name` at `version`: Kptfile, manifest (with `more`), a Deployment naming the version in its image. */
export function declaredPackage(name: string, version: string, more = ''): TreeSpec {
  return {
    [`${name}/Kptfile`]: kptfile(name),
    [`${name}/manifest.yaml`]: manifest(name, version, more),
    [`${name}/deployment.yaml`]: source`
      apiVersion: apps/v1
      kind: Deployment
      metadata:
        name: ${name}
      spec:
        replicas: 1
        template:
          spec:
            containers:
            - name: main
              image: example.com/${name}:${version}
    `,
  }
}

/** A CRD file defining `group`'s `kind`, for package `pkg` (`file` in it). */
export function crdFile(pkg: string, group: string, kind: string, file = `crd-${kind.toLowerCase()}.yaml`): TreeSpec {
  return {
    [`${pkg}/${file}`]: source`
      apiVersion: apiextensions.k8s.io/v1
      kind: CustomResourceDefinition
      metadata:
        name: ${kind.toLowerCase()}s.${group}
      spec:
        group: ${group}
        names: {kind: ${kind}, plural: ${kind.toLowerCase()}s}
        scope: Namespaced
        versions:
        - {name: v1, served: true, storage: true}
    `,
  }
}

/** A Repository of the fleet; `deployment` for a cluster's, `labels` on it. */
export function repository(name: string, deployment: boolean, labels: Record<string, string> = {}): string {
  const meta =
    Object.keys(labels).length > 0
      ? `, labels: {${Object.entries(labels)
          .map(([k, v]) => `${k}: "${v}"`)
          .join(', ')}}`
      : ''
  return source`
    apiVersion: config.porch.kpt.dev/v1alpha1
    kind: Repository
    metadata: {name: ${name}, namespace: default${meta}}
    spec: {type: git, deployment: ${deployment}, git: {repo: ../repos/${name}, branch: main}}
  `
}

/** The PackageVariantSet of the catalog's edge-monitor blueprint (revision 1) over the clusters' repositories. */
export const edgeMonitorSet = (clusters: readonly string[]): string => source`
  apiVersion: config.porch.kpt.dev/v1alpha2
  kind: PackageVariantSet
  metadata: {name: edge-monitor, namespace: default}
  spec:
    upstream: {repo: catalog, package: edge-monitor, revision: 1}
    targets:
    - repositories: [${clusters.map((c) => `{name: ${c}}`).join(', ')}]
`
