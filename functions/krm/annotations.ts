/** Annotation and label keys that kpt, Porch and kpt-variants read or write. */

const internalPrefix = 'internal.config.kubernetes.io/'
const legacyPrefix = 'config.kubernetes.io/'

/** File path of an object, relative to its package (kpt sets both forms). */
export const pathAnnotation = `${internalPrefix}path`
/** Legacy mirror of {@link pathAnnotation}; kpt keeps the two in sync. */
export const legacyPathAnnotation = `${legacyPrefix}path`
/** Index of an object within a multi-document file. */
export const indexAnnotation = `${internalPrefix}index`
/** Legacy mirror of {@link indexAnnotation}. */
export const legacyIndexAnnotation = `${legacyPrefix}index`
/** Absolute path of the (sub)package that owns an object; `kpt fn render` only. */
export const packagePathAnnotation = `${internalPrefix}package-path`
/** Sequence indentation style kpt uses when writing the file back. */
export const seqIndentAnnotation = `${internalPrefix}seqindent`
/** Marks configuration that is not applied to a cluster (Kptfile, package context, fn configs). */
export const localConfigAnnotation = `${legacyPrefix}local-config`
/** Origin of an object fetched with `kpt pkg get`; never edited by functions. */
export const upstreamIdentifierAnnotation = 'internal.kpt.dev/upstream-identifier'

/** Marks an injection point: `required` or `optional` (Porch). */
export const configInjectionAnnotation = 'kpt.dev/config-injection'
/** Name of the in-cluster object injected into an injection point (Porch). */
export const injectedResourceAnnotation = 'kpt.dev/injected-resource'
/** Same as {@link injectedResourceAnnotation}, the name the Porch design documents. */
export const injectedResourceNameAnnotation = 'kpt.dev/injected-resource-name'

/** Label that ties a PackageVariant to the PackageVariantSet that generated it. */
export const packageVariantSetLabel = 'config.porch.kpt.dev/packagevariantset'

/** apiVersion / kind / name of the package-context ConfigMap. */
export const packageContextName = 'kptfile.kpt.dev'
/** File that holds the package context at a package root. */
export const packageContextFile = 'package-context.yaml'
