/**
 * Kptfile: the root package's `kpt.dev/v1 Kptfile` over its YAML nodes, with
 * the edits PackageVariant mutations make (pipeline lists, status conditions,
 * readiness gates). Every edit keeps the nodes, comments and order of the
 * entries it does not touch.
 */
import { isMap, isScalar, isSeq } from 'yaml'
import type { Node, YAMLMap, YAMLSeq } from 'yaml'
import { KubeObject } from './kube-object.js'
import { findRootObjects, isKptfile } from './package.js'
import { toNode } from './yaml/index.js'

/** The two function lists of a Kptfile pipeline. */
export type PipelineList = 'mutators' | 'validators'

/** A kpt status condition (kpt's Condition has only these four fields). */
export interface KptCondition {
  type: string
  status: string
  reason?: string
  message?: string
}

/** A readiness gate whose condition is not `True` (none at all reads as `Unknown`): the package is not ready. */
export interface UnmetGate {
  conditionType: string
  status: string
  reason?: string
  message?: string
}

/**
 * The gates of `info.readinessGates` whose `status.conditions` entry is not
 * `True`, in gate order: Porch neither proposes nor approves a revision with
 * any (`PackageRevisionIsReady`, which `porchctl rpkg propose` and `approve` check), and
 * kpt-variants does not publish it.
 */
export function unmetReadinessGates(gates: readonly string[], conditions: readonly KptCondition[]): UnmetGate[] {
  const byType = new Map(conditions.map((c) => [c.type, c]))
  const unmet: UnmetGate[] = []
  for (const conditionType of new Set(gates)) {
    const condition = byType.get(conditionType)
    if (condition?.status === 'True') continue
    const gate: UnmetGate = { conditionType, status: condition?.status || 'Unknown' }
    if (condition?.reason) gate.reason = condition.reason
    gate.message = condition ? (condition.message ?? '') : 'no condition of this type in status.conditions'
    if (!gate.message) delete gate.message
    unmet.push(gate)
  }
  return unmet
}

/** Unmet gates as one line: `<type> <status>: <message>`, `; `-separated. */
export function describeUnmetGates(gates: readonly UnmetGate[]): string {
  return gates.map((g) => `${g.conditionType} ${g.status}${g.message ? `: ${g.message}` : ''}`).join('; ')
}

/** A shape problem in a Kptfile field. */
export interface KptfileProblem {
  field: string
  message: string
}

/** What `findKptfile` returns when there is no usable root Kptfile. */
export interface KptfileNotFound {
  ok: false
  message: string
  object?: KubeObject
  field?: string
}

/**
 * Finds the root package's Kptfile: the item at path `Kptfile` of the root
 * package (under `kpt fn render` subpackage Kptfiles share that path), or the
 * only Kptfile item when no item carries a path (in-process callers).
 */
export function findKptfile(items: readonly KubeObject[]): { ok: true; kptfile: Kptfile } | KptfileNotFound {
  let candidates = findRootObjects(items, 'Kptfile')
  if (candidates.length === 0) {
    const unplaced = items.filter((item) => isKptfile(item) && item.path === undefined)
    if (unplaced.length === 1) candidates = unplaced
  }
  if (candidates.length === 0) return { ok: false, message: '"Kptfile" not found in the package' }
  if (candidates.length > 1) {
    return {
      ok: false,
      message: `"Kptfile" holds ${candidates.length} objects, expected exactly one`,
      object: candidates[1]!,
    }
  }
  const object = candidates[0]!
  if (!isKptfile(object)) {
    return {
      ok: false,
      message: `"Kptfile" does not contain kind "Kptfile" of apiVersion kpt.dev/v1 (found ${object.kind || 'no kind'})`,
      object,
      field: 'kind',
    }
  }
  const kptfile = new Kptfile(object)
  const problem = kptfile.problems()[0]
  if (problem) return { ok: false, message: `malformed Kptfile: ${problem.message}`, object, field: problem.field }
  return { ok: true, kptfile }
}

/** The Kptfile edits PackageVariant mutations make, in place on its nodes. */
export class Kptfile {
  constructor(
    /** The Kptfile object; edits change its nodes. */
    readonly object: KubeObject,
  ) {}

  /** Fields this model edits that hold the wrong shape, in document order. */
  problems(): KptfileProblem[] {
    const out: KptfileProblem[] = []
    const expect = (path: readonly (string | number)[], shape: 'a map' | 'a list', field: string): Node | undefined => {
      const node = this.object.getNode(path)
      if (node === undefined || (isScalar(node) && node.value === null)) return undefined
      if (shape === 'a map' ? isMap(node) : isSeq(node)) return node
      out.push({ field, message: `\`${field}\` must be ${shape}` })
      return undefined
    }
    const expectEntries = (seq: Node | undefined, field: string, key: string): void => {
      if (!isSeq(seq)) return
      seq.items.forEach((item, i) => {
        if (!isMap(item)) {
          out.push({ field: `${field}[${i}]`, message: `\`${field}[${i}]\` must be a map` })
          return
        }
        const value = item.get(key, true)
        if (value !== undefined && !(isScalar(value) && (value.value === null || typeof value.value === 'string'))) {
          out.push({ field: `${field}[${i}].${key}`, message: `\`${field}[${i}].${key}\` must be a string` })
        }
      })
    }
    if (expect(['pipeline'], 'a map', 'pipeline')) {
      for (const list of ['mutators', 'validators'] as const) {
        expectEntries(expect(['pipeline', list], 'a list', `pipeline.${list}`), `pipeline.${list}`, 'name')
      }
    }
    if (expect(['info'], 'a map', 'info')) {
      expectEntries(
        expect(['info', 'readinessGates'], 'a list', 'info.readinessGates'),
        'info.readinessGates',
        'conditionType',
      )
    }
    if (expect(['status'], 'a map', 'status')) {
      expectEntries(expect(['status', 'conditions'], 'a list', 'status.conditions'), 'status.conditions', 'type')
    }
    return out
  }

