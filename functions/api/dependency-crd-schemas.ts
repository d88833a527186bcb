/** The schemas of our dependency CRDs: PackageCatalog, InstalledPackage, ClusterAPIs and DependencyPolicy (docs/package-dependencies.md). */
import type { PackageSource } from './dependencies.js'
import { array, boolean, fields, integer, labelSelector, object, string } from './crd-schema.js'
import { packageVariantTemplate } from './porch-crd-schemas.js'

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

export const packageCatalogSchema = object(
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
                  kubernetesVersion: string(),
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

export const installedPackageSchema = object(
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

export const clusterAPIsSchema = object(
  { apiVersion: string(), kind: string(), metadata: { type: 'object' }, spec: object({ gvks: array(gvk) }) },
  { description: 'ClusterAPIs lists APIs a cluster serves without a package managing them.' },
)

const allowDeny = string({ enum: ['Allow', 'Deny'] })
const template = packageVariantTemplate.properties!

export const dependencyPolicySchema = object(
  {
    apiVersion: string(),
    kind: string(),
    metadata: { type: 'object' },
    spec: object({
      repositories: array(string({ minLength: 1 })),
      repositorySelector: labelSelector,
      upgrades: allowDeny,
      downgrades: allowDeny,
      // Exclude, Include, or {identifiers: [...]}: checked by readDependencyPolicy.
      prereleases: { 'x-kubernetes-preserve-unknown-fields': true },
      install: boolean(),
      autoUpgrade: boolean(),
      pins: array(
        object(
          { package: string({ minLength: 1 }), version: string({ minLength: 1 }) },
          { required: ['package', 'version'] },
        ),
      ),
      dependencies: array(
        object(
          {
            package: string({ minLength: 1 }),
            packageContext: template['packageContext']!,
            injectors: template['injectors']!,
            pipeline: template['pipeline']!,
          },
          { required: ['package'] },
        ),
      ),
      clusterVersion: object({ label: string(), field: string() }),
    }),
  },
  {
    description:
      'DependencyPolicy sets how kpt-variants render plans the dependencies of the downstream repositories it selects: upgrades, downgrades, prereleases, install or only report, automatic upgrades, pins, configured dependencies (docs/package-dependencies.md).',
  },
)
