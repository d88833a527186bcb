/** ResourceList: the wire format between kpt and a KRM function. */
import { Document, isMap, isScalar, isSeq, YAMLSeq } from 'yaml'
import { KubeObject } from './kube-object.js'
import { itemsPlaceholder, splitItems } from './lazy-items.js'
import { Results } from './results.js'
import type { Result } from './results.js'
import { parseYamlDocument, stringifyYamlDocument, toNode, YamlSyntaxError } from './yaml.js'

/** The input could not be read as a ResourceList; the message says why. */
export class ResourceListError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ResourceListError'
  }
}

const defaultApiVersion = 'config.kubernetes.io/v1'

/**
 * A parsed ResourceList. Transforms edit `items` (in place, or by adding and
 * removing entries) and append to `results`; `toString()` prints the list in
 * kpt's style, keeping everything that was not changed byte for byte.
 */
export class ResourceList {
  /** The objects the function reads and writes, in input order. */
  items: KubeObject[]
  /** The function's configuration, if kpt passed one. */
  functionConfig: KubeObject | undefined
  /** Results produced by this run (appended after any the input carried). */
  readonly results = new Results()

  private constructor(
    private readonly doc: Document,
    items: KubeObject[],
    functionConfig: KubeObject | undefined,
    private readonly inputResults: unknown[],
    /** True when `doc` is the shell of a lazily split list (its items print from their own text). */
    private readonly lazy = false,
  ) {
    this.items = items
    this.functionConfig = functionConfig
  }

  /**
   * Parses a ResourceList; throws ResourceListError with a one-line reason.
   * Items of a list in kpt's layout are parsed lazily (see lazy-items.ts)
   * unless `lazy` is false.
   */
  static parse(text: string, options: { lazy?: boolean } = {}): ResourceList {
    if (text.trim() === '') throw new ResourceListError('input is empty: expected a ResourceList on stdin')
    const split = options.lazy === false ? undefined : splitItems(text)
    let doc: Document.Parsed
    try {
      doc = parseYamlDocument(split ? split.shell : text, 'ResourceList')
    } catch (err) {
      if (err instanceof YamlSyntaxError) throw new ResourceListError(`malformed YAML in ${err.message}`)
      throw err
    }
    const root = doc.contents
    if (!isMap(root)) throw new ResourceListError('input is not a ResourceList: expected a YAML map at the top level')
    const kind: unknown = root.get('kind')
    if (kind !== 'ResourceList') {
      throw new ResourceListError(`input is not a ResourceList: \`kind\` is ${JSON.stringify(kind ?? null)}, expected "ResourceList"`)
    }
    const itemsNode = root.get('items', true)
    if (itemsNode === undefined || (isScalar(itemsNode) && itemsNode.value === null)) {
      if (!root.has('items')) throw new ResourceListError('ResourceList has no `items` field')
    } else if (!isSeq(itemsNode)) {
      throw new ResourceListError('ResourceList `items` must be a list of objects')
    }
    const items: KubeObject[] = []
    if (split) {
      split.chunks.forEach((chunk, i) => items.push(KubeObject.fromItemSource(chunk, i)))
    } else if (isSeq(itemsNode)) {
      itemsNode.items.forEach((node, i) => {
        if (!isMap(node)) throw new ResourceListError(`ResourceList \`items[${i}]\` is not an object`)
        items.push(new KubeObject(node, doc))
      })
    }
    const fcNode = root.get('functionConfig', true)
    let functionConfig: KubeObject | undefined
    if (isMap(fcNode)) functionConfig = new KubeObject(fcNode, doc)
    else if (fcNode !== undefined && !(isScalar(fcNode) && fcNode.value === null)) {
      throw new ResourceListError('ResourceList `functionConfig` must be an object')
    }
    const resultsNode = root.get('results', true)
    const inputResults = isSeq(resultsNode) ? resultsNode.items : []
    return new ResourceList(doc, items, functionConfig, inputResults, split !== undefined)
  }

  /** A new, empty ResourceList (for errors before any input could be read). */
  static empty(): ResourceList {
    return ResourceList.of([])
  }

  /**
   * A ResourceList over objects already in memory, for running transforms
   * in-process (the orchestrator): the items are used as they are, not copied,
   * and `toString()` prints them and the results (not the functionConfig).
   */
  static of(items: KubeObject[], functionConfig?: KubeObject): ResourceList {
    const doc = new Document({ apiVersion: defaultApiVersion, kind: 'ResourceList', items: [] })
    return new ResourceList(doc, items, functionConfig, [])
  }

  /** Prints the list; `items:` is always present, `results:` only when there are any. */
  toString(): string {
    const root = this.doc.contents
    if (!isMap(root)) throw new Error('ResourceList document lost its root map')
    let itemsNode: unknown = root.get('items', true)
    if (!isSeq(itemsNode)) {
      itemsNode = new YAMLSeq()
      root.set('items', itemsNode)
    }
    if (!this.lazy) (itemsNode as YAMLSeq).items = this.items.map((o) => o.node)
    if (this.inputResults.length > 0 || this.results.length > 0) {
      const resultsNode = new YAMLSeq()
      resultsNode.items = [...(this.inputResults as YAMLSeq['items']), ...this.results.items.map(resultNode)]
      root.set('results', resultsNode)
    }
    const text = stringifyYamlDocument(this.doc)
    if (!this.lazy || this.items.length === 0) return text
    // The shell printed `items: []` at column 0; put the items there, untouched ones verbatim.
    const at = text.search(new RegExp(`^${itemsPlaceholder.replace(/[[\]]/g, '\\$&')}$`, 'm'))
    if (at < 0) throw new Error('ResourceList shell lost its items placeholder')
    const items = this.items.map((item) => item.toItemText()).join('')
    return `${text.slice(0, at)}items:\n${items}${text.slice(at + itemsPlaceholder.length + 1)}`
  }
}

function resultNode(result: Result) {
  const ordered: Record<string, unknown> = { message: result.message, severity: result.severity }
  if (result.resourceRef) ordered['resourceRef'] = result.resourceRef
  if (result.field) ordered['field'] = result.field
  if (result.file) ordered['file'] = result.file
  if (result.tags) ordered['tags'] = result.tags
  return toNode(ordered)
}
