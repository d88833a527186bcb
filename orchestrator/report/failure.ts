/**
 * Why a variant failed, as data: a code from a closed list (Porch's condition
 * reasons where Porch has the case) and a message for people. Producers set
 * the code where the failure is made; docs/reports.md lists the codes.
 */

/** Every failure code, with its one-line meaning (docs/reports.md, "Failure codes", says the same). */
export const failureCodes = {
  ValidationError: 'a PackageVariant or PackageVariantSet is invalid: a field, a downstream name, a version constraint',
  UpstreamNotFound: 'the upstream repository cannot be read, or no revision (or version) of the package matches',
  NoMatchingTargets: "a PackageVariantSet's target kind is not served by the cluster",
  UnexpectedError: 'a PackageVariantSet could not make the PackageVariant of a target (a template, a name)',
  RepositoryNotFound: 'the downstream repository is not a Repository of the fleet',
  DuplicateVariant: 'another PackageVariant has the same identity or renders the same downstream package',
  DownstreamUnavailable: 'the downstream git repository cannot be opened, fetched or locked',
  DownstreamNotOwned: 'the downstream package exists and belongs to someone else (adoptNone, another owner)',
  InvalidUpstreamPackage: 'the upstream package cannot be read as a kpt package (YAML, KRM, Kptfile)',
  MergeConflict: 'the 3-way merge of an upstream update failed (a conflict with onConflict fail, or a merge error)',
  ApplyFailed: "the PackageVariant's package context, pipeline or injection could not be applied",
  FunctionFailed: "a function of the package's Kptfile pipeline failed",
  WriteFailed: 'the package could not be written (a full disk, permissions)',
  GitPushRefused: 'the downstream remote refused the push of the drafts or the tags',
  DeletionGuard: 'the deletion guard held a PackageVariantSet that would lose most of its packages',
  InvalidManifest: "the package's PackageManifest cannot be read",
  DependencyInputInvalid: "the fleet's dependency objects (catalogs, DependencyPolicies) cannot be read",
  DependencyUnresolved: 'no choice of dependency versions meets what the packages of the repository need',
  DependencyFailed: 'a dependency the package needs could not be installed, moved or configured',
  ApiOwnershipConflict: 'two packages of one repository define the same API',
  PlatformMismatch: "the cluster's Kubernetes version is not one the package supports",
  InternalError: 'an unexpected error in kpt-variants itself (a bug): --debug prints where',
} as const

/** A failure code (the keys of failureCodes). */
export type FailureCode = keyof typeof failureCodes

/** One reason a variant failed. */
export interface Failure {
  code: FailureCode
  /** What happened, for people. */
  message: string
  /** InternalError only: where it happened (printed with --debug). */
  stack?: string
}

/** A failure with its code. */
export function failure(code: FailureCode, message: string): Failure {
  return { code, message }
}

/** An unexpected exception: InternalError, said as a bug, its stack kept apart from the message. */
export function internalError(err: unknown): Failure {
  const message = err instanceof Error ? err.message : String(err)
  const stack = err instanceof Error ? err.stack : undefined
  return {
    code: 'InternalError',
    message: `internal error: ${message}`,
    ...(stack ? { stack } : {}),
  }
}

/** The messages of `reasons`, joined as one line (`; `). */
export function messagesOf(reasons: readonly Failure[]): string {
  return reasons.map((r) => r.message).join('; ')
}

/** A failure as a line of text: `3-way merge failed; ... [MergeConflict]`. */
export function describeFailure(reason: Failure): string {
  return `${reason.message} [${reason.code}]`
}

/** True for a code of the list (reading JSON back). */
export function isFailureCode(value: unknown): value is FailureCode {
  return typeof value === 'string' && Object.hasOwn(failureCodes, value)
}
