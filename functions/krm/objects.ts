/** Reading plain multi-document YAML (the `--sources` files) into objects. */
import { isMap, isScalar, isSeq } from 'yaml'
import { KubeObject } from './kube-object.js'
import { checkNode, parse } from './yaml/index.js'

/**
 * Parses a YAML stream into objects. A `ResourceList` or a `List` (any kind
 * ending in `List` with `items`) contributes its items. Empty documents are
 * skipped; anything else that is not a map is an error naming the document.
 * Each object records its origin (file and document index) for results.
 */
export function parseObjects(text: string, file: string): KubeObject[] {
  const objects: KubeObject[] = []
  parse(text, { source: file, stream: true }).forEach((doc, index) => {
    const root = doc.contents
    // An empty document (`---` then `---`, or comments only) holds nothing, as kubectl reads it.
    if (
      root === null ||
      root === undefined ||
      (isScalar(root) && root.value === null && root.range?.[0] === root.range?.[1])
    )
      return
    if (!isMap(root)) throw new Error(`${file}: document ${index} is not a Kubernetes object`)
    // Duplicate keys and aliases are checked as in ResourceList items: these objects are read too.
    checkNode(root, doc, `${file}: document ${index}`)
    const kind: unknown = root.get('kind')
    const items = root.get('items', true)
    if (typeof kind === 'string' && kind.endsWith('List') && isSeq(items)) {
      items.items.forEach((node, i) => {
        if (!isMap(node)) throw new Error(`${file}: document ${index}, items[${i}] is not a Kubernetes object`)
        const object = new KubeObject(node, doc)
        object.origin = { file, index }
        objects.push(object)
      })
      return
    }
    const object = new KubeObject(root, doc)
    object.origin = { file, index }
    objects.push(object)
  })
  return objects
}