  /** The entries of `pipeline.<list>`, each a KubeObject over its own map node. */
  functions(list: PipelineList): KubeObject[] {
    const seq = this.object.getNode(['pipeline', list])
    if (!isSeq(seq)) return []
    return seq.items.filter((item): item is YAMLMap => isMap(item)).map((item) => new KubeObject(item, this.object.doc))
  }

  /**
   * Replaces `pipeline.<list>` with these entries (their nodes are reused). An
   * empty list removes the key, and a pipeline left with neither list is
   * removed as a whole (Porch; docs/upstream-behaviour.md, "Pipeline prepend").
   */
  setFunctions(list: PipelineList, functions: readonly KubeObject[]): void {
    if (functions.length === 0) {
      this.object.remove(['pipeline', list])
      const pipeline = this.object.getNode(['pipeline'])
      if (
        pipeline !== undefined &&
        !this.object.has(['pipeline', 'mutators']) &&
        !this.object.has(['pipeline', 'validators'])
      ) {
        this.object.remove(['pipeline'])
      }
      return
    }
    const target = this.seqAt(['pipeline', list])
    // A comment above the first entry is held by the list and stays in front of
    // whatever comes first: kpt copies it back onto the first entry anyway.
    const items = functions.map((fn) => fn.node)
    target.items = items
  }

  /** `status.conditions`, in file order. */
  conditions(): KptCondition[] {
    return this.conditionNodes().map((node) => {
      const entry = new KubeObject(node, this.object.doc)
      const condition: KptCondition = { type: str(entry, 'type'), status: str(entry, 'status') }
      const reason = str(entry, 'reason')
      const message = str(entry, 'message')
      if (reason) condition.reason = reason
      if (message) condition.message = message
      return condition
    })
  }

  /**
   * Upserts conditions by type (as `meta.SetStatusCondition`: status, reason
   * and message replaced, other keys kept), then sorts all of them by type.
   */
  setConditions(conditions: readonly KptCondition[]): void {
    if (conditions.length === 0) return
    const nodes = this.conditionNodes()
    for (const condition of conditions) {
      const node = nodes.find((n) => n.get('type') === condition.type)
      if (!node) {
        nodes.push(toNode(conditionValue(condition)) as YAMLMap)
        continue
      }
      const entry = new KubeObject(node, this.object.doc)
      entry.set(['status'], condition.status)
      for (const key of ['reason', 'message'] as const) {
        if (condition[key]) entry.set([key], condition[key])
        else entry.remove([key])
      }
    }
    this.setSortedList(['status', 'conditions'], nodes, (n) => String(n.get('type') ?? ''))
  }

  /** The readiness gates whose condition is not `True` (see unmetReadinessGates). */
  unmetReadinessGates(): UnmetGate[] {
    return unmetReadinessGates(this.readinessGates(), this.conditions())
  }

  /** The condition types of `info.readinessGates`, in file order. */
  readinessGates(): string[] {
    return this.gateNodes().map((node) => String(node.get('conditionType') ?? ''))
  }

  /**
   * Adds gates for these condition types; the list is de-duplicated and sorted
   * (also when nothing is added), and written only when it is not empty (Porch).
   */
  addReadinessGates(conditionTypes: readonly string[]): void {
    const byType = new Map<string, YAMLMap>()
    for (const node of this.gateNodes()) {
      const type = String(node.get('conditionType') ?? '')
      if (!byType.has(type)) byType.set(type, node)
    }
    for (const type of conditionTypes)
      if (!byType.has(type)) byType.set(type, toNode({ conditionType: type }) as YAMLMap)
    if (byType.size === 0) return
    this.setSortedList(['info', 'readinessGates'], [...byType.values()], (n) => String(n.get('conditionType') ?? ''))
  }

  private conditionNodes(): YAMLMap[] {
    const seq = this.object.getNode(['status', 'conditions'])
    return isSeq(seq) ? seq.items.filter((item): item is YAMLMap => isMap(item)) : []
  }

  private gateNodes(): YAMLMap[] {
    const seq = this.object.getNode(['info', 'readinessGates'])
    return isSeq(seq) ? seq.items.filter((item): item is YAMLMap => isMap(item)) : []
  }

  /** Writes map entries sorted by key (stable), reusing the sequence node when there is one. */
  private setSortedList(path: readonly [string, string], nodes: YAMLMap[], key: (node: YAMLMap) => string): void {
    const sorted = [...nodes].sort((a, b) => {
      const ka = key(a)
      const kb = key(b)
      return ka < kb ? -1 : ka > kb ? 1 : 0
    })
    this.seqAt(path).items = sorted
  }

  /** The list at `path`, an empty one set there when there is none. */
  private seqAt(path: readonly [string, string]): YAMLSeq {
    const found = this.object.getNode(path)
    if (isSeq(found)) return found
    this.object.set(path, [])
    const made = this.object.getNode(path)
    if (!isSeq(made)) throw new Error(`${path.join('.')} is not a list after setting one`)
    return made
  }
}

function str(entry: KubeObject, key: string): string {
  const value = entry.get([key])
  return value === undefined || value === null ? '' : String(value)
}

/** kpt's field order: type, status, reason, message; empty fields omitted. */
function conditionValue(condition: KptCondition): Record<string, string> {
  const value: Record<string, string> = { type: condition.type, status: condition.status }
  if (condition.reason) value['reason'] = condition.reason
  if (condition.message) value['message'] = condition.message
  return value
}
