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

/** A Kptfile with an upstream record of `strategy` (none: no `updateStrategy`), and an optional mutator. */
const kptfile = (name: string, strategy: string | undefined, mutator = '', ref = 'nginx/v1') =>
  `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: ${name}\nupstream:\n  type: git\n  git:\n    repo: file:///repos/blueprints\n    directory: /nginx\n    ref: ${ref}\n${strategy ? `  updateStrategy: ${strategy}\n` : ''}${
    mutator ? `pipeline:\n  mutators:\n  - image: ${mutator}\n` : ''
  }`
const blueprintKptfile = (mutator = '') =>
  `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: nginx\n${mutator ? `pipeline:\n  mutators:\n  - image: ${mutator}\n` : ''}`
/** A resource as kpt writes it downstream (merge comment and identifier), or bare as upstream has it. */
const cm = (name: string, value: string, marked = true) =>
  marked
    ? `apiVersion: v1\nkind: ConfigMap\nmetadata: # kpt-merge: /${name}\n  name: ${name}\n  annotations:\n    internal.kpt.dev/upstream-identifier: '|ConfigMap|default|${name}'\ndata:\n  k: ${value}\n`
    : `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  k: ${value}\n`
const lock =
  'upstreamLock:\n  type: git\n  git:\n    repo: file:///repos/blueprints\n    directory: /nginx\n    ref: nginx/v2\n    commit: c2\n'

const origin = {
  Kptfile: blueprintKptfile('set-labels:v1'),
  'a.yaml': cm('a', 'v1', false),
  'gone.yaml': cm('gone', 'v1', false),
  'README.md': 'v1\n',
}
const updated = {
  Kptfile: blueprintKptfile('set-labels:v2'),
  'a.yaml': cm('a', 'v2', false),
  'new.yaml': cm('new', 'v2', false),
  'README.md': 'v2\n',
}
/** The downstream as `kpt pkg get` left it, with `strategy`, before any local edit. */
const pristine = (strategy: string | undefined) => ({
  Kptfile: kptfile('edge', strategy, 'set-labels:v1'),
  'a.yaml': cm('a', 'v1'),
  'gone.yaml': cm('gone', 'v1'),
  'README.md': 'v1\n',
})

