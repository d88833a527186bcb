import { readFileSync } from 'node:fs'
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
    const ours = customResourceDefinitions.flatMap(({ crd }) => {
      const { metadata, spec } = crd as unknown as Crd
      const version = spec.versions[0]!
      return [`# ${metadata.name} ${version.name}`, ...schemaFields(version.schema.openAPIV3Schema)]
    })
    expect(ours).toEqual(porch)
  })

  test.each(customResourceDefinitions.map(({ file, crd }) => [file, crd] as const))('deploy/crds/%s is what npm run crds writes', (file, crd) => {
    expect(readFileSync(join(repo, 'deploy', 'crds', file), 'utf8')).toBe(crdFileText(crd))
  })
})
