/** Function results as the KRM Functions Specification defines them. */
import type { FileRef, KubeObject } from './kube-object.js'

export type { FileRef }

/** How serious a result is; `error` makes the function exit 1. */
export type Severity = 'error' | 'warning' | 'info'

/** The object a result is about. */
export interface ResourceRef {
  apiVersion: string
  kind: string
  name: string
  namespace?: string
}

/** The field a result is about, as a dotted path such as `spec.injectors[0].name`. */
export interface FieldRef {
  path: string
  currentValue?: unknown
  proposedValue?: unknown
}

/** One entry of `ResourceList.results`; empty fields are omitted on the wire. */
export interface Result {
  message: string
  severity: Severity
  resourceRef?: ResourceRef
  field?: FieldRef
  file?: FileRef
  tags?: Record<string, string>
}

/** Where a result points: an object (fills resourceRef and file), a field, tags. */
export interface ResultTarget {
  object?: KubeObject | undefined
  field?: string | FieldRef | undefined
  file?: FileRef | undefined
  tags?: Record<string, string> | undefined
}

/** Builds a result, filling `resourceRef` and `file` from the object's identity and path annotations. */
export function newResult(severity: Severity, message: string, target: ResultTarget = {}): Result {
  const result: Result = { message, severity }
  const { object } = target
  if (object) {
    // identity() never throws: a result about a malformed object must still be made.
    const { apiVersion, kind, name, namespace } = object.identity()
    const ref: ResourceRef = { apiVersion, kind, name }
    if (namespace) ref.namespace = namespace
    result.resourceRef = ref
  }
  if (target.field !== undefined) {
    result.field = typeof target.field === 'string' ? { path: target.field } : target.field
  }
  const file = target.file ?? object?.fileRef()
  if (file) result.file = file
  if (target.tags && Object.keys(target.tags).length > 0) result.tags = target.tags
  return result
}

/** An ordered list of results with helpers per severity. */
export class Results {
  readonly items: Result[] = []

  /** Appends results. */
  push(...results: Result[]): this {
    this.items.push(...results)
    return this
  }

  /** Records an error: the function will exit 1 and write nothing. */
  error(message: string, target?: ResultTarget): this {
    return this.push(newResult('error', message, target))
  }

  /** Records a warning. */
  warning(message: string, target?: ResultTarget): this {
    return this.push(newResult('warning', message, target))
  }

  /** Records an informational result. */
  info(message: string, target?: ResultTarget): this {
    return this.push(newResult('info', message, target))
  }

  /** True when any result has severity `error`. */
  hasErrors(): boolean {
    return this.items.some((r) => r.severity === 'error')
  }

  /** 1 when any result is an error, else 0 (kpt itself ignores error results on exit 0). */
  exitCode(): 0 | 1 {
    return this.hasErrors() ? 1 : 0
  }

  get length(): number {
    return this.items.length
  }
}
