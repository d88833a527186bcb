/**
 * Typed reading of API objects: each accessor returns the value or records a
 * field error naming the path, so one pass reports every bad field.
 */
import { isMap, isScalar, isSeq } from 'yaml'
import type { Node } from 'yaml'
import { FieldTypeError, formatFieldPath } from '../krm/index.js'
import type { FieldPath, KubeObject } from '../krm/index.js'

/** A problem with one field of an API object. */
export interface FieldError {
  /** Dotted path, e.g. `spec.injectors[0].name`. */
  field: string
  /** Full message; starts with the field path where Porch's text does. */
  message: string
}

/** Reads fields of one object, collecting type errors instead of throwing. */
export class Decoder {
  readonly errors: FieldError[] = []

  constructor(readonly object: KubeObject) {}

  /** True when the path is present (even if null). */
  has(path: FieldPath): boolean {
    return this.object.has(path)
  }

  string(path: FieldPath): string | undefined {
    return this.guard(() => this.object.getString(path))
  }

  stringMap(path: FieldPath): Record<string, string> | undefined {
    return this.guard(() => this.object.getStringMap(path))
  }

  stringList(path: FieldPath): string[] | undefined {
    return this.guard(() => this.object.getStringList(path))
  }

  /** A boolean field (YAML bool). */
  boolean(path: FieldPath): boolean | undefined {
    const value = this.object.get(path)
    if (value === undefined || value === null) return undefined
    if (typeof value === 'boolean') return value
    this.fail(path, 'must be a boolean')
    return undefined
  }

  /** An integer field (YAML int). */
  integer(path: FieldPath): number | undefined {
    const value = this.object.get(path)
    if (value === undefined || value === null) return undefined
    if (typeof value === 'number' && Number.isInteger(value)) return value
    this.fail(path, 'must be an integer')
    return undefined
  }

  /** The number of entries of a list field; records an error if it is not a list. */
  listLength(path: FieldPath): number | undefined {
    const node = this.object.getNode(path)
    if (node === undefined || isNull(node)) return undefined
    if (isSeq(node)) return node.items.length
    this.fail(path, 'must be a list')
    return undefined
  }

  /** True when the field is a map (or absent); records an error otherwise. Only the node's type is looked at. */
  isMapOrAbsent(path: FieldPath): boolean {
    const node = this.object.getNode(path)
    if (node === undefined || isNull(node) || isMap(node)) return true
    this.fail(path, 'must be an object')
    return false
  }

  /** Records a type error on a field. */
  fail(path: FieldPath, problem: string): void {
    const field = formatFieldPath(path)
    this.errors.push({ field, message: `\`${field}\` ${problem}` })
  }

  private guard<T>(read: () => T): T | undefined {
    try {
      return read()
    } catch (err) {
      if (!(err instanceof FieldTypeError)) throw err
      this.errors.push({ field: err.field, message: `\`${err.field}\` must be ${err.expected}` })
      return undefined
    }
  }
}

function isNull(node: Node): boolean {
  return isScalar(node) && node.value === null
}
