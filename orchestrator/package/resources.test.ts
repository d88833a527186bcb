import { parse } from '../../functions/krm/yaml/index.js'
import { source } from '../../test/support/source.js'
import { fileText, textFile } from './files.js'
import type { PackageFiles } from './files.js'
import { ResourceCodec } from './resources.js'

const kptfile = source`
  apiVersion: kpt.dev/v1
  kind: Kptfile
  metadata:
    name: pkg
`
const deployment = source`
  # The web tier.
  apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: web # the name
  spec:
    template:
      spec:
        containers:
          - name: nginx
            image: nginx:1.25
`
const multi = source`
  apiVersion: v1
  kind: ConfigMap
  metadata:
    name: a
  data:
    k: v # keep
  ---
  apiVersion: v1
  kind: ConfigMap
  metadata:
    name: b
`

function pkg(entries: Record<string, string>): PackageFiles {
  return new Map(Object.entries(entries).map(([path, text]) => [path, textFile(text)]))
}

function texts(files: PackageFiles): Record<string, string> {
  return Object.fromEntries([...files].map(([path, file]) => [path, fileText(file)]))
}

describe('ResourceCodec', () => {
  const files = pkg({ Kptfile: kptfile, 'deploy.yaml': deployment, 'cms.yaml': multi, 'README.md': '# hi\n' })

  test('reads every KRM document as an item with kpt path and index annotations', () => {
    const resources = new ResourceCodec().read(files)
    expect(resources.items.map((i) => [i.kind, i.name, i.path, i.index])).toEqual([
      ['Kptfile', 'pkg', 'Kptfile', 0],
      ['ConfigMap', 'a', 'cms.yaml', 0],
      ['ConfigMap', 'b', 'cms.yaml', 1],
      ['Deployment', 'web', 'deploy.yaml', 0],
    ])
  })

  test('writes untouched items back as the very same files', () => {
    const codec = new ResourceCodec()
    const resources = codec.read(files)
    resources.items.forEach((item) => item.get(['spec'])) // parsed, not changed
    expect(texts(codec.write(resources, resources.items, files).files)).toEqual(texts(files))
  })

  test('rewrites only the changed document of a file, keeping comments and sequence indentation', () => {
    const codec = new ResourceCodec()
    const resources = codec.read(files)
    const [, a, , web] = resources.items
    a!.set(['data', 'k'], 'w')
    web!.setLabel('tier', 'front')
    const out = texts(codec.write(resources, resources.items, files).files)
    expect(out['cms.yaml']).toBe(multi.replace('k: v # keep', 'k: w # keep'))
    expect(out['deploy.yaml']).toBe(
      deployment.replace('  name: web # the name\n', '  name: web # the name\n  labels:\n    tier: front\n'),
    )
    expect(out['Kptfile']).toBe(kptfile)
  })

  test('drops removed items and writes new ones to the file their path names', () => {
    const codec = new ResourceCodec()
    const resources = codec.read(files)
    const items = resources.items.filter((i) => i.name !== 'a')
    items.push(KubeObjectFrom({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'new' } }, 'gen/new.yaml'))
    const out = texts(codec.write(resources, items, files).files)
    expect(out['cms.yaml']).toBe(multi.slice(multi.indexOf('---\n') + 4))
    expect(out['gen/new.yaml']).toBe('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: new\n')
  })

  test('gives subpackage items paths relative to their package and a package-path in render style', () => {
    const nested = pkg({ Kptfile: kptfile, 'sub/Kptfile': kptfile.replace('pkg', 'sub'), 'sub/cm.yaml': multi })
    const codec = new ResourceCodec()
    const resources = codec.read(nested, { style: 'render', root: '/fleet/pkg' })
    expect(resources.items.map((i) => [i.path, i.packagePath])).toEqual([
      ['Kptfile', '/fleet/pkg'],
      ['Kptfile', '/fleet/pkg/sub'],
      ['cm.yaml', '/fleet/pkg/sub'],
      ['cm.yaml', '/fleet/pkg/sub'],
    ])
    resources.items[2]!.setLabel('x', 'z')
    const out = texts(codec.write(resources, resources.items, nested).files)
    expect(Object.keys(out)).toEqual(['Kptfile', 'sub/Kptfile', 'sub/cm.yaml'])
    expect(out['sub/cm.yaml']).toContain('  labels:\n    x: z\n')
    expect(out['sub/cm.yaml']).not.toContain('internal.config.kubernetes.io')
  })

  test('reads one content shared by several files and packages as the items of each place', () => {
    // Clones of a blueprint share their files' content buffers; each read names the file it is at.
    const shared = textFile(multi)
    const clones: PackageFiles = new Map([
      ['Kptfile', textFile(kptfile)],
      ['a.yaml', shared],
      ['sub/Kptfile', textFile(kptfile.replace('pkg', 'sub'))],
      ['sub/b.yaml', shared],
    ])
    const codec = new ResourceCodec()
    for (let round = 0; round < 2; round++) {
      for (const root of ['/fleet/one', '/fleet/two']) {
        const resources = codec.read(clones, { style: 'render', root })
        expect(resources.items.map((i) => [i.name, i.path, i.index, i.packagePath])).toEqual([
          ['pkg', 'Kptfile', 0, root],
          ['a', 'a.yaml', 0, root],
          ['b', 'a.yaml', 1, root],
          ['sub', 'Kptfile', 0, `${root}/sub`],
          ['a', 'b.yaml', 0, `${root}/sub`],
          ['b', 'b.yaml', 1, `${root}/sub`],
        ])
        expect(texts(codec.write(resources, resources.items, clones).files)).toEqual(texts(clones))
      }
    }
  })

  test('puts items that come back in another order into their own documents', () => {
    const codec = new ResourceCodec()
    const resources = codec.read(files)
    const [kpt, a, b, web] = resources.items
    b!.set(['data'], { k: 'b' })
    expect(texts(codec.write(resources, [web!, b!, a!, kpt!], files).files)).toEqual({
      ...texts(files),
      'cms.yaml': `${multi}data:\n  k: b\n`,
    })
  })

  test('never drops a document that is not a KRM object: its file stays, and its slot survives edits and removals around it', () => {
    const withValues = pkg({
      Kptfile: kptfile,
      'values.yaml': 'foo: bar\n',
      'mixed.yaml': `${multi}---\nfoo: bar # not KRM\n`,
    })
    const codec = new ResourceCodec()
    const resources = codec.read(withValues)
    expect(resources.notKrm.map((n) => n.path)).toEqual(['mixed.yaml', 'values.yaml'])
    expect(texts(codec.write(resources, resources.items, withValues).files)).toEqual(texts(withValues))

    const edited = codec.read(withValues)
    const [kpt, a, b] = edited.items
    a!.set(['data', 'k'], 'w')
    expect(texts(codec.write(edited, [kpt!, a!], withValues).files)).toEqual({
      ...texts(withValues),
      'mixed.yaml': `${multi.slice(0, multi.indexOf('---\n')).replace('k: v', 'k: w')}---\nfoo: bar # not KRM\n`,
    })
    expect(b!.name).toBe('b')

    const emptied = codec.read(withValues)
    expect(texts(codec.write(emptied, [emptied.items[0]!], withValues).files)).toEqual({
      ...texts(withValues),
      'mixed.yaml': 'foo: bar # not KRM\n',
    })
  })

  describe('a changed item that would not parse with its comments', () => {
    // The yaml library prints a commented key whose value becomes an empty list as `hosts: # ...` with `[]` on the
    // next line at the key's indentation, which does not parse (functions/krm/yaml/read-back.ts).
    const database = source`
      # Bound per cluster.
      apiVersion: db.example.com/v1
      kind: DatabaseBinding
      metadata: # kpt-merge: shop/orders
        name: orders
        namespace: shop
      spec:
        hosts: # the primary first
        - localhost
        port: 5432 # the default
      ---
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: settings
      data:
        mode: fast # an unrelated comment
    `
    const withDatabase = pkg({ Kptfile: kptfile, 'db/database.yaml': database })

    test('is written without its comments, but kpt-merge, with a warning naming file and object', () => {
      const codec = new ResourceCodec()
      const resources = codec.read(withDatabase)
      const [, orders, settings] = resources.items
      orders!.set(['spec', 'hosts'], [])
      settings!.set(['data', 'mode'], 'slow')
      const written = codec.write(resources, resources.items, withDatabase)
      const text = texts(written.files)['db/database.yaml']!
      for (const doc of text.split('---\n')) expect(() => parse(doc)).not.toThrow()
      expect(text).toBe(source`
        apiVersion: db.example.com/v1
        kind: DatabaseBinding
        metadata: # kpt-merge: shop/orders
          name: orders
          namespace: shop
        spec:
          hosts: []
          port: 5432
        ---
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: settings
        data:
          mode: slow # an unrelated comment
      `)
      expect(written.warnings).toEqual([
        'comments dropped from db/database.yaml (DatabaseBinding/shop/orders): printed with them, the output would not parse as YAML',
      ])
    })

    test('an item that reads back keeps its comments, and no warning is given', () => {
      const codec = new ResourceCodec()
      const resources = codec.read(withDatabase)
      resources.items[1]!.set(['spec', 'hosts'], ['replica'])
      const written = codec.write(resources, resources.items, withDatabase)
      expect(texts(written.files)['db/database.yaml']).toBe(database.replace('- localhost', '- replica'))
      expect(written.warnings).toEqual([])
    })
  })

  test('skips files the package .krmignore lists and reports documents that are not KRM', () => {
    const withIgnore = pkg({
      Kptfile: kptfile,
      '.krmignore': 'cluster/\n',
      'cluster/cm.yaml': multi,
      'values.yaml': 'foo: bar\n',
    })
    const resources = new ResourceCodec().read(withIgnore)
    expect(resources.items.map((i) => i.path)).toEqual(['Kptfile'])
    expect(resources.notKrm).toEqual([{ path: 'values.yaml', message: 'values.yaml: resource must have `apiVersion`' }])
  })
})

import { KubeObject } from '../../functions/krm/index.js'
function KubeObjectFrom(value: Record<string, unknown>, path: string): KubeObject {
  return KubeObject.fromObject(value, { path })
}
