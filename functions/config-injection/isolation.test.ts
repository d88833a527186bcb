/**
 * Isolation: config injection reads only objects in the PackageVariant's
 * namespace. A same-named object in another namespace is never injected,
 * whether it is the only candidate or listed first.
 */
import { parseValue } from '../krm/yaml/index.js'
import { parseObjects, runFunction } from '../krm/index.js'
import { source } from '../../test/support/source.js'
import { configInjectionFunction } from './index.js'

const input = (pvNamespace: string) => source`
  apiVersion: config.kubernetes.io/v1
  kind: ResourceList
  items:
  - apiVersion: kpt.dev/v1
    kind: Kptfile
    metadata:
      name: pkg
      annotations:
        internal.config.kubernetes.io/path: Kptfile
  - apiVersion: v1
    kind: ConfigMap
    metadata:
      name: endpoints
      annotations:
        kpt.dev/config-injection: optional
        internal.config.kubernetes.io/path: endpoints.yaml
    data:
      api: placeholder
  functionConfig:
    apiVersion: config.porch.kpt.dev/v1alpha1
    kind: PackageVariant
    metadata:
      name: pv
      namespace: ${pvNamespace}
    spec:
      injectors:
      - name: endpoints
`

const secretOf = (namespace: string, api: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: endpoints, namespace: ${namespace}}\ndata: {api: ${api}}\n`

function injectedApi(pvNamespace: string, cluster: string): unknown {
  const out = runFunction(configInjectionFunction, input(pvNamespace), {
    sources: parseObjects(cluster, 'cluster.yaml'),
  })
  expect(out.exitCode).toBe(0)
  const items = (parseValue(out.output) as { items: { kind: string; data?: { api?: unknown } }[] }).items
  return items.find((i) => i.kind === 'ConfigMap')!.data!.api
}

describe('config-injection isolation', () => {
  test('an object of another namespace is never injected, even when it is the only candidate', () => {
    expect(injectedApi('team-a', secretOf('team-b', 'team-b-secret'))).toBe('placeholder')
  })

  test("with same-named objects in several namespaces, only the PackageVariant's own is read", () => {
    const cluster = [
      secretOf('team-b', 'team-b-secret'),
      secretOf('team-a', 'team-a-value'),
      secretOf('default', 'default-value'),
    ].join('---\n')
    expect(injectedApi('team-a', cluster)).toBe('team-a-value')
    expect(injectedApi('team-b', cluster)).toBe('team-b-secret')
  })

  test('an object without a namespace counts as in `default`, not in every namespace', () => {
    const cluster = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: endpoints}\ndata: {api: unscoped}\n'
    expect(injectedApi('team-a', cluster)).toBe('placeholder')
    expect(injectedApi('default', cluster)).toBe('unscoped')
  })
})
