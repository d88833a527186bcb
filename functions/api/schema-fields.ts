/**
 * A schema as one line per field: its path, type and constraints (required
 * fields, formats, limits, Kubernetes list and map types, CEL rules), without
 * descriptions. Two schemas with equal listings accept the same objects.
 */
import type { Schema } from './crds.js'

const structural = new Set(['description', 'properties', 'items', 'type', 'additionalProperties', 'required'])

export function schemaFields(schema: Schema, path = ''): string[] {
  const constraints = Object.entries(schema)
    .filter(([key]) => !structural.has(key))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, value]) => ` ${key}=${JSON.stringify(value)}`)
  const required = schema.required ? ` required=${[...schema.required].sort().join(',')}` : ''
  const lines = [`${path || '.'}: ${schema.type ?? '?'}${required}${constraints.join('')}`]
  for (const name of Object.keys(schema.properties ?? {}).sort())
    lines.push(...schemaFields(schema.properties![name]!, `${path}.${name}`))
  if (schema.items) lines.push(...schemaFields(schema.items, `${path}[]`))
  if (schema.additionalProperties) lines.push(...schemaFields(schema.additionalProperties, `${path}{}`))
  return lines
}