describe('update strategies (upstream.updateStrategy of the downstream Kptfile)', () => {
  test('no strategy is resource-merge, and the downstream strategy is kept, never reset to resource-merge', () => {
    const merged = updatePackage(input({ ...pristine(undefined), 'a.yaml': cm('a', 'local') }, origin, updated))
    expect(merged.ok).toBe(true)
    expect(texts(merged.files)['a.yaml']).toBe(cm('a', 'v2'))
    expect(texts(merged.files).Kptfile).toContain('  updateStrategy: resource-merge\n')
    const copied = updatePackage(input(pristine('copy-merge'), origin, updated))
    expect(texts(copied.files).Kptfile).toContain('  updateStrategy: copy-merge\n')
  })

  describe('fast-forward', () => {
    test('refuses a package with local changes, in kpt words, and changes nothing', () => {
      const local = { ...pristine('fast-forward'), 'a.yaml': cm('a', 'local'), 'mine.yaml': cm('mine', 'x') }
      const result = updatePackage(input(local, origin, updated))
      expect(result.ok).toBe(false)
      expect(result.errors).toEqual([
        'local package files have been modified: [a.yaml mine.yaml].\n  use a different update --strategy.',
      ])
      expect(texts(result.files)).toEqual(local)
    })

    test.each([
      ['a file deleted downstream', (l: Record<string, string>) => delete l['README.md'], ['README.md']],
      [
        'a function added to the Kptfile',
        (l: Record<string, string>) =>
          (l.Kptfile = kptfile('edge', 'fast-forward', 'set-labels:v1').replace(
            'pipeline:',
            'info:\n  description: mine\npipeline:',
          )),
        ['Kptfile'],
      ],
      [
        'a comment',
        (l: Record<string, string>) => (l['a.yaml'] = l['a.yaml']!.replace('  k: v1', '  k: v1 # mine')),
        ['a.yaml'],
      ],
      [
        'a package context edited by hand',
        (l: Record<string, string>) =>
          (l['package-context.yaml'] =
            'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\ndata:\n  name: edge\n  region: eu\n'),
        ['package-context.yaml'],
      ],
    ])('counts %s as a local change', (_name, edit, changed) => {
      const local = pristine('fast-forward')
      edit(local)
      expect(updatePackage(input(local, origin, updated)).errors).toEqual([
        `local package files have been modified: [${changed.join(' ')}].\n  use a different update --strategy.`,
      ])
    })

    test('takes upstream when only what kpt itself wrote differs: upstream records, the name, merge comments, layout, the generated package context', () => {
      const context = `apiVersion: v1\nkind: ConfigMap\nmetadata: # kpt-merge: /kptfile.kpt.dev\n  name: kptfile.kpt.dev\n  annotations:\n    config.kubernetes.io/local-config: "true"\n    internal.kpt.dev/upstream-identifier: '|ConfigMap|default|kptfile.kpt.dev'\ndata:\n  name: edge\n`
      const local = {
        ...pristine('fast-forward'),
        'a.yaml': cm('a', 'v1').replace('  k: v1', '  k:    v1'),
        'package-context.yaml': context,
      }
      const result = updatePackage(input(local, origin, updated))
      expect(result.errors).toEqual([])
      expect(result.ok).toBe(true)
      expect(texts(result.files)).toEqual({
        // The downstream's Kptfile, with the new upstream records (kpt's ReplaceUpdater keeps the root Kptfile).
        Kptfile: `${kptfile('edge', 'fast-forward', 'set-labels:v1', 'nginx/v2').replace('pipeline:', `${lock}pipeline:`)}`,
        'README.md': 'v2\n',
        'a.yaml': cm('a', 'v2'),
        'new.yaml': cm('new', 'v2'),
        // Upstream has no package context: a fresh one, as a clone has it (kpt deletes it).
        'package-context.yaml': context,
      })
    })
  })

  test('force-delete-replace drops every local change but the root Kptfile', () => {
    const local = {
      ...pristine('force-delete-replace'),
      'a.yaml': cm('a', 'local'),
      'mine.yaml': cm('mine', 'x'),
      'README.md': 'mine\n',
    }
    const result = updatePackage(input(local, origin, updated))
    expect(result.ok).toBe(true)
    expect(texts(result.files)).toEqual({
      Kptfile: `${kptfile('edge', 'force-delete-replace', 'set-labels:v1', 'nginx/v2').replace('pipeline:', `${lock}pipeline:`)}`,
      'README.md': 'v2\n',
      'a.yaml': cm('a', 'v2'),
      'new.yaml': cm('new', 'v2'),
    })
  })

  test('copy-merge merges the Kptfile, takes every upstream file, deletes what upstream deleted, keeps the downstream own files', () => {
    const local = {
      ...pristine('copy-merge'),
      'a.yaml': cm('a', 'local'),
      'gone.yaml': cm('gone', 'local'),
      'mine.yaml': cm('mine', 'x'),
      'README.md': 'mine\n',
    }
    const result = updatePackage(input(local, origin, updated))
    expect(result.ok).toBe(true)
    expect(result.conflicts).toEqual([])
    const out = texts(result.files)
    expect(Object.keys(out)).toEqual(['Kptfile', 'README.md', 'a.yaml', 'mine.yaml', 'new.yaml'])
    expect(out).toMatchObject({
      'README.md': 'v2\n',
      'a.yaml': cm('a', 'v2'),
      'mine.yaml': cm('mine', 'x'),
      'new.yaml': cm('new', 'v2'),
    })
    // The Kptfile merges as in resource-merge: upstream's new function tag, the downstream's strategy.
    expect(out.Kptfile).toContain('image: set-labels:v2')
    expect(out.Kptfile).toContain('updateStrategy: copy-merge')
  })

  test('each remote subpackage follows its own Kptfile', () => {
    const sub = (strategy: string) =>
      `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: db\nupstream:\n  type: git\n  git:\n    repo: file:///repos/db\n    directory: /db\n    ref: v1\n  updateStrategy: ${strategy}\n`
    const base = { ...pristine('resource-merge'), 'db/Kptfile': sub('fast-forward'), 'db/s.yaml': cm('s', 'v1') }
    const o = { ...origin, 'db/Kptfile': sub('fast-forward'), 'db/s.yaml': cm('s', 'v1', false) }
    const u = {
      ...updated,
      'db/Kptfile': sub('fast-forward').replace('ref: v1', 'ref: v2'),
      'db/s.yaml': cm('s', 'v2', false),
    }
    // The root merges its own local edit; the subpackage, unchanged, fast-forwards.
    const ok = updatePackage(input({ ...base, 'a.yaml': cm('a', 'local') }, o, u))
    expect(ok.ok).toBe(true)
    expect(texts(ok.files)).toMatchObject({ 'a.yaml': cm('a', 'v2'), 'db/s.yaml': cm('s', 'v2') })
    // A local edit in the subpackage refuses its fast-forward, named by its directory.
    const refused = updatePackage(input({ ...base, 'db/s.yaml': cm('s', 'local') }, o, u))
    expect(refused.errors).toEqual([
      'db: local package files have been modified: [db/s.yaml].\n  use a different update --strategy.',
    ])
  })

  test('an unknown strategy is an error in kpt words', () => {
    expect(updatePackage(input(pristine('rebase'), origin, updated))).toMatchObject({
      ok: false,
      errors: ['.: unrecognized update strategy rebase'],
    })
  })
})
