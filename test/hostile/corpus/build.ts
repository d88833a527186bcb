/** The pieces hostile inputs are built from: a valid package, each program's valid functionConfig, a ResourceList around them. */

export interface HostileCase {
  name: string
  /** stdin; a function builds it per program, with that program's valid functionConfig. */
  input: (program: string) => string | Buffer
  expect: 'error' | 'any'
  /** For `error`: what an error result must say. */
  message?: RegExp
  /** For `error`: the programs that must fail (the others may not read the bad part); default all. */
  errorIn?: string[]
  /** Run through the real executables too (crash, memory or decoding risks); `only`: there only (slow cases, kept out of jest's slower module runtime). */
  process?: boolean | 'only'
  /** The programs the case is for (the others never read that kind of input); default all. */
  programs?: string[]
  /** The heap the process may use, in MiB (default 512). */
  heapMb?: number
}

export const header = 'apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n'

/** A package as kpt sends it: a Kptfile, its context ConfigMap, and what fan-out and injection read. */
const packageItems = `- apiVersion: kpt.dev/v1
  kind: Kptfile
  metadata:
    name: pkg
    annotations:
      config.kubernetes.io/local-config: "true"
      internal.config.kubernetes.io/path: 'Kptfile'
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: kptfile.kpt.dev
    annotations:
      config.kubernetes.io/local-config: "true"
      internal.config.kubernetes.io/path: 'package-context.yaml'
  data:
    name: pkg
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: endpoints
    namespace: shop
    annotations:
      kpt.dev/config-injection: optional
      internal.config.kubernetes.io/path: 'endpoints.yaml'
  data:
    url: https://example.com
- apiVersion: config.porch.kpt.dev/v1alpha1
  kind: Repository
  metadata:
    name: edge
    namespace: default
    labels:
      region: eu
  spec:
    type: git
    deployment: true
    git:
      repo: https://example.com/edge.git
- apiVersion: porch.kpt.dev/v1alpha1
  kind: PackageRevision
  metadata:
    name: blueprints.nginx.v1
    namespace: default
  spec:
    packageName: nginx
    repository: blueprints
    revision: 1
    workspaceName: v1
    lifecycle: Published
`

const packageVariant = `functionConfig:
  apiVersion: config.porch.kpt.dev/v1alpha1
  kind: PackageVariant
  metadata:
    name: pv
    namespace: shop
  spec:
    upstream: {repo: blueprints, package: nginx, workspaceName: v1}
    downstream: {repo: edge, package: nginx}
    packageContext:
      data: {region: eu}
    pipeline:
      mutators:
      - name: set-labels
        image: set-labels:v1
    injectors:
    - name: endpoints
`

export const packageVariantSet = (target: string) => `functionConfig:
  apiVersion: config.porch.kpt.dev/v1alpha2
  kind: PackageVariantSet
  metadata:
    name: set
    namespace: default
  spec:
    upstream: {repo: blueprints, package: nginx, workspaceName: v1}
    targets:
${target}`

const repositorySelector = `    - repositorySelector:
        matchLabels: {region: eu}
`

/** A valid functionConfig for each program (dependency-check reads the package with none). */
export function validConfig(program: string): string {
  if (program === 'fan-out') return packageVariantSet(repositorySelector)
  if (program === 'dependency-check') return ''
  return packageVariant
}

/** A ResourceList with the package items, extra items, and the program's functionConfig (or `functionConfig`). */
export const list =
  (extraItems = '', functionConfig?: string) =>
  (program: string) =>
    `${header}items:\n${packageItems}${extraItems}${functionConfig ?? validConfig(program)}`

export const configMap = (body: string) =>
  `- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: bad\n    namespace: shop\n${body}`
