/**
 * The CustomResourceDefinitions of the APIs we read, with Porch's schemas
 * (its controller-gen output at the versions it serves): Repository and
 * PackageVariant v1alpha1, PackageVariantSet v1alpha2; and our own kinds
 * (kpt-variants.dev/v1alpha1): Rollout (docs/rollouts.md) and the dependency
 * kinds PackageCatalog, InstalledPackage and ClusterAPIs
 * (docs/package-dependencies.md). The schemas are built
 * against our API types: `fields<T>()` takes exactly the fields of T, so a
 * field added to a type without a schema (or the reverse) does not compile.
 * `npm run crds` writes them into deploy/crds; a test checks they are current
 * and field by field equal to Porch's (functions/api/porch-crd-fields.txt).
 */
import { stringify } from 'yaml'
import type { Downstream, InjectionSelector, PackageContext, PackageVariantSpec, Upstream } from './package-variant.js'
import type {
  DownstreamTemplate,
  InjectorTemplate,
  MapExpr,
  PackageContextTemplate,
  PackageVariantSetSpec,
  PackageVariantTemplate,
  RepositoryTarget,
  Target,
} from './package-variant-set.js'
import { rolloutGroup, rolloutKind, rolloutVersion } from './rollout.js'
import type {
  HealthGate,
  RolloutApprovalSpec,
  RolloutGatesSpec,
  RolloutSpec,
  RolloutStatus,
  RolloutStepSpec,
} from './rollout.js'
import type { RolloutWindowSpec } from './rollout-windows.js'
import { clusterAPIsKind, dependenciesGroup, installedPackageKind, packageCatalogKind } from './dependencies.js'
import type { PackageSource } from './dependencies.js'

/** An OpenAPI v3 schema, as much of it as these CRDs use. */
export interface Schema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'boolean'
  description?: string
  properties?: Record<string, Schema>
  items?: Schema
  additionalProperties?: Schema
  required?: string[]
  format?: string
  enum?: string[]
  default?: string
  minimum?: number
  minLength?: number
  maxLength?: number
  pattern?: string
  'x-kubernetes-map-type'?: 'atomic'
  'x-kubernetes-list-type'?: 'atomic' | 'map'
  'x-kubernetes-list-map-keys'?: string[]
  'x-kubernetes-int-or-string'?: true
  'x-kubernetes-validations'?: { rule: string; message: string }[]
}

const string = (extra: Schema = {}): Schema => ({ type: 'string', ...extra })
const integer = (extra: Schema = {}): Schema => ({ type: 'integer', ...extra })
const boolean = (): Schema => ({ type: 'boolean' })
const array = (items: Schema, extra: Schema = {}): Schema => ({ type: 'array', items, ...extra })
const stringMap = (): Schema => ({ type: 'object', additionalProperties: string() })
const object = (properties: Record<string, Schema>, extra: Schema = {}): Schema => ({
  type: 'object',
  properties,
  ...extra,
})

/** An object schema whose properties are exactly the fields of T (checked by the compiler). */
function fields<T>(properties: { [K in keyof Required<T>]: Schema }, extra: Schema = {}): Schema {
  return object(properties, extra)
}

