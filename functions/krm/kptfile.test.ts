import { describeUnmetGates, findKptfile, Kptfile, unmetReadinessGates } from './kptfile.js'
import { KubeObject } from './kube-object.js'
import { ResourceList } from './resource-list.js'
import { source } from '../../test/support/source.js'

function items(yaml: string) {
  const body = yaml
    .split('\n')
    .map((l) => (l ? `  ${l}` : l))
    .join('\n')
  return ResourceList.parse(`apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n${body}`).items
}

function kptfile(yaml: string): Kptfile {
  const found = findKptfile(items(`- ${yaml.trim().replace(/\n/g, '\n  ')}`))
  if (!found.ok) throw new Error(found.message)
  return found.kptfile
}

describe('findKptfile', () => {
  test.each([
    [
      'the root Kptfile under render (subpackage Kptfiles share the path)',
      source`
        - apiVersion: kpt.dev/v1
          kind: Kptfile
          metadata:
            name: sub
            annotations: {internal.config.kubernetes.io/path: Kptfile, internal.config.kubernetes.io/package-path: /p/sub}
        - apiVersion: kpt.dev/v1
          kind: Kptfile
          metadata:
            name: root
            annotations: {internal.config.kubernetes.io/path: Kptfile, internal.config.kubernetes.io/package-path: /p}
      `,
      'root',
    ],
    [
      'the Kptfile at path Kptfile under eval',
      source`
        - apiVersion: kpt.dev/v1
          kind: Kptfile
          metadata: {name: sub, annotations: {internal.config.kubernetes.io/path: sub/Kptfile}}
        - apiVersion: kpt.dev/v1
          kind: Kptfile
          metadata: {name: root, annotations: {internal.config.kubernetes.io/path: Kptfile}}
      `,
      'root',
    ],
    [
      'the only Kptfile when nothing has a path',
      source`
        - apiVersion: kpt.dev/v1
          kind: Kptfile
          metadata: {name: lone}
      `,
      'lone',
    ],
  ])('finds %s', (_, input, name) => {
    const found = findKptfile(items(input))
    expect(found.ok && found.kptfile.object.name).toBe(name)
  })

  test.each([
    [
      'no Kptfile',
      source`
      - apiVersion: v1
        kind: ConfigMap
        metadata: {name: x, annotations: {internal.config.kubernetes.io/path: cm.yaml}}
    `,
      { message: '"Kptfile" not found in the package' },
    ],
    [
      'a Kptfile of another kind',
      source`
      - apiVersion: v1
        kind: ConfigMap
        metadata: {name: x, annotations: {internal.config.kubernetes.io/path: Kptfile}}
    `,
      {
        message: '"Kptfile" does not contain kind "Kptfile" of apiVersion kpt.dev/v1 (found ConfigMap)',
        field: 'kind',
      },
    ],
    [
      'a pipeline that is not a map',
      source`
      - apiVersion: kpt.dev/v1
        kind: Kptfile
        metadata: {name: x, annotations: {internal.config.kubernetes.io/path: Kptfile}}
        pipeline: [a]
    `,
      { message: 'malformed Kptfile: `pipeline` must be a map', field: 'pipeline' },
    ],
    [
      'mutators that are not a list',
      source`
      - apiVersion: kpt.dev/v1
        kind: Kptfile
        metadata: {name: x, annotations: {internal.config.kubernetes.io/path: Kptfile}}
        pipeline: {mutators: {image: x}}
    `,
      { message: 'malformed Kptfile: `pipeline.mutators` must be a list', field: 'pipeline.mutators' },
    ],
    [
      'a function name that is not a string',
      source`
      - apiVersion: kpt.dev/v1
        kind: Kptfile
        metadata: {name: x, annotations: {internal.config.kubernetes.io/path: Kptfile}}
        pipeline: {validators: [{image: x, name: [a]}]}
    `,
      {
        message: 'malformed Kptfile: `pipeline.validators[0].name` must be a string',
        field: 'pipeline.validators[0].name',
      },
    ],
    [
      'conditions that are not a list',
      source`
      - apiVersion: kpt.dev/v1
        kind: Kptfile
        metadata: {name: x, annotations: {internal.config.kubernetes.io/path: Kptfile}}
        status: {conditions: yes}
    `,
      { message: 'malformed Kptfile: `status.conditions` must be a list', field: 'status.conditions' },
    ],
    [
      'a readiness gate that is not a map',
      source`
      - apiVersion: kpt.dev/v1
        kind: Kptfile
        metadata: {name: x, annotations: {internal.config.kubernetes.io/path: Kptfile}}
        info: {readinessGates: [x]}
    `,
      { message: 'malformed Kptfile: `info.readinessGates[0]` must be a map', field: 'info.readinessGates[0]' },
    ],
  ])('reports %s', (_, input, want) => {
    expect(findKptfile(items(input))).toMatchObject({ ok: false, ...want })
  })
})

