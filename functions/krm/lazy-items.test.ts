import { KubeObject } from './kube-object.js'
import { splitItems, topLevelFieldText } from './yaml/lazy-items.js'
import { ResourceList } from './resource-list.js'
import { setFastPathsOff } from './fast-paths.js'

// This suite tests the fast path itself: on, whatever KPT_VARIANTS_NO_FAST_PATHS says (the oracle run).
beforeAll(() => setFastPathsOff([]))

const chunk = `- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: a
  data:
    k: v
    list:
    - x

  rules:
  - apiGroups: [""]
`

describe('topLevelFieldText', () => {
  test.each([
    ['a nested map, trailing blank line excluded', 'data', '  data:\n    k: v\n    list:\n    - x\n'],
    ['a compact sequence under a top-level key', 'rules', '  rules:\n  - apiGroups: [""]\n'],
    ['the first key, written after the dash', 'apiVersion', '  apiVersion: v1\n'],
    ['a missing key', 'spec', undefined],
  ])('%s', (_name, key, want) => {
    expect(topLevelFieldText(chunk, key)).toBe(want)
  })
})

describe('splitItems', () => {
  test.each([
    ['wide sequence indentation', 'kind: ResourceList\nitems:\n  - kind: A\n'],
    ['a comment before the first item', 'kind: ResourceList\nitems:\n# c\n- kind: A\n'],
    ['a scalar item', 'kind: ResourceList\nitems:\n- a\n'],
    ['a document marker', 'kind: ResourceList\nitems:\n- kind: A\n---\n'],
    ['flow items', 'kind: ResourceList\nitems: [{kind: A}]\n'],
  ])('leaves %s to the parser', (_name, text) => {
    expect(splitItems(text)).toBeUndefined()
  })

  test('keeps the shell and one chunk per item', () => {
    expect(splitItems('kind: ResourceList\nitems:\n- kind: A\n  x: 1\n- # c\n  kind: B\nfunctionConfig: {}\n')).toEqual(
      {
        shell: 'kind: ResourceList\nitems: []\nfunctionConfig: {}\n',
        chunks: ['- kind: A\n  x: 1\n', '- # c\n  kind: B\n'],
      },
    )
  })
})

describe('KubeObject.fieldTextEquals', () => {
  const spec = { upstream: { repo: 'r', package: 'p' }, injectors: [{ kind: 'ConfigMap', name: 'x' }] }

  test('proves an unparsed generated field equal without parsing it', () => {
    const rl = ResourceList.parse(
      `kind: ResourceList\nitems:\n${KubeObject.fromObject({ kind: 'PV', spec }).toItemText()}`,
    )
    const item = rl.items[0]!
    expect(item.fieldTextEquals('spec', spec)).toBe(true)
    expect(item.unparsedText).toBeDefined()
    expect(item.fieldTextEquals('spec', { ...spec, extra: 'y' })).toBe(false)
  })

  test('says "not known" for other spellings and for parsed items', () => {
    const rl = ResourceList.parse('kind: ResourceList\nitems:\n- kind: PV\n  spec: {upstream: {repo: r, package: p}}\n')
    expect(rl.items[0]!.fieldTextEquals('spec', { upstream: { repo: 'r', package: 'p' } })).toBe(false)
    void rl.items[0]!.get(['spec'])
    expect(rl.items[0]!.fieldTextEquals('spec', { upstream: { repo: 'r', package: 'p' } })).toBe(false)
  })
})
