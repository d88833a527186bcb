import { parse } from '../../functions/krm/yaml/index.js'
import { mergeYamlFile } from './resources.js'
import type { ConflictPolicy } from './fields.js'

const identifier = (name: string, kind: string, apiVersion: string) =>
  `    internal.kpt.dev/upstream-identifier: '${apiVersion.includes('/') ? apiVersion.split('/')[0] : ''}|${kind}|default|${name}'\n`
/** A resource head as kpt writes it: the merge comment and the upstream identifier. */
const head = (name: string, kind = 'ConfigMap', apiVersion = 'v1') =>
  `apiVersion: ${apiVersion}\nkind: ${kind}\nmetadata: # kpt-merge: /${name}\n  name: ${name}\n  annotations:\n${identifier(name, kind, apiVersion)}`

function merge(
  local: string | undefined,
  origin: string | undefined,
  updated: string | undefined,
  policy: ConflictPolicy = 'upstream',
) {
  const result = mergeYamlFile('f.yaml', local, origin, updated, policy)
  if (!result.ok) throw new Error(result.message)
  return result
}

describe('mergeYamlFile: scalars (kpt resource-merge outcome table)', () => {
  const cm = (data: string) => `${head('c')}data:\n${data}`

  it.each([
    ['changed upstream only', '  k: v1\n', '  k: v1\n', '  k: v2\n', '  k: v2\n'],
    ['changed downstream only', '  k: local\n', '  k: v1\n', '  k: v1\n', '  k: local\n'],
    ['added upstream (appended)', '  a: 1\n', '  a: 1\n', '  a: 1\n  c: up\n', '  a: 1\n  c: up\n'],
    ['added downstream', '  a: 1\n  y: local\n', '  a: 1\n', '  a: 2\n', '  a: 2\n  y: local\n'],
    [
      'deleted upstream, downstream unchanged',
      '  d: v\n  e: 1\n',
      '  d: v\n  e: 1\n',
      '  e: 1\n  f: 2\n',
      '  e: 1\n  f: 2\n',
    ],
    ['deleted downstream, upstream unchanged', '  e: 1\n', '  tier: be\n  e: 1\n', '  tier: be\n  e: 2\n', '  e: 2\n'],
    ['upstream sets null', '  p: false\n  q: 1\n', '  p: false\n  q: 1\n', '  p: null\n  q: 2\n', '  q: 2\n'],
    ['same value in another type', '  g: 1\n  h: a\n', '  g: 1\n  h: a\n', '  g: "1"\n  h: b\n', '  g: 1\n  h: b\n'],
    ['downstream quoting kept', '  s: "x1"\n', '  s: x1\n', "  s: 'x2'\n", '  s: "x2"\n'],
  ])('%s', (_name, local, origin, updated, expected) => {
    const result = merge(cm(local), cm(origin), cm(updated))
    expect(result.text).toBe(cm(expected))
    expect(result.conflicts).toEqual([])
  })

  it('reports a value both sides changed, and resolves it by the policy', () => {
    const args = [cm('  k: local\n'), cm('  k: v1\n'), cm('  k: upstream\n')] as const
    const upstream = merge(...args, 'upstream')
    expect(upstream.text).toBe(cm('  k: upstream\n'))
    expect(upstream.conflicts).toEqual([
      { file: 'f.yaml', resource: 'ConfigMap c', field: 'data.k', origin: 'v1', local: 'local', upstream: 'upstream' },
    ])
    expect(merge(...args, 'downstream').text).toBe(cm('  k: local\n'))
  })

  it('reports a field deleted upstream that the downstream changed', () => {
    const result = merge(cm('  d: local\n'), cm('  d: v\n'), cm('  e: 1\n'))
    expect(result.text).toBe(cm('  e: 1\n'))
    expect(result.conflicts.map((c) => c.field)).toEqual(['data.d'])
  })

  it('takes an upstream comment change where the downstream left the node alone', () => {
    expect(merge(cm('  c: v # c-line\n'), cm('  c: v # c-line\n'), cm('  c: v # c-line-up\n')).text).toBe(
      cm('  c: v # c-line-up\n'),
    )
  })

  it('keeps the file byte for byte when upstream did not change it', () => {
    const local = `${cm('  k:    v1\n')}# trailing\n`
    expect(merge(local, cm('  k: v1\n'), cm('  k: v1\n')).text).toBe(local)
  })
})

