/**
 * The building blocks of our CRDs' OpenAPI schemas: the Schema type, its
 * constructors, and the Kubernetes types several CRDs share (conditions,
 * label selectors, printer columns).
 */
/** An OpenAPI v3 schema, as much of it as these CRDs use. */
export interface Schema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'boolean'
  description?: string
  properties?: Record<string, Schema>
  items?: Schema
  additionalProperties?: Schema
  required?: string[]
  format?: string
  enum?: string[]
  default?: string
  minimum?: number
  minLength?: number
  maxLength?: number
  pattern?: string
  'x-kubernetes-map-type'?: 'atomic'
  'x-kubernetes-list-type'?: 'atomic' | 'map'
  'x-kubernetes-list-map-keys'?: string[]
  'x-kubernetes-int-or-string'?: true
  'x-kubernetes-validations'?: { rule: string; message: string }[]
  'x-kubernetes-preserve-unknown-fields'?: true
}

export const string = (extra: Schema = {}): Schema => ({ type: 'string', ...extra })
export const integer = (extra: Schema = {}): Schema => ({ type: 'integer', ...extra })
export const boolean = (): Schema => ({ type: 'boolean' })
export const array = (items: Schema, extra: Schema = {}): Schema => ({ type: 'array', items, ...extra })
export const stringMap = (): Schema => ({ type: 'object', additionalProperties: string() })
export const object = (properties: Record<string, Schema>, extra: Schema = {}): Schema => ({
  type: 'object',
  properties,
  ...extra,
})

/** An object schema whose properties are exactly the fields of T (checked by the compiler). */
export function fields<T>(properties: { [K in keyof Required<T>]: Schema }, extra: Schema = {}): Schema {
  return object(properties, extra)
}

/** `metav1.Condition`, with the API server's own limits. */
export const condition = object(
  {
    lastTransitionTime: string({ format: 'date-time' }),
    message: string({ maxLength: 32768 }),
    observedGeneration: integer({ format: 'int64', minimum: 0 }),
    reason: string({ maxLength: 1024, minLength: 1, pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$' }),
    status: string({ enum: ['True', 'False', 'Unknown'] }),
    type: string({
      maxLength: 316,
      pattern:
        '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
    }),
  },
  { required: ['lastTransitionTime', 'message', 'reason', 'status', 'type'] },
)
export const conditions = array(condition)

/** `metav1.LabelSelector`'s fields, inlined where Porch inlines them. */
export const labelSelectorFields = {
  matchExpressions: array(
    object(
      { key: string(), operator: string(), values: array(string(), { 'x-kubernetes-list-type': 'atomic' }) },
      { required: ['key', 'operator'] },
    ),
    {
      'x-kubernetes-list-type': 'atomic',
    },
  ),
  matchLabels: stringMap(),
}
export const labelSelector = object(labelSelectorFields, { 'x-kubernetes-map-type': 'atomic' })

/** A column of `kubectl get`. */
export interface PrinterColumn {
  jsonPath: string
  name: string
  type: string
}
