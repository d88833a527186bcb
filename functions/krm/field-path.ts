/** Field paths into an object, and how results print them. */
/** A field path: keys for maps, numbers for sequence indexes. */
export type FieldPath = readonly (string | number)[]

/** Formats a field path the way results report it: `spec.injectors[0].name`. */
export function formatFieldPath(path: FieldPath): string {
  let out = ''
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`
    else out += out === '' ? part : `.${part}`
  }
  return out
}
