/** fan-out under `kpt fn render`: package paths, subpackages, and which file is the set's. */
import { parseValue, printValue } from '../krm/yaml/index.js'
import { runFunction } from '../krm/index.js'
import { source } from '../../test/support/source.js'
import { fanOutFunction } from './index.js'
import { fleet, indent, pvsWith, repo, run, upstream, variants } from './fan-out.fixtures.js'

describe('fan-out', () => {
  describe('kpt fn render of a fleet with a subpackage (items carry package-path; paths are per package)', () => {
    type Obj = Record<string, any>
    const at = (packagePath: string, path: string, text: string, index = 0): Obj => {
      const o = parseValue(text) as Obj
      o['metadata']['annotations'] = {
        ...o['metadata']['annotations'],
        'internal.config.kubernetes.io/package-path': packagePath,
        'internal.config.kubernetes.io/path': path,
        'internal.config.kubernetes.io/index': String(index),
      }
      return o
    }
    const member = (name: string, repoName: string, revision: number) => source`
      apiVersion: config.porch.kpt.dev/v1alpha1
      kind: PackageVariant
      metadata:
        name: ${name}
        namespace: default
        labels: {config.porch.kpt.dev/packagevariantset: nginx}
      spec:
        upstream: {repo: blueprints, package: nginx, revision: ${revision}}
        downstream: {repo: ${repoName}, package: nginx}
    `
    const configMap = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, namespace: default}\ndata: {a: b}\n'
    const targets = '- repositories: [{name: edge-c1}, {name: edge-c2}]\n'
    const bare = (text: string) => {
      const o = parseValue(text) as Obj
      delete o['metadata']['annotations']
      return printValue(o, { wide: true })
    }
    const rootSet = at('/fleet', 'sets/pvs.yaml', bare(pvsWith(targets)))
    /** Subpackage items first, as kpt passes them; the set as functionConfig with its own annotations (configPath). */
    const renderInput = (subpackageItems: Obj[], rootItems: Obj[] = []) =>
      printValue(
        {
          apiVersion: 'config.kubernetes.io/v1',
          kind: 'ResourceList',
          items: [
            ...subpackageItems,
            rootSet,
            ...[repo('blueprints'), repo('edge-c1'), repo('edge-c2'), upstream].map((r, i) =>
              at('/fleet', `fleet-${i}.yaml`, bare(r)),
            ),
            ...rootItems,
          ],
          // A copy: the same object twice would print as an anchor and its alias.
          functionConfig: structuredClone(rootSet),
        },
        { wide: true },
      )
    const annotations = (o: Obj) => o['metadata']['annotations'] as Record<string, string>

    test('members in the subpackage are updated in place or deleted; new PackageVariants go next to the root set', () => {
      const input = renderInput([
        at('/fleet/edge', 'sets/pvs.yaml', bare(pvsWith('- repositories: [{name: edge-zz}]\n'))),
        at('/fleet/edge', 'nginx-edge-c1-nginx.yaml', member('nginx-edge-c1-nginx', 'edge-c1', 0)),
        at('/fleet/edge', 'gone.yaml', member('nginx-gone-nginx', 'gone', 0)),
        at('/fleet/edge', 'sets/nginx-edge-c2-nginx.yaml', configMap),
      ])
      const { exitCode, items, results } = run(input)
      expect(exitCode).toBe(0)
      const pvs = variants(items)
      expect(
        pvs.map((p) => [
          p['metadata']['name'],
          annotations(p)['internal.config.kubernetes.io/package-path'],
          annotations(p)['internal.config.kubernetes.io/path'],
          annotations(p)['internal.config.kubernetes.io/index'],
        ]),
      ).toEqual([
        ['nginx-edge-c1-nginx', '/fleet/edge', 'nginx-edge-c1-nginx.yaml', '0'],
        // no package-path: kpt assigns the package whose pipeline runs; index 0, as the subpackage's file of that path is another file
        ['nginx-edge-c2-nginx', undefined, 'sets/nginx-edge-c2-nginx.yaml', '0'],
      ])
      expect(pvs[0]!['spec']['upstream']['revision']).toBe(1)
      expect(results.at(-1)!['message']).toBe(
        'PackageVariantSet "nginx": 2 PackageVariant(s): 1 created, 1 updated, 0 unchanged, 1 deleted',
      )
      const sets = items.filter((i) => i['kind'] === 'PackageVariantSet')
      expect(
        sets.map((s) => [
          annotations(s)['internal.config.kubernetes.io/package-path'],
          s['status']?.['conditions']?.[1]?.['reason'],
        ]),
      ).toEqual([
        ['/fleet/edge', undefined],
        ['/fleet', 'Reconciled'],
      ])
    })

    test('a second render changes nothing', () => {
      const first = runFunction(
        fanOutFunction,
        renderInput([at('/fleet/edge', 'nginx-edge-c1-nginx.yaml', member('nginx-edge-c1-nginx', 'edge-c1', 0))]),
      )
      const again = runFunction(fanOutFunction, first.output)
      const strip = (text: string) => text.replace(/\nresults:[\s\S]*$/, '')
      expect(strip(again.output)).toBe(strip(first.output))
      expect(again.output).toContain('0 created, 0 updated, 2 unchanged, 0 deleted')
    })

    test('a new PackageVariant appends to a root file of its name, not to a subpackage file of the same path', () => {
      const input = renderInput(
        [
          at('/fleet/edge', 'sets/nginx-edge-c1-nginx.yaml', configMap),
          at('/fleet/edge', 'sets/nginx-edge-c1-nginx.yaml', configMap.replace('other', 'other2'), 1),
        ],
        [at('/fleet', 'sets/nginx-edge-c2-nginx.yaml', configMap)],
      )
      const pvs = variants(run(input).items)
      expect(
        pvs.map((p) => [
          annotations(p)['internal.config.kubernetes.io/path'],
          annotations(p)['internal.config.kubernetes.io/index'],
        ]),
      ).toEqual([
        ['sets/nginx-edge-c1-nginx.yaml', '0'],
        ['sets/nginx-edge-c2-nginx.yaml', '1'],
      ])
    })
  })

  test("with several items of the set's name, the functionConfig's path picks the set's file", () => {
    const targets = '- repositories: [{name: edge-c1}]\n'
    const copy = pvsWith(targets).replace('path: sets/pvs.yaml', 'path: copy/pvs.yaml')
    const fc = pvsWith(targets)
    const all = [copy, fc, ...fleet].map((i) => `-${indent(i, 2).slice(1)}`).join('\n')
    const { items } = run(
      `apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n${all}\nfunctionConfig:\n${indent(fc, 2)}`,
    )
    expect(variants(items)[0]!['metadata']['annotations']['internal.config.kubernetes.io/path']).toBe(
      'sets/nginx-edge-c1-nginx.yaml',
    )
    const sets = items.filter((i) => i['kind'] === 'PackageVariantSet')
    expect(sets.map((s) => s['status'] === undefined)).toEqual([true, false])
  })
})
