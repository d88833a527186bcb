import { parseObjects } from '../krm/index.js'
import { source } from '../../test/support/source.js'
import { combineErrors, readPackageVariant, validatePackageVariant } from './package-variant.js'

function read(yaml: string) {
  const [object] = parseObjects(yaml, 'pv.yaml')
  const result = readPackageVariant(object!)
  if (!result.ok) throw new Error(result.errors.map((e) => e.message).join('; '))
  return result.value
}

describe('readPackageVariant', () => {
  test('a null upstream or downstream is absent, as Go decodes it into a nil pointer', () => {
    const pv = read(source`
      apiVersion: config.porch.kpt.dev/v1alpha1
      kind: PackageVariant
      metadata:
        name: pv
      spec:
        upstream: null
        downstream: ~
        packageContext: null
    `)
    expect(pv.spec).toEqual({})
    expect(combineErrors(validatePackageVariant(pv))).toBe(
      'missing required field spec.upstream; missing required field spec.downstream',
    )
  })

  test('every field of the spec, null list entries reading as empty maps', () => {
    const pv = read(source`
      apiVersion: config.porch.kpt.dev/v1alpha1
      kind: PackageVariant
      metadata:
        name: pv
      spec:
        upstream: {repo: blueprints, package: nginx, revision: 2}
        downstream: {repo: edge, package: nginx}
        adoptionPolicy: adoptExisting
        labels: {a: b}
        packageContext: {data: {region: us}, removeKeys: [old]}
        pipeline:
          mutators:
          - image: set-labels:v0.1
            configMap: {app: web}
          -
        injectors:
        - {kind: ConfigMap, name: endpoints}
    `)
    expect(pv.spec).toEqual({
      upstream: { repo: 'blueprints', package: 'nginx', revision: 2 },
      downstream: { repo: 'edge', package: 'nginx' },
      adoptionPolicy: 'adoptExisting',
      labels: { a: 'b' },
      packageContext: { data: { region: 'us' }, removeKeys: ['old'] },
      pipeline: { mutators: [{ image: 'set-labels:v0.1', configMap: { app: 'web' } }, {}] },
      injectors: [{ kind: 'ConfigMap', name: 'endpoints' }],
    })
  })
})
