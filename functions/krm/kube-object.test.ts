import { source } from '../../test/support/source.js'
import { formatFieldPath } from './field-path.js'
import { FieldTypeError, KubeObject } from './kube-object.js'
import { ResourceList } from './resource-list.js'

function objectOf(yaml: string) {
  const rl = ResourceList.parse(
    `apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n${yaml.replace(/^/gm, '  ').replace(/^ {2}/, '- ')}`,
  )
  return { rl, object: rl.items[0]! }
}

const deployment = source`
  apiVersion: apps/v1
  kind: Deployment
  metadata: # kpt-merge: ns1/web
    name: web
    namespace: ns1
    labels:
      app: web
    annotations:
      internal.config.kubernetes.io/path: 'deploy.yaml'
      internal.config.kubernetes.io/index: '2'
      internal.kpt.dev/upstream-identifier: 'apps|Deployment|ns1|web'
  spec:
    replicas: 3 # three
    template:
      spec:
        containers:
        - name: web
          image: nginx
`

describe('KubeObject', () => {
  test('identity accessors', () => {
    const { object } = objectOf(deployment)
    expect([object.apiVersion, object.kind, object.name, object.namespace, object.group, object.version]).toEqual([
      'apps/v1',
      'Deployment',
      'web',
      'ns1',
      'apps',
      'v1',
    ])
    expect(object.isGVK('apps/v1', 'Deployment')).toBe(true)
    expect(object.isGroupKind('apps', 'Deployment')).toBe(true)
    expect(object.isGroupKind('', 'Deployment')).toBe(false)
    expect(object.path).toBe('deploy.yaml')
    expect(object.index).toBe(2)
    expect(object.fileRef()).toEqual({ path: 'deploy.yaml', index: 2 })
    expect(object.describe()).toBe('Deployment/ns1/web')
  })

  test('typed getters', () => {
    const { object } = objectOf(deployment)
    expect(object.get(['spec', 'replicas'])).toBe(3)
    expect(object.get(['spec', 'template', 'spec', 'containers', 0, 'image'])).toBe('nginx')
    expect(object.getString(['metadata', 'name'])).toBe('web')
    expect(object.getStringMap(['metadata', 'labels'])).toEqual({ app: 'web' })
    expect(object.getString(['metadata', 'missing'])).toBeUndefined()
    expect(() => object.getString(['spec', 'template'])).toThrow(FieldTypeError)
    expect(() => object.getStringMap(['spec', 'template', 'spec', 'containers'])).toThrow(
      'Deployment/ns1/web: `spec.template.spec.containers` must be a map of strings',
    )
  })

  test('set edits in place and keeps every other byte', () => {
    const { rl, object } = objectOf(deployment)
    const before = rl.toString()
    object.set(['spec', 'replicas'], 3)
    expect(rl.toString()).toBe(before)
    object.set(['spec', 'replicas'], 5)
    object.setLabel('tier', 'on')
    object.set(['spec', 'strategy', 'type'], 'Recreate')
    const after = rl.toString()
    expect(after).toContain('    replicas: 5 # three\n')
    expect(after).toContain('      app: web\n      tier: "on"\n')
    expect(after).toContain('    strategy:\n      type: Recreate\n')
    expect(after).toContain('  metadata: # kpt-merge: ns1/web\n')
  })

  test('remove reports whether the field existed', () => {
    const { object } = objectOf(deployment)
    expect(object.remove(['metadata', 'labels', 'app'])).toBe(true)
    expect(object.remove(['metadata', 'labels', 'app'])).toBe(false)
    expect(object.labels()).toEqual({})
  })

  test('the upstream identifier is kpt-owned', () => {
    const { object } = objectOf(deployment)
    expect(() => object.setAnnotation('internal.kpt.dev/upstream-identifier', 'x')).toThrow(/managed by kpt/)
  })

  test('fromObject builds block YAML with safe quoting', () => {
    const { rl } = objectOf(deployment)
    const cm = KubeObject.fromObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c' },
      data: { on: 'yes' },
    })
    cm.setPath('c.yaml')
    rl.items.push(cm)
    expect(rl.toString()).toContain(source`
      - apiVersion: v1
        kind: ConfigMap
        metadata:
          name: c
          annotations:
            internal.config.kubernetes.io/path: c.yaml
            config.kubernetes.io/path: c.yaml
            internal.config.kubernetes.io/index: "0"
            config.kubernetes.io/index: "0"
        data:
          "on": "yes"
    `)
  })

  test('formatFieldPath', () => {
    expect(formatFieldPath(['spec', 'injectors', 0, 'name'])).toBe('spec.injectors[0].name')
  })
})
