/** YAML nodes from plain JS values: new ones (safely quoted), and existing ones updated in place. */
import { isMap, isScalar, isSeq, Pair, Scalar, YAMLMap, YAMLSeq } from 'yaml'
import type { Node } from 'yaml'
import { isAmbiguousString } from './ambiguous-string.js'

/** Sets a scalar's value in place, keeping its style where the style can still hold the value. */
function setScalarValue(node: Scalar, value: string | number | boolean | null): void {
  const wasBlock = node.type === Scalar.BLOCK_LITERAL || node.type === Scalar.BLOCK_FOLDED
  const wasPlain = node.type === undefined || node.type === Scalar.PLAIN
  node.value = value
  if (typeof value !== 'string') {
    node.type = undefined
  } else if (wasPlain || (wasBlock && !value.includes('\n'))) {
    node.type = isAmbiguousString(value) ? Scalar.QUOTE_DOUBLE : undefined
  }
}

/** A new scalar for a value, double-quoted when YAML 1.1 would misread it. */
export function newScalar(value: string | number | boolean | null): Scalar {
  const scalar = new Scalar(value)
  if (typeof value === 'string' && isAmbiguousString(value)) scalar.type = Scalar.QUOTE_DOUBLE
  return scalar
}

/** Builds fresh YAML nodes for a plain JS value (block style, safe quoting). */
export function toNode(value: unknown): Node {
  if (value === null || value === undefined) return new Scalar(null)
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    return newScalar(value)
  }
  if (Array.isArray(value)) {
    const seq = new YAMLSeq()
    for (const v of value) seq.items.push(toNode(v))
    return seq
  }
  if (typeof value === 'object') {
    const map = new YAMLMap()
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (v === undefined) continue
      map.items.push(new Pair(newScalar(k), toNode(v)))
    }
    return map
  }
  throw new TypeError(`cannot represent a ${typeof value} in YAML`)
}

/**
 * Makes `node` hold `value`, reusing existing nodes wherever the shape allows,
 * so comments, key order and scalar styles survive:
 * - a scalar keeps its node and style (a plain one is quoted if the new string is ambiguous);
 * - a map keeps its existing keys in place, drops keys not in `value`, appends new ones;
 * - a sequence is updated index by index.
 * Returns the node to store: `node` itself, or a fresh one when the kinds differ.
 */
export function reconcileNode(node: Node | null | undefined, value: unknown): Node {
  if (value === undefined) return toNode(null)
  if (isScalar(node) && (value === null || typeof value !== 'object')) {
    if (node.value !== value) setScalarValue(node, value as string | number | boolean | null)
    return node
  }
  if (isMap(node) && isPlainObject(value)) {
    const wanted = value as Record<string, unknown>
    const kept: Pair[] = []
    const seen = new Set<string>()
    for (const pair of node.items) {
      const key = scalarKey(pair.key)
      if (key === undefined || !(key in wanted) || wanted[key] === undefined || seen.has(key)) continue
      seen.add(key)
      pair.value = reconcileNode(pair.value as Node, wanted[key])
      kept.push(pair)
    }
    for (const [key, v] of Object.entries(wanted)) {
      if (seen.has(key) || v === undefined) continue
      kept.push(new Pair(newScalar(key), toNode(v)))
    }
    node.items = kept
    return node
  }
  if (isSeq(node) && Array.isArray(value)) {
    const items = value.map((v, i) => reconcileNode(node.items[i] as Node, v))
    node.items = items
    return node
  }
  return toNode(value)
}

/** The string form of a map key, or undefined for complex keys. */
export function scalarKey(key: unknown): string | undefined {
  if (isScalar(key)) return key.value === null ? '' : String(key.value)
  if (typeof key === 'string') return key
  return undefined
}

function isPlainObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
