import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseObjects } from '../../functions/krm/index.js'
import { source } from '../../test/support/source.js'
import { loadFleetDirectory } from './load.js'

let dir: string
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'kpt-variants-load-'))))
afterEach(() => rmSync(dir, { recursive: true, force: true }))

const clusters = source`
  # The edge clusters.
  apiVersion: infra.nephio.org/v1alpha1
  kind: WorkloadCluster
  metadata:
    name: edge-01
    namespace: default
    labels: {region: us-east1, "site type": edge}
  spec:
    clusterName: edge-01
    notes: |
      multi-line
        indented text

      kept as written
  ---
  ---
  # only a comment
  ---
  apiVersion: v1
  kind: ConfigMap
  metadata: {name: us-east1-endpoints, namespace: default, annotations: {a: "quoted: value"}}
  data:
    API: 'https://api.us-east1.example.com'
    folded: >-
      one
      two
`

describe('loadFleetDirectory', () => {
  test('each document is an object with its file and document index, reading exactly as a full parse does', () => {
    writeFileSync(join(dir, 'clusters.yaml'), clusters)
    const loaded = loadFleetDirectory(dir)
    expect(loaded.problems).toEqual([])
    const parsed = parseObjects(clusters, 'clusters.yaml')
    expect(loaded.objects.map((o) => [o.kind, o.name, o.namespace, o.labels(), o.annotations(), o.origin])).toEqual(
      parsed.map((o) => [o.kind, o.name, o.namespace, o.labels(), o.annotations(), o.origin]),
    )
    expect(loaded.objects.map((o) => o.toJS())).toEqual(parsed.map((o) => o.toJS()))
  })

  test('a document that is not YAML, not a map, or a List: the file is read as before (a problem naming it, or its items)', () => {
    writeFileSync(join(dir, 'a-broken.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [unclosed\n')
    writeFileSync(join(dir, 'b-scalar.yaml'), 'just text\n')
    writeFileSync(
      join(dir, 'c-list.yaml'),
      'apiVersion: v1\nkind: ConfigMapList\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: one}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: two}}\n',
    )
    writeFileSync(
      join(dir, 'd-repo.yaml'),
      'apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata: {name: r}\nspec: {git: {repo: "unclosed}\n',
    )
    const loaded = loadFleetDirectory(dir)
    expect(loaded.problems.map((p) => p.file)).toEqual(['a-broken.yaml', 'b-scalar.yaml', 'd-repo.yaml'])
    expect(loaded.problems[1]!.message).toBe('document 0 is not a Kubernetes object')
    expect(loaded.objects.map((o) => o.name)).toEqual(['one', 'two'])
  })

  test('the digest changes with any byte of any file', () => {
    writeFileSync(join(dir, 'clusters.yaml'), clusters)
    const before = loadFleetDirectory(dir).digest
    writeFileSync(join(dir, 'clusters.yaml'), clusters.replace('name: edge-01', 'name: edge-02'))
    expect(loadFleetDirectory(dir).digest).not.toBe(before)
  })
})
