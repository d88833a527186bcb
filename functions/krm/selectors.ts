/**
 * Kubernetes label selectors (`metav1.LabelSelector`) with apimachinery's
 * semantics and error messages (`LabelSelectorAsSelector`, `NewRequirement`).
 */

/** One `matchExpressions` entry. */
export interface LabelSelectorRequirement {
  key: string
  operator: string
  values?: string[]
}

/** A label selector; an empty one matches everything. */
export interface LabelSelector {
  matchLabels?: Record<string, string>
  matchExpressions?: LabelSelectorRequirement[]
}

/** A validated selector, ready to match label sets. */
export type CompiledSelector = (labels: Readonly<Record<string, string>>) => boolean

type Requirement = { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values: string[] }

/**
 * Validates a selector and returns a matcher, or the apimachinery error text
 * (e.g. `"Foo" is not a valid label selector operator`). matchLabels are
 * checked in key order, then matchExpressions in list order; the first
 * invalid requirement is reported, as apimachinery does.
 */
export function compileLabelSelector(
  selector: LabelSelector,
): { ok: true; matches: CompiledSelector } | { ok: false; error: string } {
  const requirements: Requirement[] = []
  const matchLabels = selector.matchLabels ?? {}
  for (const key of Object.keys(matchLabels).sort()) {
    const value = matchLabels[key]!
    const errors = [...keyErrors(key), ...valueErrors(key, value, 'values[0]')]
    if (errors.length > 0) return { ok: false, error: aggregate(errors) }
    requirements.push({ key, operator: 'In', values: [value] })
  }
  for (const expr of selector.matchExpressions ?? []) {
    const operator = expr.operator
    if (operator !== 'In' && operator !== 'NotIn' && operator !== 'Exists' && operator !== 'DoesNotExist') {
      return { ok: false, error: `${JSON.stringify(operator)} is not a valid label selector operator` }
    }
    const values = expr.values ?? []
    const errors = keyErrors(expr.key)
    if ((operator === 'In' || operator === 'NotIn') && values.length === 0) {
      errors.push(invalid('values', jsonOrNull(values), "for 'in', 'notin' operators, values set can't be empty"))
    }
    if ((operator === 'Exists' || operator === 'DoesNotExist') && values.length > 0) {
      errors.push(invalid('values', jsonOrNull(values), 'values set must be empty for exists and does not exist'))
    }
    values.forEach((v, i) => errors.push(...valueErrors(expr.key, v, `values[${i}]`)))
    if (errors.length > 0) return { ok: false, error: aggregate(errors) }
    requirements.push({ key: expr.key, operator, values })
  }
  return { ok: true, matches: (labels) => requirements.every((r) => matchesRequirement(r, labels)) }
}

/** True when the labels satisfy the selector; throws on an invalid selector. */
export function matchesLabelSelector(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  const compiled = compileLabelSelector(selector)
  if (!compiled.ok) throw new Error(compiled.error)
  return compiled.matches(labels)
}

function matchesRequirement(r: Requirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key)
  switch (r.operator) {
    case 'In':
      return has && r.values.includes(labels[r.key]!)
    case 'NotIn':
      return !has || !r.values.includes(labels[r.key]!)
    case 'Exists':
      return has
    case 'DoesNotExist':
      return !has
  }
}

// --- apimachinery validation messages (util/validation, util/validation/field) ---

const qualifiedNameFmt = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'
const qualifiedName = new RegExp(`^${qualifiedNameFmt}$`)
const qualifiedNameMsg =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
const labelValueFmt = '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?'
const labelValue = new RegExp(`^${labelValueFmt}$`)
const labelValueMsg =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
const dns1123LabelFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?'
const dns1123Label = new RegExp(`^${dns1123LabelFmt}$`)
const dns1123LabelMsg =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"
const dns1123SubdomainFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'
const dns1123Subdomain = new RegExp(`^${dns1123SubdomainFmt}$`)
const dns1123SubdomainMsg =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"

function regexError(msg: string, fmt: string, ...examples: string[]): string {
  const shown = examples.map((e) => `'${e}', `).join(' or ')
  return `${msg} (e.g. ${shown}regex used for validation is '${fmt}')`
}

