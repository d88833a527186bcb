/**
 * Porch's schemas (its controller-gen output at the versions it serves):
 * Repository and PackageVariant v1alpha1, PackageVariantSet v1alpha2, built
 * against our API types; a test checks them field by field against Porch's
 * (functions/api/porch-crd-fields.txt).
 */
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
import {
  array,
  boolean,
  conditions,
  fields,
  integer,
  labelSelector,
  labelSelectorFields,
  object,
  string,
  stringMap,
} from './crd-schema.js'
import type { PrinterColumn } from './crd-schema.js'

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

/** `spec.targets[].template` of a PackageVariantSet (a DependencyPolicy's configured dependencies take three of its fields). */
export const packageVariantTemplate = fields<PackageVariantTemplate>({
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

export const repositorySchema = object(
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

export const packageVariantSchema = object(
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

export const packageVariantSetSchema = object(
  {
    apiVersion: string(),
    kind: string(),
    metadata: { type: 'object' },
    spec: packageVariantSetSpec,
    status: object({ conditions }),
  },
  { description: 'PackageVariantSet expands one upstream package into a PackageVariant per target.' },
)

export const repositoryColumns: PrinterColumn[] = [
  { jsonPath: '.spec.type', name: 'Type', type: 'string' },
  { jsonPath: '.spec.content', name: 'Content', type: 'string' },
  { jsonPath: '.spec.sync.schedule', name: 'Sync schedule', type: 'string' },
  { jsonPath: '.spec.deployment', name: 'Deployment', type: 'boolean' },
  { jsonPath: ".status.conditions[?(@.type=='Ready')].status", name: 'Ready', type: 'string' },
  { jsonPath: ".spec['git','oci']['repo','registry']", name: 'Address', type: 'string' },
  { jsonPath: '.spec.git.branch', name: 'Branch', type: 'string' },
  { jsonPath: '.metadata.creationTimestamp', name: 'Age', type: 'date' },
]