describe('Kptfile pipeline lists', () => {
  const base = source`
    apiVersion: kpt.dev/v1
    kind: Kptfile
    metadata:
      name: pkg
    pipeline:
      mutators:
      # first
      - image: a # keep me
      - image: b
      validators:
      - image: v
  `

  test('reorders entries; a comment above the list stays in front, where kpt puts it back', () => {
    const k = kptfile(base)
    const [a, b] = k.functions('mutators')
    k.setFunctions('mutators', [b!, a!])
    expect(k.object.toYaml()).toBe(source`
      apiVersion: kpt.dev/v1
      kind: Kptfile
      metadata:
        name: pkg
      pipeline:
        mutators:
        # first
        - image: b
        - image: a # keep me
        validators:
        - image: v
    `)
  })

  test('removes an emptied list, then the pipeline once both are gone', () => {
    const k = kptfile(base)
    k.setFunctions('validators', [])
    expect(k.object.has(['pipeline', 'validators'])).toBe(false)
    expect(k.functions('mutators')).toHaveLength(2)
    k.setFunctions('mutators', [])
    expect(k.object.has(['pipeline'])).toBe(false)
  })

  test('creates the pipeline at the end when there is none', () => {
    const k = kptfile('apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n')
    const [fn] = kptfile(base).functions('validators')
    k.setFunctions('validators', [fn!])
    expect(k.object.toYaml()).toBe(
      'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\npipeline:\n  validators:\n  - image: v\n',
    )
  })
})

describe('Kptfile conditions and readiness gates', () => {
  test('upserts conditions sorted by type, keeping unknown keys of existing ones', () => {
    const k = kptfile(source`
      apiVersion: kpt.dev/v1
      kind: Kptfile
      metadata:
        name: pkg
      status:
        conditions:
        - type: z
          status: "True"
        - type: c # mine
          status: "False"
          reason: Old
          message: old
          extra: kept
    `)
    k.setConditions([
      { type: 'c', status: 'True', reason: 'ConfigInjected' },
      { type: 'a', status: 'False', reason: 'NoResourceSelected', message: 'none' },
    ])
    expect(k.object.toYaml()).toBe(source`
      apiVersion: kpt.dev/v1
      kind: Kptfile
      metadata:
        name: pkg
      status:
        conditions:
        - type: a
          status: "False"
          reason: NoResourceSelected
          message: none
        - type: c # mine
          status: "True"
          reason: ConfigInjected
          extra: kept
        - type: z
          status: "True"
    `)
    expect(k.conditions().map((c) => c.type)).toEqual(['a', 'c', 'z'])
  })

  test.each([
    ['adds, de-duplicates and sorts', ['b', 'a'], ['c', 'a', 'c'], ['a', 'b', 'c']],
    ['sorts existing gates even when none is added', ['b', 'a'], [], ['a', 'b']],
    ['writes nothing when there are no gates', [], [], []],
  ])('%s', (_, existing, added, want) => {
    const gates =
      existing.length > 0
        ? `info:\n  readinessGates:\n${existing.map((t) => `  - conditionType: ${t}\n`).join('')}`
        : ''
    const k = kptfile(`apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n${gates}`)
    k.addReadinessGates(added)
    expect(k.readinessGates()).toEqual(want)
    expect(k.object.has(['info'])).toBe(want.length > 0)
  })
})

describe('unmetReadinessGates', () => {
  test("as Porch's PackageRevisionIsReady: a gate needs a True condition of its type; none reads as Unknown", () => {
    const conditions = [
      { type: 'a', status: 'True' },
      { type: 'b', status: 'False', reason: 'NoResourceSelected', message: 'no resource matched' },
      { type: 'c', status: 'Unknown' },
    ]
    expect(unmetReadinessGates(['a', 'b', 'c', 'd', 'b'], conditions)).toEqual([
      { conditionType: 'b', status: 'False', reason: 'NoResourceSelected', message: 'no resource matched' },
      { conditionType: 'c', status: 'Unknown' },
      { conditionType: 'd', status: 'Unknown', message: 'no condition of this type in status.conditions' },
    ])
    expect(unmetReadinessGates([], conditions)).toEqual([])
    expect(describeUnmetGates(unmetReadinessGates(['b', 'c'], conditions))).toBe(
      'b False: no resource matched; c Unknown',
    )
  })

  test('the Kptfile model reads its own gates and conditions', () => {
    const kptfile = new Kptfile(
      KubeObject.fromObject({
        apiVersion: 'kpt.dev/v1',
        kind: 'Kptfile',
        metadata: { name: 'p' },
        info: { readinessGates: [{ conditionType: 'x' }, { conditionType: 'y' }] },
        status: {
          conditions: [
            { type: 'x', status: 'True' },
            { type: 'y', status: 'False' },
          ],
        },
      }),
    )
    expect(kptfile.unmetReadinessGates()).toEqual([{ conditionType: 'y', status: 'False' }])
  })
})
