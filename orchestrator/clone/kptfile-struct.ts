/**
 * The Kptfile as kpt's Go struct sees it (`pkg/api/kptfile/v1/types.go`):
 * `kpt pkg get` and `kpt pkg update` decode the root Kptfile into that struct
 * and encode it back, so the file they write has a fixed field order, sorted
 * maps, wide sequences and no comments. This module does the same, so a
 * clone's Kptfile is byte for byte what kpt writes.
 */
import { LRUCache } from 'lru-cache'
import { Document, isMap, isScalar, isSeq, parse, print, toNode } from '../../functions/krm/yaml/index.js'

type StringMap = Record<string, string>

/** A kpt function (`image`, `exec`, config, selectors). */
export interface KptFunction {
  image?: string
  exec?: string
  configPath?: string
  configMap?: StringMap
  name?: string
  /** Newer kpt's image tag or semver constraint. */
  tag?: string
  selectors?: KptSelector[]
  exclude?: KptSelector[]
}

export interface KptSelector {
  apiVersion?: string
  kind?: string
  name?: string
  namespace?: string
  labels?: StringMap
  annotations?: StringMap
}

export interface GitLock {
  repo?: string
  directory?: string
  ref?: string
  commit?: string
}

/** The decoded Kptfile. */
export interface KptfileStruct {
  apiVersion?: string
  kind?: string
  metadata?: { name?: string; namespace?: string; labels?: StringMap; annotations?: StringMap }
  upstream?: { type?: string; git?: Omit<GitLock, 'commit'>; updateStrategy?: string }
  upstreamLock?: { type?: string; git?: GitLock }
  info?: {
    site?: string
    emails?: string[]
    license?: string
    licenseFile?: string
    description?: string
    keywords?: string[]
    man?: string
    readinessGates?: { conditionType?: string }[]
  }
  pipeline?: { mutators?: KptFunction[]; validators?: KptFunction[] }
  inventory?: { namespace?: string; name?: string; inventoryID?: string; labels?: StringMap; annotations?: StringMap }
  status?: { conditions?: { type?: string; status?: string; reason?: string; message?: string }[] }
}

/** Field order of each struct, as yaml.v3 encodes it. */
const selectorFields = ['apiVersion', 'kind', 'name', 'namespace', 'labels', 'annotations'] as const
const functionFields = ['image', 'exec', 'configPath', 'configMap', 'name', 'tag', 'selectors', 'exclude'] as const
const schema: Shape = {
  apiVersion: 'string',
  kind: 'string',
  metadata: { name: 'string', namespace: 'string', labels: 'map', annotations: 'map' },
  upstream: { type: 'string', git: { repo: 'string', directory: 'string', ref: 'string' }, updateStrategy: 'string' },
  upstreamLock: { type: 'string', git: { repo: 'string', directory: 'string', ref: 'string', commit: 'string' } },
  info: {
    site: 'string',
    emails: ['string'],
    license: 'string',
    licenseFile: 'string',
    description: 'string',
    keywords: ['string'],
    man: 'string',
    readinessGates: [{ conditionType: 'string' }],
  },
  pipeline: { mutators: [fnShape()], validators: [fnShape()] },
  inventory: { namespace: 'string', name: 'string', inventoryID: 'string', labels: 'map', annotations: 'map' },
  status: { conditions: [{ type: 'required', status: 'required', reason: 'string', message: 'string' }] },
}

type Shape = 'string' | 'required' | 'map' | Shape[] | { [key: string]: Shape }

function fnShape(): Shape {
  const selector: Shape = Object.fromEntries(
    selectorFields.map((f) => [f, f === 'labels' || f === 'annotations' ? 'map' : 'string']),
  )
  const fn: { [key: string]: Shape } = {}
  for (const f of functionFields)
    fn[f] = f === 'configMap' ? 'map' : f === 'selectors' || f === 'exclude' ? [selector] : 'string'
  return fn
}

type Decoded = { ok: true; value: KptfileStruct } | { ok: false; message: string }

/**
 * Decodings already made, by text: an update decodes the same upstream
 * Kptfiles for every variant. Each caller gets its own copy (callers edit
 * the struct). Budget: 500 small structs.
 */
const decodings = new LRUCache<string, Decoded>({ max: 500 })

