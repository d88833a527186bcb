/**
 * Appends to a list that may not exist yet. A list made by its first element
 * (`[item]`) holds one slot; an empty `[]` grows to seventeen on its first push.
 * The planner keeps a few short lists per package (dependants, watched
 * incompatibilities, trail steps): at 50,000 packages that is megabytes that
 * every young-generation collection would copy.
 */
export function append<T>(list: T[] | undefined, item: T): T[] {
  if (!list) return [item]
  list.push(item)
  return list
}
