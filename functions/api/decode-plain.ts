/**
 * The typed reader over an object's plain value (`KubeObject.plainValue()`)
 * instead of its YAML nodes, with the same answers and the same field errors:
 * for objects that are only read, and may be large (a dependency catalog),
 * whose nodes would cost more to build than everything done with them.
 */
import { FieldTypeError, formatFieldPath } from '../krm/index.js'
import type { FieldPath, KubeObject } from '../krm/index.js'
import { Decoder } from './decode.js'

type Plain = Record<string, unknown>

const isObject = (value: unknown): value is Plain =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

export class PlainDecoder extends Decoder {
  private readonly value: Plain

  constructor(object: KubeObject) {
    super(object)
    this.value = object.plainValue()
  }

  /**
   * The value at a path: undefined when absent (or null on the way), null for
   * an explicit null; a field on the way of another type is a FieldTypeError,
   * as KubeObject.getNode has it.
   */
  private at(path: FieldPath): unknown {
    let value: unknown = this.value
    let i = 0
    // Readers ask for the fields of one entry after another: start from the entry found last when it is this one's.
    const last = this.lastPath
    if (last !== undefined && path.length === last.length && path.length > 1) {
      let same = true
      for (let j = 0; j < path.length - 1 && same; j++) same = path[j] === last[j]
      if (same) {
        value = this.lastBaseValue
        i = path.length - 1
      }
    }
    for (; i < path.length; i++) {
      const part = path[i]!
      const fits = typeof part === 'number' ? Array.isArray(value) : isObject(value)
      if (!fits) {
        if (i === 0 || value === null) return undefined
        throw new FieldTypeError(
          this.object,
          formatFieldPath(path.slice(0, i)),
          typeof part === 'number' ? 'a list' : 'a map',
        )
      }
      if (i === path.length - 1 && path.length > 1) {
        this.lastPath = path
        this.lastBaseValue = value
      }
      value =
        typeof part === 'number'
          ? (value as unknown[])[part]
          : Object.prototype.hasOwnProperty.call(value, part)
            ? (value as Plain)[part]
            : undefined
      if (value === undefined) return undefined
    }
    return value
  }

  /** The last path read to its last part, and the value of the entry that part is in (an object or a list). */
  private lastPath: FieldPath | undefined
  private lastBaseValue: unknown

  override has(path: FieldPath): boolean {
    if (path.length === 0) return true
    const parent = this.at(path.slice(0, -1))
    const last = path[path.length - 1]!
    if (typeof last === 'number') return Array.isArray(parent) && last < parent.length
    return isObject(parent) && Object.prototype.hasOwnProperty.call(parent, last)
  }

  override string(path: FieldPath): string | undefined {
    return this.read(() => {
      const value = this.at(path)
      if (value === undefined || value === null) return undefined
      if (typeof value === 'string') return value
      throw new FieldTypeError(this.object, formatFieldPath(path), 'a string')
    })
  }

  override stringMap(path: FieldPath): Record<string, string> | undefined {
    return this.read(() => {
      const value = this.at(path)
      if (value === undefined || value === null) return undefined
      if (!isObject(value)) throw new FieldTypeError(this.object, formatFieldPath(path), 'a map of strings')
      const out: Record<string, string> = {}
      for (const [key, field] of Object.entries(value)) {
        if (field === null) out[key] = ''
        else if (typeof field !== 'object') out[key] = String(field)
        else throw new FieldTypeError(this.object, formatFieldPath([...path, key]), 'a string')
      }
      return out
    })
  }

  override stringList(path: FieldPath): string[] | undefined {
    return this.read(() => {
      const value = this.at(path)
      if (value === undefined || value === null) return undefined
      if (!Array.isArray(value)) throw new FieldTypeError(this.object, formatFieldPath(path), 'a list of strings')
      return value.map((item, i) => {
        if (item !== null && typeof item !== 'object') return String(item)
        throw new FieldTypeError(this.object, formatFieldPath([...path, i]), 'a string')
      })
    })
  }

  override boolean(path: FieldPath): boolean | undefined {
    const value = this.at(path)
    if (value === undefined || value === null) return undefined
    if (typeof value === 'boolean') return value
    this.fail(path, 'must be a boolean')
    return undefined
  }

  override integer(path: FieldPath): number | undefined {
    const value = this.at(path)
    if (value === undefined || value === null) return undefined
    if (typeof value === 'number' && Number.isInteger(value)) return value
    this.fail(path, 'must be an integer')
    return undefined
  }

  override present(path: FieldPath): boolean {
    const value = this.at(path)
    return value !== undefined && value !== null
  }

  override each(path: FieldPath, visit: (path: FieldPath, index: number) => void): void {
    const value = this.at(path)
    if (value === undefined || value === null) return
    if (!Array.isArray(value)) {
      this.fail(path, 'must be a list')
      return
    }
    value.forEach((item, i) => {
      const entry = [...path, i]
      if (isObject(item)) visit(entry, i)
      else this.fail(entry, 'must be an object')
    })
  }

  override plainMap(path: FieldPath): Record<string, unknown> {
    return (this.at(path) ?? {}) as Record<string, unknown>
  }

  override listLength(path: FieldPath): number | undefined {
    const value = this.at(path)
    if (value === undefined || value === null) return undefined
    if (Array.isArray(value)) return value.length
    this.fail(path, 'must be a list')
    return undefined
  }

  override isMapOrAbsent(path: FieldPath): boolean {
    const value = this.at(path)
    if (value === undefined || value === null || isObject(value)) return true
    this.fail(path, 'must be an object')
    return false
  }

  override isMap(path: FieldPath): boolean {
    return isObject(this.at(path))
  }

  /** A typed read: a FieldTypeError becomes a field error, as Decoder's guard has it. */
  private read<T>(get: () => T): T | undefined {
    try {
      return get()
    } catch (err) {
      if (!(err instanceof FieldTypeError)) throw err
      this.errors.push({ field: err.field, message: `\`${err.field}\` must be ${err.expected}` })
      return undefined
    }
  }
}
