import { readFileSync } from 'node:fs'
import { parseValue } from '../krm/yaml/index.js'
import { join } from 'node:path'
import { crdFileText, customResourceDefinitions } from './crds.js'
import type { Schema } from './crds.js'
import { schemaFields } from './schema-fields.js'

const here = new URL('.', import.meta.url).pathname
const repo = join(here, '..', '..')

interface Crd {
  metadata: { name: string }
  spec: { versions: { name: string; schema: { openAPIV3Schema: Schema } }[] }
}

describe('CustomResourceDefinitions', () => {
  test("every schema equals Porch's, field by field", () => {
    const porch = readFileSync(join(here, 'porch-crd-fields.txt'), 'utf8')
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('## '))
    const ours = customResourceDefinitions
      .filter(({ porch }) => porch)
      .flatMap(({ crd }) => {
        const { metadata, spec } = crd as unknown as Crd
        const version = spec.versions[0]!
        return [`# ${metadata.name} ${version.name}`, ...schemaFields(version.schema.openAPIV3Schema)]
      })
    expect(ours).toEqual(porch)
  })

  test.each(customResourceDefinitions.map(({ file, crd }) => [file, crd] as const))(
    'deploy/crds/%s is what npm run crds writes',
    (file, crd) => {
      expect(readFileSync(join(repo, 'deploy', 'crds', file), 'utf8')).toBe(crdFileText(crd))
    },
  )
})

describe('the Rollout CRD', () => {
  const rollout = customResourceDefinitions.find(({ file }) => file === 'kpt-variants.dev_rollouts.yaml')!
  const schema = (rollout.crd as unknown as Crd).spec.versions[0]!.schema.openAPIV3Schema

  /** The paths of a value that its schema does not declare. */
  function undeclared(value: unknown, s: Schema | undefined, path: string): string[] {
    if (!s) return [path]
    if (Array.isArray(value)) return value.flatMap((v, i) => undeclared(v, s.items, `${path}[${i}]`))
    if (typeof value !== 'object' || value === null) return []
    return Object.entries(value).flatMap(([k, v]) =>
      undeclared(
        v,
        s.properties?.[k] ?? s.additionalProperties ?? (s.type === 'object' && !s.properties ? {} : undefined),
        `${path}.${k}`,
      ),
    )
  }

  test('declares every field of docs/rollouts.md example, status included', () => {
    const text = readFileSync(join(repo, 'docs', 'rollouts.md'), 'utf8')
    const yaml = /```yaml\n(apiVersion: kpt-variants\.dev\/v1alpha1\nkind: Rollout\n[\s\S]*?)```/.exec(text)![1]!
    const example = parseValue(yaml) as Record<string, unknown>
    example['status'] = { approvals: [{ step: 'eu', revision: 'nginx/v2@1a2b3c4d5e6f', time: '2025-06-02T09:00:00Z' }] }
    expect(undeclared(example, schema, '')).toEqual([])
    expect(undeclared({ spec: { stepz: [] } }, schema, '')).toEqual(['.spec.stepz'])
  })
})

describe('the DependencyPolicy CRD', () => {
  const policy = customResourceDefinitions.find(({ file }) => file === 'kpt-variants.dev_dependencypolicies.yaml')!
  const schema = (policy.crd as unknown as Crd).spec.versions[0]!.schema.openAPIV3Schema

  /** The paths of a value its schema does not declare (a field that keeps unknown fields declares all below it). */
  function undeclared(value: unknown, s: Schema | undefined, path: string): string[] {
    if (!s) return [path]
    if (s['x-kubernetes-preserve-unknown-fields']) return []
    if (Array.isArray(value)) return value.flatMap((v, i) => undeclared(v, s.items, `${path}[${i}]`))
    if (typeof value !== 'object' || value === null) return []
    return Object.entries(value).flatMap(([k, v]) =>
      undeclared(
        v,
        s.properties?.[k] ?? s.additionalProperties ?? (s.type === 'object' && !s.properties ? {} : undefined),
        `${path}.${k}`,
      ),
    )
  }

  test('declares every field of the docs/package-dependencies.md example', () => {
    const text = readFileSync(join(repo, 'docs', 'package-dependencies.md'), 'utf8')
    const yaml = /```yaml\n(apiVersion: kpt-variants\.dev\/v1alpha1\nkind: DependencyPolicy\n[\s\S]*?)```/.exec(
      text,
    )![1]!
    const example = parseValue(yaml) as Record<string, unknown>
    expect(Object.keys(example['spec'] as object).length).toBeGreaterThan(8)
    expect(undeclared(example, schema, '')).toEqual([])
    expect(undeclared({ spec: { pinz: [] } }, schema, '')).toEqual(['.spec.pinz'])
  })
})
