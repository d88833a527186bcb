import { fileText, textFile } from '../package/files.js'
import type { PackageFiles } from '../package/files.js'
import { updatePackage } from './update.js'
import type { UpdateInput } from './update.js'

const files = (tree: Record<string, string>): PackageFiles =>
  new Map(Object.entries(tree).map(([path, text]) => [path, textFile(text)]))
const texts = (pkg: PackageFiles) => Object.fromEntries([...pkg].map(([path, file]) => [path, fileText(file)]))

const upstream = { repo: 'file:///repos/blueprints', directory: '/nginx', ref: 'nginx/v2' }
const input = (
  local: Record<string, string>,
  origin: Record<string, string>,
  updated: Record<string, string>,
): UpdateInput => ({
  local: files(local),
  origin: files(origin),
  updated: files(updated),
  onConflict: 'upstream',
  upstream,
  upstreamLock: { ...upstream, commit: 'c2' },
})

const kptfile = (mutators: string, extra = '') =>
  `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: nginx\n${extra}pipeline:\n  mutators:\n${mutators}`

describe('updatePackage', () => {
  it('keys unnamed functions by image without tag, and sets upstream and upstreamLock', () => {
    const origin = kptfile('    - image: set-labels:v0.1\n      configMap:\n        a: "1"\n')
    const local = kptfile(
      '    - image: set-labels:v0.1\n      configMap:\n        a: "1"\n    - image: local-fn:v1\n',
      'upstream:\n  type: git\n',
    )
    const updated = kptfile('    - image: set-labels:v0.2\n      configMap:\n        a: "2"\n    - image: up-fn:v1\n')
    const result = updatePackage(input({ Kptfile: local }, { Kptfile: origin }, { Kptfile: updated }))
    expect(result.ok).toBe(true)
    expect(texts(result.files).Kptfile).toBe(
      `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: nginx
upstream:
  type: git
  git:
    repo: file:///repos/blueprints
    directory: /nginx
    ref: nginx/v2
  updateStrategy: resource-merge
upstreamLock:
  type: git
  git:
    repo: file:///repos/blueprints
    directory: /nginx
    ref: nginx/v2
    commit: c2
pipeline:
  mutators:
    - image: set-labels:v0.2
      configMap:
        a: "2"
    - image: local-fn:v1
    - image: up-fn:v1
`,
    )
  })

  it('syncs files that are not resources: a downstream edit wins, else upstream', () => {
    const result = updatePackage(
      input(
        { 'README.md': 'local\n', 'NOTES.txt': 'n1\n', 'gone.txt': 'g\n', 'mine.txt': 'm\n' },
        { 'README.md': 'r1\n', 'NOTES.txt': 'n1\n', 'gone.txt': 'g\n', 'back.txt': 'b\n' },
        { 'README.md': 'r2\n', 'NOTES.txt': 'n2\n', 'back.txt': 'b\n', 'new.txt': 'new\n' },
      ),
    )
    expect(texts(result.files)).toEqual({
      'NOTES.txt': 'n2\n',
      'README.md': 'local\n',
      'back.txt': 'b\n',
      'mine.txt': 'm\n',
      'new.txt': 'new\n',
    })
  })

  it('marks every resource with its upstream identity, the package context included', () => {
    const context =
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\n  annotations:\n    config.kubernetes.io/local-config: "true"\ndata:\n  name: edge-01\n'
    const result = updatePackage(input({ 'package-context.yaml': context }, {}, {}))
    expect(texts(result.files)['package-context.yaml']).toBe(
      'apiVersion: v1\nkind: ConfigMap\nmetadata: # kpt-merge: /kptfile.kpt.dev\n  name: kptfile.kpt.dev\n  annotations:\n    config.kubernetes.io/local-config: "true"\n    internal.kpt.dev/upstream-identifier: \'|ConfigMap|default|kptfile.kpt.dev\'\ndata:\n  name: edge-01\n',
    )
  })

  it("fails without changing anything on a conflict under onConflict 'fail'", () => {
    const cm = (v: string) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata: # kpt-merge: /c\n  name: c\n  annotations:\n    internal.kpt.dev/upstream-identifier: '|ConfigMap|default|c'\ndata:\n  k: ${v}\n`
    const result = updatePackage({
      ...input({ 'c.yaml': cm('local') }, { 'c.yaml': cm('v1') }, { 'c.yaml': cm('v2') }),
      onConflict: 'fail',
    })
    expect(result.ok).toBe(false)
    expect(result.conflicts).toEqual([
      {
        file: 'c.yaml',
        resource: 'ConfigMap c',
        field: 'data.k',
        origin: 'v1',
        local: 'local',
        upstream: 'v2',
        resolution: 'fail',
      },
    ])
    expect(texts(result.files)).toEqual({ 'c.yaml': cm('local') })
  })

  it('passes on the warning of a resource written without its comments, which printed with them would not parse', () => {
    const cm = (hosts: string) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata: # kpt-merge: /c\n  name: c\n  annotations:\n    internal.kpt.dev/upstream-identifier: '|ConfigMap|default|c'\ndata:\n  hosts:${hosts}\n`
    const result = updatePackage(
      input({ 'db/c.yaml': cm(' # ours\n  - a') }, { 'db/c.yaml': cm('\n  - a') }, { 'db/c.yaml': cm(' []') }),
    )
    expect(result.ok).toBe(true)
    expect(texts(result.files)['db/c.yaml']).toBe(cm(' []'))
    expect(result.warnings).toEqual([
      'comments dropped from db/c.yaml (ConfigMap/c): printed with them, the output would not parse as YAML',
    ])
  })

  it('names the file of a YAML error', () => {
    const result = updatePackage(input({ 'c.yaml': 'a: [\n' }, { 'c.yaml': 'a: 1\n' }, { 'c.yaml': 'a: 2\n' }))
    expect(result.ok).toBe(false)
    expect(result.errors[0]).toMatch(/^c\.yaml:/)
  })
})