describe('mergeYamlFile: maps and lists', () => {
  const deploy = (spec: string) => `${head('web', 'Deployment', 'apps/v1')}spec:\n${spec}`

  it('merges containers by name and env by name; new maps get sorted keys', () => {
    const origin = deploy('  template:\n    spec:\n      containers:\n      - name: app\n        image: app:1\n')
    const local = deploy(
      '  template:\n    spec:\n      containers:\n      - name: app\n        image: app:1\n        env:\n        - name: LOCAL\n          value: "1"\n',
    )
    const updated = deploy(
      '  template:\n    spec:\n      containers:\n      - name: app\n        image: app:2\n      - name: side\n        image: side:1\n',
    )
    expect(merge(local, origin, updated).text).toBe(
      deploy(
        '  template:\n    spec:\n      containers:\n      - name: app\n        image: app:2\n        env:\n        - name: LOCAL\n          value: "1"\n      - image: side:1\n        name: side\n',
      ),
    )
  })

  it('replaces a list without merge key when upstream changed it', () => {
    const origin = deploy('  template:\n    spec:\n      containers:\n      - name: app\n        args: [a, b]\n')
    const local = deploy('  template:\n    spec:\n      containers:\n      - name: app\n        args: [a, b, c]\n')
    const updated = deploy('  template:\n    spec:\n      containers:\n      - name: app\n        args: [a, x]\n')
    const result = merge(local, origin, updated)
    expect(result.text).toBe(
      deploy('  template:\n    spec:\n      containers:\n      - name: app\n        args: [a, x]\n'),
    )
    expect(result.conflicts.map((c) => c.field)).toEqual(['spec.template.spec.containers[name=app].args'])
  })

  it('keeps a map deleted upstream as {} (kpt)', () => {
    const cm = (rest: string) => `${head('c')}${rest}`
    expect(merge(cm('q:\n  r: 1\nz: 1\n'), cm('q:\n  r: 1\nz: 1\n'), cm('z: 2\n')).text).toBe(cm('q: {}\nz: 2\n'))
  })

  it('merges finalizers as a set', () => {
    const cm = (list: string) => `${head('c')}  finalizers:\n${list}`
    expect(merge(cm('  - f1\n  - flocal\n'), cm('  - f1\n'), cm('  - f1\n  - fup\n')).text).toBe(
      cm('  - f1\n  - flocal\n  - fup\n'),
    )
  })
})

describe('mergeYamlFile: resources', () => {
  const a = `${head('a')}data:\n  k: v\n`
  const b = `${head('b')}data:\n  k: v\n`

  it('adds a resource new upstream and deletes one removed upstream', () => {
    expect(merge(a, a, `${a}---\n${b}`).text).toBe(`${a}---\n${b}`)
    expect(merge(`${a}---\n${b}`, `${a}---\n${b}`, a).text).toBe(a)
  })

  it('keeps a resource removed upstream that the downstream changed', () => {
    const changed = `${head('b')}data:\n  k: local\n`
    expect(merge(`${a}---\n${changed}`, `${a}---\n${b}`, `${head('a')}data:\n  k: v2\n`).text).toBe(
      `${head('a')}data:\n  k: v2\n---\n${changed}`,
    )
  })

  it('matches a resource renamed downstream by its kpt-merge comment', () => {
    const renamed = `apiVersion: v1\nkind: ConfigMap\nmetadata: # kpt-merge: /a\n  name: a-renamed\n  annotations:\n${identifier('a', 'ConfigMap', 'v1')}data:\n  k: v\n`
    expect(merge(renamed, a, `${head('a')}data:\n  k: v2\n`).text).toBe(renamed.replace('k: v\n', 'k: v2\n'))
  })

  it('deletes a file whose every resource is gone', () => {
    expect(merge(a, a, undefined).text).toBeUndefined()
  })

  it('fails on two resources of one identity in a file', () => {
    const result = mergeYamlFile('f.yaml', `${a}---\n${a}`, a, b, 'upstream')
    expect(result).toEqual({
      ok: false,
      message: 'found duplicate "local" resources in file "f.yaml", please refer to "update" documentation for the fix',
    })
  })
})

