/** The kpt-variants KRM function SDK. See README.md. */
export * from './annotations.js'
export { formatFieldPath } from './field-path.js'
export type { FieldPath } from './field-path.js'
export { FieldTypeError, KubeObject } from './kube-object.js'
export type { ObjectOrigin } from './kube-object.js'
export { parseObjects } from './objects.js'
export { commentsDroppedMessage, readableDocument } from './readable.js'
export { ResourceList, ResourceListError } from './resource-list.js'
export { newResult, Results } from './results.js'
export type { FieldRef, FileRef, ResourceRef, Result, ResultTarget, Severity } from './results.js'
export { applyTransform, runFunction } from './run.js'
export type { KrmFunction, RunOutput, Transform, TransformOptions } from './run.js'
export {
  compileLabelSelector,
  dns1123LabelErrors,
  dns1123SubdomainErrors,
  formatLabelSelector,
  labelValueErrors,
  matchesLabelSelector,
  qualifiedNameErrors,
} from './selectors.js'
export type { CompiledSelector, LabelSelector, LabelSelectorRequirement } from './selectors.js'
// YAML itself (parse, print, nodes) is the engine's, imported from './yaml/index.js'.
export { renderFieldText, renderItemText, YamlSyntaxError } from './yaml/index.js'
export { findRootObjects, isKptfile, rootPackagePath } from './package.js'
export {
  findKptfile,
  Kptfile,
  describeUnmetGates,
  unmetReadinessGates,
  type UnmetGate,
  type KptCondition,
  type KptfileNotFound,
  type KptfileProblem,
  type PipelineList,
} from './kptfile.js'