/** apimachinery `IsQualifiedName`: label keys, annotation keys. */
export function qualifiedNameErrors(value: string): string[] {
  const errors: string[] = []
  const parts = value.split('/')
  let name: string
  if (parts.length === 1) name = parts[0]!
  else if (parts.length === 2) {
    const prefix = parts[0]!
    name = parts[1]!
    if (prefix.length === 0) errors.push('prefix part must be non-empty')
    else errors.push(...dns1123SubdomainErrors(prefix).map((m) => `prefix part ${m}`))
  } else {
    return [
      `a qualified name ${regexError(qualifiedNameMsg, qualifiedNameFmt, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ]
  }
  if (name.length === 0) errors.push('name part must be non-empty')
  else if (name.length > 63) errors.push('name part must be no more than 63 characters')
  if (!qualifiedName.test(name)) {
    errors.push(`name part ${regexError(qualifiedNameMsg, qualifiedNameFmt, 'MyName', 'my.name', '123-abc')}`)
  }
  return errors
}

/** apimachinery `IsDNS1123Subdomain`: object names such as a PackageVariant's. */
export function dns1123SubdomainErrors(value: string): string[] {
  const errors: string[] = []
  if (value.length > 253) errors.push('must be no more than 253 characters')
  if (!dns1123Subdomain.test(value)) errors.push(regexError(dns1123SubdomainMsg, dns1123SubdomainFmt, 'example.com'))
  return errors
}

/** apimachinery `IsDNS1123Label`: Repository names and package path segments. */
export function dns1123LabelErrors(value: string): string[] {
  const errors: string[] = []
  if (value.length > 63) errors.push('must be no more than 63 characters')
  if (!dns1123Label.test(value)) errors.push(regexError(dns1123LabelMsg, dns1123LabelFmt, 'my-name', '123-abc'))
  return errors
}

/** apimachinery `IsValidLabelValue`. */
export function labelValueErrors(value: string): string[] {
  const errors: string[] = []
  if (value.length > 63) errors.push('must be no more than 63 characters')
  if (!labelValue.test(value)) errors.push(regexError(labelValueMsg, labelValueFmt, 'MyValue', 'my_value', '12345'))
  return errors
}

function keyErrors(key: string): string[] {
  const errors = qualifiedNameErrors(key)
  return errors.length > 0 ? [invalid('key', JSON.stringify(key), errors.join('; '))] : []
}

function valueErrors(key: string, value: string, path: string): string[] {
  const errors = labelValueErrors(value)
  return errors.length > 0 ? [invalid(`${path}[${key}]`, JSON.stringify(value), errors.join('; '))] : []
}

function invalid(field: string, value: string, detail: string): string {
  return `${field}: Invalid value: ${value}: ${detail}`
}

function jsonOrNull(values: string[]): string {
  return values.length === 0 ? 'null' : JSON.stringify(values)
}

/** field.ErrorList.ToAggregate().Error(): one message alone, several in brackets. */
function aggregate(errors: string[]): string {
  return errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`
}

/**
 * A selector in kubectl's syntax, as apimachinery's `LabelSelectorAsSelector(...).String()`
 * writes it: requirements sorted by key, `key=value`, `key in (a,b)`, `key notin (a,b)`, `key`, `!key`.
 */
export function formatLabelSelector(selector: LabelSelector): string {
  const terms: { key: string; text: string }[] = [
    ...Object.entries(selector.matchLabels ?? {}).map(([key, value]) => ({ key, text: `${key}=${value}` })),
    ...(selector.matchExpressions ?? []).map((e) => {
      const values = [...(e.values ?? [])].sort().join(',')
      const text =
        e.operator === 'In'
          ? `${e.key} in (${values})`
          : e.operator === 'NotIn'
            ? `${e.key} notin (${values})`
            : e.operator === 'Exists'
              ? e.key
              : e.operator === 'DoesNotExist'
                ? `!${e.key}`
                : `${e.key} ${e.operator} (${values})`
      return { key: e.key, text }
    }),
  ]
  return terms
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((t) => t.text)
    .join(',')
}
