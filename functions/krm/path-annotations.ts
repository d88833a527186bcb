/** The annotations that place an object in a file of its package, as kpt writes them on a generated object. */
import { indexAnnotation, legacyIndexAnnotation, legacyPathAnnotation, pathAnnotation } from './annotations.js'

/** The path annotations kpt expects on a generated object, internal and legacy forms, in kpt's order. */
export function pathAnnotations(path: string, index: number): Record<string, string> {
  return {
    [pathAnnotation]: path,
    [legacyPathAnnotation]: path,
    [indexAnnotation]: String(index),
    [legacyIndexAnnotation]: String(index),
  }
}

/** `value` with the four path annotations set (existing keys keep their place), as `setPath` does. */
export function withPathAnnotations(
  value: Record<string, unknown>,
  path: string,
  index: number,
): Record<string, unknown> {
  const metadata = (
    typeof value['metadata'] === 'object' && value['metadata'] !== null ? value['metadata'] : {}
  ) as Record<string, unknown>
  const annotations = (
    typeof metadata['annotations'] === 'object' && metadata['annotations'] !== null ? metadata['annotations'] : {}
  ) as Record<string, unknown>
  return {
    ...value,
    metadata: {
      ...metadata,
      annotations: { ...annotations, ...pathAnnotations(path, index) },
    },
  }
}
