import { parseValue } from '../krm/yaml/index.js'
import { source } from '../../test/support/source.js'
import { runFunction } from '../krm/index.js'
import { packageContextFunction } from './index.js'

const kptfile = source`
  - apiVersion: kpt.dev/v1
    kind: Kptfile
    metadata:
      name: edge
      annotations:
        internal.config.kubernetes.io/path: 'Kptfile'
`

const context = (data = '    data:\n      name: edge # pkg name\n      tier: silver\n') => `- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: kptfile.kpt.dev
    annotations:
      config.kubernetes.io/local-config: "true"
      internal.config.kubernetes.io/path: 'package-context.yaml'
${data.replace(/^ {2}/gm, '')}`

function list(items: string, functionConfig: string): string {
  return `apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n${items}functionConfig:\n${functionConfig.replace(/^/gm, '  ')}`
}

const pv = (packageContext: string) => `apiVersion: config.porch.kpt.dev/v1alpha1
kind: PackageVariant
metadata:
  name: pv
spec:
  packageContext:
${packageContext.replace(/^/gm, '    ')}`

const configMap = (data: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: function-input\ndata: ${data}`

/** The result messages of a run's output list. */
function messages(output: string): string[] {
  return ((parseValue(output) as { results?: { message: string }[] }).results ?? []).map((r) => r.message)
}

function run(items: string, functionConfig: string) {
  return runFunction(packageContextFunction, list(items, functionConfig))
}

describe('package-context', () => {
  test('sets new keys after existing ones, in key order, and overwrites in place', () => {
    const out = run(kptfile + context(), pv('data:\n  zone: b\n  tier: gold\n  enabled: "yes"'))
    expect(out.exitCode).toBe(0)
    expect(out.output).toContain(
      '  data:\n    name: edge # pkg name\n    tier: gold\n    enabled: "yes"\n    zone: b\n',
    )
    expect(out.output).toContain('package context: set `enabled`, `tier`, `zone`')
  })

  test('removeKeys runs after data, so a key in both is removed (as in Porch)', () => {
    const out = run(kptfile + context(), pv('data:\n  tier: gold\nremoveKeys: [tier, missing]'))
    expect(out.exitCode).toBe(0)
    expect(out.output).toContain('  data:\n    name: edge # pkg name\nfunctionConfig')
    expect(out.output).toContain('package context: removed `tier`')
  })

  test('a second run changes nothing', () => {
    const first = run(kptfile + context(), pv('data:\n  tier: gold'))
    const items = first.output.slice(first.output.indexOf('items:\n') + 7, first.output.indexOf('functionConfig:'))
    const second = run(items, pv('data:\n  tier: gold'))
    expect(second.output.slice(0, second.output.indexOf('functionConfig:'))).toBe(
      first.output.slice(0, first.output.indexOf('functionConfig:')),
    )
    expect(second.output).toContain('package context already up to date')
  })

  test('data emptied by removeKeys stays an empty map', () => {
    const out = run(kptfile + context('    data:\n      a: b\n'), pv('removeKeys: [a]'))
    expect(out.output).toContain('  data: {}\n')
  })

  test('a ConfigMap functionConfig sets its data (kpt fn eval -- k=v)', () => {
    const out = run(kptfile + context(), configMap('{region: us-east1}'))
    expect(out.exitCode).toBe(0)
    expect(out.output).toContain('    region: us-east1\n')
  })

  test('nothing to do leaves the package alone, even without package-context.yaml', () => {
    const out = run(kptfile, configMap('{}'))
    expect(out.exitCode).toBe(0)
    expect(out.output).toContain('no package context keys to set or remove; package unchanged')
  })

  test('only the root package context is changed, not a subpackage one', () => {
    const sub = context('    data:\n      name: sub\n').replace(
      "internal.config.kubernetes.io/path: 'package-context.yaml'",
      "internal.config.kubernetes.io/path: 'package-context.yaml'\n      internal.config.kubernetes.io/package-path: '/pkg/sub'",
    )
    const root = context().replace(
      "internal.config.kubernetes.io/path: 'package-context.yaml'",
      "internal.config.kubernetes.io/path: 'package-context.yaml'\n      internal.config.kubernetes.io/package-path: '/pkg'",
    )
    const out = run(kptfile + sub + root, configMap('{tier: gold}'))
    expect(out.exitCode).toBe(0)
    expect(out.output).toContain('    name: sub\n')
    expect(out.output.match(/tier: gold/g)).toHaveLength(2) // root + functionConfig
  })

  test.each([
    [
      'reserved key in data',
      pv('data:\n  name: other'),
      'spec.packageContext.data: Invalid value: {"name":"other"}: must not contain the key "name"',
      'spec.packageContext.data',
    ],
    [
      'reserved key in removeKeys',
      pv('removeKeys: [a, package-path]'),
      'spec.packageContext.removeKeys: Invalid value: ["a","package-path"]: must not contain the key "package-path"',
      'spec.packageContext.removeKeys',
    ],
    [
      'a non-string data value',
      pv('data:\n  replicas: [3]'),
      '`spec.packageContext.data.replicas` must be a string',
      'spec.packageContext.data.replicas',
    ],
    [
      'reserved key in a ConfigMap',
      configMap('{package-path: x}'),
      'data: Invalid value: {"package-path":"x"}: must not contain the key "package-path"',
      'data',
    ],
    [
      'an unsupported kind',
      'apiVersion: fn.kpt.dev/v1alpha1\nkind: SetLabels\nmetadata:\n  name: x\n',
      'unsupported functionConfig SetLabels.fn.kpt.dev/v1alpha1: expected PackageVariant.config.porch.kpt.dev/v1alpha1 or ConfigMap.v1',
      'kind',
    ],
  ])('invalid config: %s', (_name, fc, message, field) => {
    const out = run(kptfile + context(), fc)
    expect(out.exitCode).toBe(1)
    expect(messages(out.output)).toContainEqual(expect.stringContaining(message))
    expect(out.output).toContain(`  field:\n    path: ${field}\n`)
    expect(out.output).toContain('    tier: silver\n')
  })

  test('no functionConfig at all', () => {
    const out = runFunction(
      packageContextFunction,
      `apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n${kptfile}`,
    )
    expect(out.exitCode).toBe(1)
    expect(out.output).toContain(
      'functionConfig is missing: expected PackageVariant.config.porch.kpt.dev/v1alpha1 or ConfigMap.v1',
    )
  })

  test.each([
    ['no package-context.yaml', kptfile, '"package-context.yaml" not found in package "edge"'],
    [
      'two objects in it',
      kptfile + context() + context(),
      'failed to parse "package-context.yaml" of package "edge": expected exactly one object, got 2',
    ],
    [
      'a wrong kind',
      kptfile + context().replace('kind: ConfigMap', 'kind: Secret'),
      '"package-context.yaml" does not contain kind "ConfigMap" in package "edge"',
    ],
    [
      'a wrong name',
      kptfile + context().replace('name: kptfile.kpt.dev', 'name: other'),
      '"package-context.yaml" does not contain resource named "kptfile.kpt.dev" in package "edge"',
    ],
    ['no data field', kptfile + context(''), 'package "edge" PackageContext no data field found'],
    ['data not a map', kptfile + context('    data: [a]\n'), 'package "edge" PackageContext invalid data field'],
  ])('bad package: %s', (_name, items, message) => {
    const out = run(items, configMap('{tier: gold}'))
    expect(out.exitCode).toBe(1)
    expect(messages(out.output)).toContainEqual(expect.stringContaining(message))
    expect(out.output).not.toContain('    tier: gold\n')
  })
})