/** Decodes a Kptfile strictly, as kpt does (`KnownFields(true)`): an unknown field is an error naming it. */
export function decodeKptfile(text: string): Decoded {
  let decoded = decodings.get(text)
  if (!decoded) decodings.set(text, (decoded = decodeKptfileText(text)))
  return decoded.ok ? { ok: true, value: structuredClone(decoded.value) } : decoded
}

function decodeKptfileText(text: string): Decoded {
  let doc
  try {
    doc = parse(text, { source: 'Kptfile' })
  } catch (err) {
    return { ok: false, message: (err as Error).message }
  }
  const errors: string[] = []
  const value = decode(doc.contents, schema, '', errors)
  if (errors.length > 0) return { ok: false, message: `Kptfile: ${errors[0]}` }
  return { ok: true, value: value ?? {} }
}

function decode(node: unknown, shape: Shape, path: string, errors: string[]): unknown {
  if (node === null || node === undefined || (isScalar(node) && node.value === null)) return undefined
  if (shape === 'string' || shape === 'required') {
    if (isScalar(node) && typeof node.value !== 'object') return String(node.value)
    errors.push(`\`${path}\` must be a string`)
    return undefined
  }
  if (shape === 'map') {
    if (!isMap(node)) {
      errors.push(`\`${path}\` must be a map of strings`)
      return undefined
    }
    const out: StringMap = {}
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : ''
      const v = pair.value
      if (isScalar(v) && typeof v.value !== 'object') out[key] = String(v.value)
      else if (isScalar(v) && v.value === null) out[key] = ''
      else errors.push(`\`${path}.${key}\` must be a string`)
    }
    return out
  }
  if (Array.isArray(shape)) {
    if (!isSeq(node)) {
      errors.push(`\`${path}\` must be a list`)
      return undefined
    }
    return node.items.map((item, i) => decode(item, shape[0]!, `${path}[${i}]`, errors) ?? {})
  }
  if (!isMap(node)) {
    errors.push(`\`${path || '.'}\` must be a map`)
    return undefined
  }
  const out: Record<string, unknown> = {}
  for (const pair of node.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : ''
    const child = shape[key]
    const at = path ? `${path}.${key}` : key
    if (child === undefined) {
      errors.push(`field ${key} not found in type ${typeName(path)}`)
      continue
    }
    const value = decode(pair.value, child, at, errors)
    if (value !== undefined) out[key] = value
  }
  return out
}

function typeName(path: string): string {
  const last =
    path
      .replace(/\[\d+\]/g, '')
      .split('.')
      .pop() ?? ''
  return last === '' ? 'v1.KptFile' : `v1.${last}`
}

/** Encodes a Kptfile as kpt's struct encoding writes it: fixed order, sorted maps, empty fields omitted, wide sequences. */
export function encodeKptfile(kptfile: KptfileStruct): string {
  const doc = new Document()
  doc.contents = toNode(kptfileValue(kptfile))
  return print(doc, { wide: true })
}

/** The plain value encodeKptfile prints (what parsing its text would give): the struct's fields in kpt's order, empty ones omitted. */
export function kptfileValue(kptfile: KptfileStruct): Record<string, unknown> {
  return ordered(kptfile, schema) as Record<string, unknown>
}

function ordered(value: unknown, shape: Shape): unknown {
  if (value === undefined || value === null) return undefined
  if (shape === 'string' || shape === 'required') {
    const s = String(value)
    return s === '' && shape === 'string' ? undefined : s
  }
  if (shape === 'map') {
    const entries = Object.entries(value as StringMap).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return entries.length === 0 ? undefined : Object.fromEntries(entries)
  }
  if (Array.isArray(shape)) {
    // Omitting empty values is for struct fields: an empty string in a list stays (`keywords: [""]`), as yaml.v3 writes it.
    const item = shape[0]!
    const list = (value as unknown[]).map((v) => (item === 'string' ? String(v ?? '') : (ordered(v, item) ?? {})))
    return list.length === 0 ? undefined : list
  }
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(shape)) {
    const v = ordered((value as Record<string, unknown>)[key], shape[key]!)
    if (v !== undefined) out[key] = v
  }
  // The struct pointers (upstream, info...) are omitted when nil, not when empty; the top level always has apiVersion and kind.
  return Object.keys(out).length === 0 && shape !== schema ? {} : out
}
