/**
 * An update with a pool (files shared across variants, merges remembered by
 * their inputs' identity, marking remembered per file) gives every variant
 * exactly what an update without one gives: the same bytes, modes,
 * conflicts, warnings and errors, whatever the variants' local edits.
 */
import fc from 'fast-check'
import { ContentPool } from '../package/content-pool.js'
import { fileText, textFile } from '../package/files.js'
import type { PackageFiles } from '../package/files.js'
import { updatePackage } from './update.js'
import type { UpdateInput, UpdateResult } from './update.js'

const kptfile = (name: string, extra = '', description = 'app') =>
  `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: ${name}\n${extra}info:\n  description: ${description}\n`
const deployment = (name: string, image: string, replicas = 2, marked = true) =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata:${marked ? ` # kpt-merge: app/${name}` : ''}\n  name: ${name}\n  namespace: app\n${
    marked ? `  annotations:\n    internal.kpt.dev/upstream-identifier: 'apps|Deployment|app|${name}'\n` : ''
  }spec:\n  replicas: ${replicas} # per cluster\n  template:\n    spec:\n      containers:\n      - name: main\n        image: ${image}\n`
const service = (name: string, port: number, marked = true) =>
  `apiVersion: v1\nkind: Service\nmetadata:${marked ? ` # kpt-merge: app/${name}` : ''}\n  name: ${name}\n  namespace: app\n${
    marked ? `  annotations:\n    internal.kpt.dev/upstream-identifier: '|Service|app|${name}'\n` : ''
  }spec:\n  ports:\n  - port: ${port}\n`
const context = (cluster: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\n  annotations:\n    config.kubernetes.io/local-config: "true"\ndata:\n  name: app\n  cluster: ${cluster}\n`

const origin: Record<string, string> = {
  Kptfile: kptfile('app'),
  'a.yaml': deployment('a', 'a:1', 2, false),
  'b.yaml': service('b', 80, false),
  'c.yaml': deployment('c', 'c:1', 2, false),
  'README.md': 'app\n',
}
const updated: Record<string, string> = {
  Kptfile: kptfile('app', '', 'app, revision 2'),
  'a.yaml': deployment('a', 'a:2', 2, false),
  'b.yaml': service('b', 80, false),
  'd.yaml': service('d', 81, false),
  'README.md': 'app, revision 2\n',
}

/** What a variant did to its package since its last render. */
const edits = ['none', 'replicas', 'image', 'port', 'deleted', 'added', 'readme', 'executable'] as const
type Edit = (typeof edits)[number]

/** A variant's downstream as read from disk: fresh objects each time, as a read gives. */
function local(i: number, edit: Edit, replicas: number): PackageFiles {
  const name = `edge-${i}`
  const tree: [string, string, boolean?][] = [
    ['Kptfile', kptfile(name, 'upstream:\n  type: git\n')],
    ['a.yaml', deployment('a', edit === 'image' ? 'a:local' : 'a:1', edit === 'replicas' ? replicas : 2)],
    ['b.yaml', service('b', edit === 'port' ? 8080 : 80)],
    ['package-context.yaml', context(i % 2 === 0 ? 'even' : name)],
    ['README.md', edit === 'readme' ? 'ours\n' : 'app\n'],
  ]
  if (edit !== 'deleted') tree.push(['c.yaml', deployment('c', 'c:1'), edit === 'executable'])
  if (edit === 'added') tree.push(['extra.yaml', service('extra', 90, false)])
  return new Map(tree.map(([path, text, executable]) => [path, textFile(text, executable)]))
}

const git = (tree: Record<string, string>): PackageFiles =>
  new Map(Object.entries(tree).map(([path, text]) => [path, textFile(text)]))
const upstream = { repo: 'file:///repos/blueprints', directory: '/app', ref: 'app/v2' }
const policies = ['upstream', 'downstream', 'fail'] as const

function shape(result: UpdateResult) {
  return {
    ok: result.ok,
    files: [...result.files].map(([path, file]) => [path, fileText(file), Boolean(file.executable)]),
    conflicts: result.conflicts,
    errors: result.errors,
    warnings: result.warnings,
  }
}

describe('updatePackage with a pool', () => {
  it('gives every variant what an update without one gives', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ edit: fc.constantFrom(...edits), replicas: fc.integer({ min: 0, max: 5 }) }), {
          minLength: 1,
          maxLength: 8,
        }),
        fc.constantFrom(...policies),
        (variants, onConflict) => {
          const pool = new ContentPool()
          // The upstream revisions are read once a run: the same objects for every variant.
          const shared = { origin: git(origin), updated: git(updated) }
          variants.forEach(({ edit, replicas }, i) => {
            const input = (files: PackageFiles): UpdateInput => ({
              ...shared,
              local: files,
              onConflict,
              upstream,
              upstreamLock: { ...upstream, commit: 'c2' },
            })
            const plain = updatePackage(input(local(i, edit, replicas)))
            const pooled = updatePackage({ ...input(pool.files(local(i, edit, replicas))), pool })
            expect(shape(pooled)).toEqual(shape(plain))
          })
        },
      ),
    )
  })

  it('shares the merged files of unedited variants, and merges an edited one on its own', () => {
    const pool = new ContentPool()
    const shared = { origin: git(origin), updated: git(updated) }
    const run = (files: PackageFiles) =>
      updatePackage({
        ...shared,
        local: pool.files(files),
        onConflict: 'upstream',
        upstream,
        upstreamLock: { ...upstream, commit: 'c2' },
        pool,
      })
    const first = run(local(0, 'none', 2))
    const second = run(local(2, 'none', 2))
    const edited = run(local(4, 'replicas', 5))
    expect(second.files.get('a.yaml')).toBe(first.files.get('a.yaml'))
    expect(second.files.get('d.yaml')).toBe(first.files.get('d.yaml'))
    expect(edited.files.get('a.yaml')).not.toBe(first.files.get('a.yaml'))
    expect(fileText(edited.files.get('a.yaml')!)).toContain('replicas: 5')
    expect(first.ok && second.ok && edited.ok).toBe(true)
    expect(fileText(first.files.get('a.yaml')!)).toContain('image: a:2')
    expect(fileText(edited.files.get('a.yaml')!)).toContain('image: a:2')
  })
})