describe('mergeYamlFile: layout of what upstream changed (kpt)', () => {
  it('takes an upstream change to the comment above the first key of a map, unless the downstream changed it', () => {
    const cm = (comment: string, k = 'v1') => `${head('c')}data:\n  # ${comment}\n  level: info\n  k: ${k}\n`
    expect(merge(cm('log level'), cm('log level'), cm('log level, upstream', 'v2')).text).toBe(
      cm('log level, upstream', 'v2'),
    )
    expect(merge(cm('log level, local'), cm('log level'), cm('log level, upstream', 'v2')).text).toBe(
      cm('log level, local', 'v2'),
    )
  })

  it('sets the key field last in an element re-added partially (deleted downstream, changed upstream)', () => {
    const deploy = (containers: string) =>
      `${head('web', 'Deployment', 'apps/v1')}spec:\n  template:\n    spec:\n      containers:\n${containers}`
    const c1 = (image: string) => `      - name: c1\n        image: ${image}\n`
    const c2 = '      - name: c2\n        image: img:1\n'
    expect(merge(deploy(c2), deploy(c1('img:1') + c2), deploy(c1('img:2') + c2)).text).toBe(
      deploy(`${c2}      - image: img:2\n        name: c1\n`),
    )
  })

  it("replaces a list with upstream's as it is (key order kept), in the downstream's flow or block style", () => {
    const foo = (spec: string) => `${head('foo', 'Foo', 'example.com/v1')}spec:\n${spec}`
    const origin = foo('  labels: [app]\n  blocky:\n  - a\n  items:\n  - port: http\n    interval: 30s\n')
    const updated = foo('  labels:\n  - app\n  - tier\n  blocky: [a, b]\n  items:\n  - port: http\n    interval: 15s\n')
    expect(merge(origin, origin, updated).text).toBe(
      foo('  labels: [app, tier]\n  blocky:\n  - a\n  - b\n  items:\n  - port: http\n    interval: 15s\n'),
    )
  })
})

describe('mergeYamlFile: a merged resource that would not parse with its comments', () => {
  // The yaml library prints a commented key whose value becomes an empty list as `hosts: # ...` with `[]` on the
  // next line at the key's indentation, which does not parse (functions/krm/readable.ts).
  const binding = (hosts: string) =>
    `${head('orders', 'DatabaseBinding', 'db.example.com/v1')}spec:\n  hosts:${hosts}\n  port: 5432 # the default\n`

  it('is written without its comments (kpt-merge kept), with a warning naming the file and the resource', () => {
    const local = binding(' # ours: the primary first\n  - localhost')
    const result = merge(local, binding('\n  - localhost'), binding(' []'))
    expect(() => parse(result.text!)).not.toThrow()
    expect(result.text).toBe(binding(' []').replace(' # the default', ''))
    expect(result.warnings).toEqual([
      'comments dropped from f.yaml (DatabaseBinding/orders): printed with them, the output would not parse as YAML',
    ])
    // Again from the cache of merges: the same text, the same warning.
    expect(merge(local, binding('\n  - localhost'), binding(' []'))).toEqual(result)
  })

  it('keeps its comments, with no warning, where it reads back', () => {
    const local = binding(' # ours: the primary first\n  - localhost')
    const result = merge(local, binding('\n  - localhost'), binding('\n  - replica'))
    expect(result.text).toBe(local.replace('- localhost', '- replica'))
    expect(result.warnings).toEqual([])
  })
})
