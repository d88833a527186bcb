/**
 * The typed reader of every API object: each accessor returns the value or
 * records a field error naming the path, so one pass reports every bad field.
 * Fields are read from the YAML nodes; a subtree becomes JavaScript only when
 * its value is wanted as it is (`plainMap`).
 */
import { Document, isAlias, isMap, isScalar, isSeq } from '../krm/yaml/index.js'
import type { Node } from '../krm/yaml/index.js'
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

  /** A string field that must be set and not empty. */
  requiredString(path: FieldPath): string | undefined {
    const before = this.errors.length
    const value = this.string(path)
    if (value) return value
    if (this.errors.length === before) this.fail(path, 'is required')
    return undefined
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

  /** Present and not null: what Go's JSON decoding turns into a non-nil pointer. */
  present(path: FieldPath): boolean {
    const node = this.object.getNode(path)
    if (node === undefined) return false
    return !isNull(isAlias(node) ? (node.resolve(this.object.doc ?? new Document()) ?? node) : node)
  }

  /** The map at a path read by `read`, when present and not null; anything but a map there is a field error. */
  map<T>(path: FieldPath, read: (path: FieldPath) => T): T | undefined {
    return this.present(path) && this.isMapOrAbsent(path) ? read(path) : undefined
  }

  /**
   * Each entry of a list field read by `read` (a null entry reads as an empty
   * map; any other non-map entry is a field error), or undefined when the list
   * is absent.
   */
  list<T>(path: FieldPath, read: (path: FieldPath, index: number) => T): T[] | undefined {
    const count = this.listLength(path)
    if (count === undefined) return undefined
    const out: T[] = []
    for (let i = 0; i < count; i++) {
      const entry = [...path, i]
      if (this.isMapOrAbsent(entry)) out.push(read(entry, i))
    }
    return out
  }

  /** Calls `visit` for each entry of a list field that is a map; any other entry (null too) is a field error. */
  each(path: FieldPath, visit: (path: FieldPath, index: number) => void): void {
    const node = this.object.getNode(path)
    if (node === undefined || isNull(node)) return
    if (!isSeq(node)) {
      this.fail(path, 'must be a list')
      return
    }
    node.items.forEach((item, i) => {
      const entry = [...path, i]
      if (isMap(item)) visit(entry, i)
      else this.fail(entry, 'must be an object')
    })
  }

  /** A map field as a plain object, kept as written (a kpt function, say); `{}` when absent. */
  plainMap(path: FieldPath): Record<string, unknown> {
    return (this.object.get(path) ?? {}) as Record<string, unknown>
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

  /** True when the field is a map (absent, null or anything else: false). */
  isMap(path: FieldPath): boolean {
    return isMap(this.object.getNode(path))
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

/** The value with its undefined fields removed (as Go's `omitempty` leaves them out). */
export function compact<T extends object>(value: T): T {
  for (const key of Object.keys(value) as (keyof T)[]) if (value[key] === undefined) delete value[key]
  return value
}