/** `metav1.Condition`, with the API server's own limits. */
const condition = object(
  {
    lastTransitionTime: string({ format: 'date-time' }),
    message: string({ maxLength: 32768 }),
    observedGeneration: integer({ format: 'int64', minimum: 0 }),
    reason: string({ maxLength: 1024, minLength: 1, pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$' }),
    status: string({ enum: ['True', 'False', 'Unknown'] }),
    type: string({
      maxLength: 316,
      pattern:
        '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
    }),
  },
  { required: ['lastTransitionTime', 'message', 'reason', 'status', 'type'] },
)
const conditions = array(condition)

/** `metav1.LabelSelector`'s fields, inlined where Porch inlines them. */
const labelSelectorFields = {
  matchExpressions: array(
    object(
      { key: string(), operator: string(), values: array(string(), { 'x-kubernetes-list-type': 'atomic' }) },
      { required: ['key', 'operator'] },
    ),
    {
      'x-kubernetes-list-type': 'atomic',
    },
  ),
  matchLabels: stringMap(),
}
const labelSelector = object(labelSelectorFields, { 'x-kubernetes-map-type': 'atomic' })

/** kpt's `Selector` (pipeline function selectors and exclusions). */
const kptSelector = object({
  annotations: stringMap(),
  apiVersion: string(),
  kind: string(),
  labels: stringMap(),
  name: string(),
  namespace: string(),
})

/** kpt's `Function`, as the Kptfile pipeline has it. */
const kptFunction = object({
  configMap: stringMap(),
  configPath: string(),
  exclude: array(kptSelector),
  exec: string(),
  image: string(),
  name: string(),
  selectors: array(kptSelector),
  tag: string(),
})

/** kpt's `ResultList`, as Porch copies a render's results into `status.downstreamTargets[].renderStatus`. */
const resultList = object(
  {
    apiVersion: string(),
    exitCode: integer(),
    items: array(
      object(
        {
          exec: string(),
          exitCode: integer(),
          image: string(),
          results: array(
            object({
              field: object({ currentValue: string(), path: string(), proposedValue: string() }),
              file: object({ index: integer(), path: string() }),
              message: string(),
              resourceRef: object({ apiVersion: string(), kind: string(), name: string(), namespace: string() }),
              severity: string(),
              tags: stringMap(),
            }),
          ),
          stderr: string(),
        },
        { required: ['exitCode'] },
      ),
    ),
    kind: string(),
    metadata: { type: 'object' },
  },
  { required: ['exitCode'] },
)

const upstream = fields<Upstream>({ package: string(), repo: string(), revision: integer(), workspaceName: string() })

const packageVariantSpec = fields<PackageVariantSpec>({
  adoptionPolicy: string(),
  annotations: stringMap(),
  deletionPolicy: string(),
  downstream: fields<Downstream>({ package: string(), repo: string() }),
  injectors: array(
    fields<InjectionSelector>(
      { group: string(), kind: string(), name: string(), version: string() },
      { required: ['name'] },
    ),
  ),
  labels: stringMap(),
  packageContext: fields<PackageContext>({ data: stringMap(), removeKeys: array(string()) }),
  pipeline: object({ mutators: array(kptFunction), validators: array(kptFunction) }),
  upstream,
})

const mapExprs = array(fields<MapExpr>({ key: string(), keyExpr: string(), value: string(), valueExpr: string() }))

/** A pipeline function template: kpt's Function plus `configMapExprs`. */
const functionTemplate = object({ ...kptFunction.properties, configMapExprs: mapExprs })

const packageVariantTemplate = fields<PackageVariantTemplate>({
  adoptionPolicy: string(),
  annotationExprs: mapExprs,
  annotations: stringMap(),
  deletionPolicy: string(),
  downstream: fields<DownstreamTemplate>({
    package: string(),
    packageExpr: string(),
    repo: string(),
    repoExpr: string(),
  }),
  injectors: array(
    fields<InjectorTemplate>({
      group: string(),
      kind: string(),
      name: string(),
      nameExpr: string(),
      version: string(),
    }),
  ),
  labelExprs: mapExprs,
  labels: stringMap(),
  packageContext: fields<PackageContextTemplate>({
    data: stringMap(),
    dataExprs: mapExprs,
    removeKeyExprs: array(string()),
    removeKeys: array(string()),
  }),
  pipeline: object({ mutators: array(functionTemplate), validators: array(functionTemplate) }),
})

const packageVariantSetSpec = fields<PackageVariantSetSpec>({
  targets: array(
    fields<Target>({
      objectSelector: object(
        { apiVersion: string(), kind: string(), ...labelSelectorFields, name: string() },
        { 'x-kubernetes-map-type': 'atomic' },
      ),
      repositories: array(
        fields<RepositoryTarget>({ name: string(), packageNames: array(string()) }, { required: ['name'] }),
      ),
      repositorySelector: labelSelector,
      template: packageVariantTemplate,
    }),
  ),
  upstream,
})

const secretRef = object({ name: string() }, { required: ['name'] })

/** Porch's Repository rules, checked by the API server (CEL). */
const repositoryRules = [
  {
    message: 'metadata.name must conform to the RFC1123 DNS label standard',
    rule: "self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",
  },
  { message: 'metadata.name must be no more than 63 characters', rule: 'size(self.metadata.name) <= 63' },
  { message: 'spec.type is immutable', rule: '!has(oldSelf.spec.type) || self.spec.type == oldSelf.spec.type' },
  {
    message: 'spec.git.repo is immutable',
    rule: '!has(oldSelf.spec.git) || !has(oldSelf.spec.git.repo) || self.spec.git.repo == oldSelf.spec.git.repo',
  },
  {
    message: 'spec.git.branch is immutable',
    rule: '!has(oldSelf.spec.git) || !has(oldSelf.spec.git.branch) || self.spec.git.branch == oldSelf.spec.git.branch',
  },
  {
    message: 'spec.git.directory is immutable',
    rule: '!has(oldSelf.spec.git) || !has(oldSelf.spec.git.directory) || self.spec.git.directory == oldSelf.spec.git.directory',
  },
  {
    message: 'spec.oci.registry is immutable',
    rule: '!has(oldSelf.spec.oci) || !has(oldSelf.spec.oci.registry) || self.spec.oci.registry == oldSelf.spec.oci.registry',
  },
]

const repositorySchema = object(
  {
    apiVersion: string(),
    kind: string(),
    metadata: { type: 'object' },
    spec: object({
      content: string({
        default: 'Package',
        'x-kubernetes-validations': [
          {
            message: "The 'content' field is deprecated, its only valid value is 'Package'",
            rule: "self == '' || self == 'Package'",
          },
        ],
      }),
      deployment: boolean(),
      description: string(),
      git: object(
        {
          author: string(),
          branch: string({ default: 'main', minLength: 1 }),
          createBranch: boolean(),
          directory: string(),
          email: string(),
          repo: string(),
          secretRef,
        },
        { required: ['repo'] },
      ),
      oci: object({ registry: string(), secretRef }, { required: ['registry'] }),
      sync: object({ runOnceAt: string({ format: 'date-time' }), schedule: string() }),
      type: string(),
    }),
    status: object({
      conditions,
      gitCommitHash: string(),
      lastFullSyncTime: string({ format: 'date-time' }),
      nextFullSyncTime: string({ format: 'date-time' }),
      observedGeneration: integer({ format: 'int64' }),
      observedRunOnceAt: string({ format: 'date-time' }),
      packageCount: integer(),
    }),
  },
  { 'x-kubernetes-validations': repositoryRules },
)

const packageVariantSchema = object(
  {
    apiVersion: string(),
    kind: string(),
    metadata: { type: 'object' },
    spec: packageVariantSpec,
    status: object({
      conditions,
      downstreamTargets: array(
        object({
          name: string(),
          renderStatus: object({ error: string(), result: resultList }, { required: ['error'] }),
        }),
      ),
    }),
  },
  { description: 'PackageVariant represents an upstream and downstream porch package pair.' },
)

const packageVariantSetSchema = object(
  {
    apiVersion: string(),
    kind: string(),
    metadata: { type: 'object' },
    spec: packageVariantSetSpec,
    status: object({ conditions }),
  },
  { description: 'PackageVariantSet expands one upstream package into a PackageVariant per target.' },
)

const rolloutSelector = object(labelSelectorFields, {
  'x-kubernetes-map-type': 'atomic',
  description: "A label selector over the set's target objects; none: every variant no earlier step took.",
})

/**
 * Rollout's schema. Formats the API server cannot check (cron schedules,
 * durations, time zones, percentages) are checked by `readRollout`, which
 * every run calls, with messages naming the field.
 */
const rolloutSpec = fields<RolloutSpec>(
  {
    gates: fields<RolloutGatesSpec>(
      {
        approval: string({
          enum: ['manual', 'auto'],
          description:
            'manual: each step after the first starts only once approved (`kpt-variants rollout approve`). Default: auto.',
        }),
        health: fields<HealthGate>(
          {
            condition: string({
              minLength: 1,
              description: 'The condition type each target must report True in status.conditions, e.g. Ready.',
            }),
            revisionAnnotation: string({
              description:
                'If set, this annotation of the target must equal the published revision (its tag or commit).',
            }),
          },
          { required: ['condition'] },
        ),
        soak: string({
          description: "Time since a step's last publish before the next step starts, e.g. 30m. Default: none.",
        }),
      },
      { description: "What must hold for a step's variants before the next step starts." },
    ),
    packageVariantSet: string({
      minLength: 1,
      description: 'The PackageVariantSet whose variants this rollout paces, in the same namespace.',
    }),
    paused: boolean(),
    steps: array(
      fields<RolloutStepSpec>(
        {
          maxConcurrent: {
            'x-kubernetes-int-or-string': true,
            description:
              "At most this many (a count, or a percentage of the step's variants) published and not yet healthy at once. Default: all.",
          },
          name: string({ minLength: 1, maxLength: 63, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' }),
          targets: rolloutSelector,
        },
        { required: ['name'] },
      ),
      {
        description: 'In order; a variant belongs to the first step whose selector matches its target.',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
      },
    ),
    windows: array(
      fields<RolloutWindowSpec>(
        {
          duration: string({ description: 'How long each window stays open, e.g. 8h.' }),
          schedule: string({ description: 'When a window opens: a cron schedule of five fields, e.g. "0 9 * * 1-5".' }),
          timeZone: string({ description: 'The IANA time zone the schedule is read in. Default: UTC.' }),
        },
        { required: ['schedule', 'duration'] },
      ),
      { description: 'Publishing happens only inside a window; none: at any time.' },
    ),
  },
  { required: ['packageVariantSet', 'steps'] },
)

const rolloutStatus = fields<RolloutStatus>({
  approvals: array(
    fields<RolloutApprovalSpec>(
      {
        revision: string({ description: 'The upstream revision the approval is for.' }),
        step: string(),
        time: string({ format: 'date-time' }),
      },
      { required: ['step', 'revision', 'time'] },
    ),
  ),
})

const rolloutSchema = object(
  { apiVersion: string(), kind: string(), metadata: { type: 'object' }, spec: rolloutSpec, status: rolloutStatus },
  {
    description:
      "Rollout paces the publishing of one PackageVariantSet's variants: in steps, gated by health, time and approval.",
  },
)

const rolloutColumns: PrinterColumn[] = [
  { jsonPath: '.spec.packageVariantSet', name: 'PackageVariantSet', type: 'string' },
  { jsonPath: '.spec.paused', name: 'Paused', type: 'boolean' },
  { jsonPath: '.metadata.creationTimestamp', name: 'Age', type: 'date' },
]

/** A column of `kubectl get`. */
interface PrinterColumn {
  jsonPath: string
  name: string
  type: string
}

const repositoryColumns: PrinterColumn[] = [
  { jsonPath: '.spec.type', name: 'Type', type: 'string' },
  { jsonPath: '.spec.content', name: 'Content', type: 'string' },
  { jsonPath: '.spec.sync.schedule', name: 'Sync schedule', type: 'string' },
  { jsonPath: '.spec.deployment', name: 'Deployment', type: 'boolean' },
  { jsonPath: ".status.conditions[?(@.type=='Ready')].status", name: 'Ready', type: 'string' },
  { jsonPath: ".spec['git','oci']['repo','registry']", name: 'Address', type: 'string' },
  { jsonPath: '.spec.git.branch', name: 'Branch', type: 'string' },
  { jsonPath: '.metadata.creationTimestamp', name: 'Age', type: 'date' },
]

function crd(
  kind: string,
  plural: string,
  version: string,
  schema: Schema,
  columns?: PrinterColumn[],
  group = 'config.porch.kpt.dev',
): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      names: { kind, listKind: `${kind}List`, plural, singular: kind.toLowerCase() },
      scope: 'Namespaced',
      versions: [
        {
          ...(columns ? { additionalPrinterColumns: columns } : {}),
          name: version,
          schema: { openAPIV3Schema: schema },
          served: true,
          storage: true,
          subresources: { status: {} },
        },
      ],
    },
  }
}

/** The CRDs, each with the file name `npm run crds` gives it; `porch` marks those whose schema is Porch's. */
/** An API (group/version/kind) a package serves or needs. */
const gvk = object(
  { apiVersion: string({ minLength: 1 }), kind: string({ minLength: 1 }) },
  { required: ['apiVersion', 'kind'] },
)

/**
 * A dependency: a package by `name` (with a `version` constraint), an API
 * (`gvk`), or ordered alternatives (`anyOf`); which one is set, and the
 * constraint's syntax, is checked by `readPackageManifest` and friends.
 */
const dependencyFields = { name: string(), version: string(), gvk, optional: boolean() }
const dependency = object({ ...dependencyFields, anyOf: array(object(dependencyFields)) })

/** Where render installs a catalog version from: a package revision of a Repository of the fleet. */
const packageSource = fields<PackageSource>(
  {
    repo: string({ minLength: 1 }),
    package: string({ minLength: 1 }),
    revision: integer({ minimum: 1 }),
    workspaceName: string(),
  },
  { required: ['repo', 'package'] },
)

const installationType = string({ enum: ['OnePerCluster', 'OnePerNamespace', 'NoRestrictions'] })

const packageCatalogSchema = object(
  {
    apiVersion: string(),
    kind: string(),
    metadata: { type: 'object' },
    spec: object({
      packages: array(
        object(
          {
            name: string({ minLength: 1 }),
            latestVersion: string(),
            installationType,
            path: string(),
            deletionPolicy: string({ enum: ['delete', 'orphan'] }),
            versions: array(
              object(
                {
                  version: string({ minLength: 1 }),
                  provides: array(gvk),
                  dependencies: array(dependency),
                  installationType,
                  source: packageSource,
                },
                { required: ['version'] },
              ),
            ),
          },
          { required: ['name'] },
        ),
      ),
    }),
  },
  {
    description:
      'PackageCatalog lists installable package versions, what each provides and needs, and where kpt-variants render installs it from (docs/package-dependencies.md).',
  },
)

const installedPackageSchema = object(
  {
    apiVersion: string(),
    kind: string(),
    metadata: { type: 'object' },
    spec: object(
      {
        package: string(),
        version: string({ minLength: 1 }),
        namespace: string(),
        installedAsDependency: boolean(),
        dependencies: array(dependency),
        provides: array(gvk),
        deleting: boolean(),
      },
      { required: ['version'] },
    ),
  },
  {
    description:
      'InstalledPackage is one installation made outside git; the label kpt-variants.dev/repository names the downstream repository it belongs to.',
  },
)

const clusterAPIsSchema = object(
  { apiVersion: string(), kind: string(), metadata: { type: 'object' }, spec: object({ gvks: array(gvk) }) },
  { description: 'ClusterAPIs lists APIs a cluster serves without a package managing them.' },
)

export const customResourceDefinitions: readonly { file: string; crd: Record<string, unknown>; porch: boolean }[] = [
  {
    file: 'config.porch.kpt.dev_repositories.yaml',
    crd: crd('Repository', 'repositories', 'v1alpha1', repositorySchema, repositoryColumns),
    porch: true,
  },
  {
    file: 'config.porch.kpt.dev_packagevariants.yaml',
    crd: crd('PackageVariant', 'packagevariants', 'v1alpha1', packageVariantSchema),
    porch: true,
  },
  {
    file: 'config.porch.kpt.dev_packagevariantsets.yaml',
    crd: crd('PackageVariantSet', 'packagevariantsets', 'v1alpha2', packageVariantSetSchema),
    porch: true,
  },
  {
    file: `${rolloutGroup}_rollouts.yaml`,
    crd: crd(rolloutKind, 'rollouts', rolloutVersion, rolloutSchema, rolloutColumns, rolloutGroup),
    porch: false,
  },
  {
    file: `${dependenciesGroup}_packagecatalogs.yaml`,
    crd: crd(packageCatalogKind, 'packagecatalogs', 'v1alpha1', packageCatalogSchema, undefined, dependenciesGroup),
    porch: false,
  },
  {
    file: `${dependenciesGroup}_installedpackages.yaml`,
    crd: crd(
      installedPackageKind,
      'installedpackages',
      'v1alpha1',
      installedPackageSchema,
      undefined,
      dependenciesGroup,
    ),
    porch: false,
  },
  {
    file: `${dependenciesGroup}_clusterapis.yaml`,
    crd: crd(clusterAPIsKind, 'clusterapis', 'v1alpha1', clusterAPIsSchema, undefined, dependenciesGroup),
    porch: false,
  },
]

/** A CRD as its file in deploy/crds has it. */
export function crdFileText(crd: Record<string, unknown>): string {
  return `# Generated by \`npm run crds\` from functions/api/crds.ts: edit that, not this.\n${stringify(crd, { lineWidth: 0 })}`
}
