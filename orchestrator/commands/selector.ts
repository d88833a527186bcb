/**
 * `--selector`: a label selector written as kubectl takes it
 * (`tier=canary,region in (eu-west1,eu-north1),!legacy`), read into a
 * LabelSelector and compiled with Kubernetes' semantics and messages.
 */
import { compileLabelSelector } from '../../functions/krm/index.js'
import type { CompiledSelector, LabelSelector, LabelSelectorRequirement } from '../../functions/krm/index.js'

/** The selector `text` as a matcher, or what is wrong with it. */
export function parseSelectorOption(
  text: string,
): { ok: true; matches: CompiledSelector } | { ok: false; error: string } {
  const selector: LabelSelector = { matchLabels: {}, matchExpressions: [] }
  const requirements = splitRequirements(text)
  if (!requirements) return { ok: false, error: `--selector ${JSON.stringify(text)}: unbalanced parentheses` }
  for (const raw of requirements) {
    const requirement = raw.trim()
    if (requirement === '')
      return { ok: false, error: `--selector ${JSON.stringify(text)}: an empty requirement (a stray comma?)` }
    const set = /^([^\s!=(),]+)\s+(in|notin)\s*\(([^()]*)\)$/.exec(requirement)
    const equality = /^([^\s!=(),]+)\s*(==|=|!=)\s*([^\s!=(),]*)$/.exec(requirement)
    const exists = /^(!?)\s*([^\s!=(),]+)$/.exec(requirement)
    let expression: LabelSelectorRequirement
    if (set) {
      const values = set[3]!.split(',').map((v) => v.trim())
      expression = { key: set[1]!, operator: set[2] === 'in' ? 'In' : 'NotIn', values: values.filter((v) => v !== '') }
    } else if (equality) {
      if (equality[2] !== '!=') {
        selector.matchLabels![equality[1]!] = equality[3]!
        continue
      }
      expression = { key: equality[1]!, operator: 'NotIn', values: [equality[3]!] }
    } else if (exists) expression = { key: exists[2]!, operator: exists[1] ? 'DoesNotExist' : 'Exists' }
    else
      return {
        ok: false,
        error: `--selector ${JSON.stringify(text)}: cannot read ${JSON.stringify(requirement)}: write key=value, key!=value, key in (a,b), key notin (a,b), key or !key`,
      }
    selector.matchExpressions!.push(expression)
  }
  const compiled = compileLabelSelector(selector)
  return compiled.ok ? compiled : { ok: false, error: `--selector ${JSON.stringify(text)}: ${compiled.error}` }
}

/** The requirements of a selector, split at the commas outside parentheses; undefined when the parentheses do not balance. */
function splitRequirements(text: string): string[] | undefined {
  const parts: string[] = []
  let depth = 0
  let start = 0
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c === '(') depth++
    else if (c === ')' && --depth < 0) return undefined
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i))
      start = i + 1
    }
  }
  if (depth !== 0) return undefined
  parts.push(text.slice(start))
  return parts
}
