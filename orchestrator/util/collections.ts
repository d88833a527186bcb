/** Small collection helpers the orchestrator uses in many places. */

/** Appends `value` to the list `map` holds at `key`, starting one: grouping by a key as `Map.groupBy` does (Node 21+), one at a time. */
export function appendTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key)
  if (list) list.push(value)
  else map.set(key, [value])
}
