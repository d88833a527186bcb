import { publishGroups, publishMessage } from './publish-commits.js'
import type { PublishEntry } from './publish-commits.js'

const entry = (dir: string, revision: number): PublishEntry => ({
  package: dir,
  directory: dir,
  workspace: 'packagevariant-1',
  revision,
  ...(revision > 0 ? { tree: 't' } : {}),
  draftMessage: `Create ${dir} from blueprints/nginx v2\n\nPackageVariant: default/${dir}\nUpstream: blueprints/nginx v2\n\nkpt:{"package":"${dir}","workspaceName":"packagevariant-1","revision":""}\n`,
})

describe('publishing commits', () => {
  test('a commit per package while the trees they write stay within the budget, else equal groups in order', () => {
    const list = Array.from({ length: 10 }, (_, i) => i)
    expect(publishGroups(list, 100, 1000)).toEqual(list.map((i) => [i]))
    expect(publishGroups(list, 400, 1000)).toEqual([
      [0, 1, 2, 3, 4],
      [5, 6, 7, 8, 9],
    ])
    expect(publishGroups(list, 5000, 1000)).toEqual([list])
    expect(publishGroups([], 10, 1000)).toEqual([])
    // 10,000 packages into a directory of 10,000: 100 commits of 100.
    const big = publishGroups(
      Array.from({ length: 10_000 }, (_, i) => i),
      10_000,
    )
    expect([big.length, big[0]!.length]).toEqual([100, 100])
  })

  test("one package: the draft's message under what was published, with Porch's annotation", () => {
    expect(publishMessage([entry('edge-01', 3)])).toBe(
      'Publish edge-01 v3\n\nCreate edge-01 from blueprints/nginx v2\n\nPackageVariant: default/edge-01\nUpstream: blueprints/nginx v2\n\nkpt:{"package":"edge-01","workspaceName":"packagevariant-1","revision":"v3"}\n',
    )
    expect(publishMessage([entry('edge-01', 0)])).toMatch(/^Remove edge-01\n\n/)
  })

  test('several: each package under its revision, then an annotation each', () => {
    expect(publishMessage([entry('edge-01', 1), entry('edge-02', 2), entry('edge-03', 0)])).toBe(
      [
        'Publish 2 package(s), remove 1: edge-01 to edge-03',
        '',
        'edge-01 v1: Create edge-01 from blueprints/nginx v2',
        '  PackageVariant: default/edge-01',
        '  Upstream: blueprints/nginx v2',
        '',
        'edge-02 v2: Create edge-02 from blueprints/nginx v2',
        '  PackageVariant: default/edge-02',
        '  Upstream: blueprints/nginx v2',
        '',
        'edge-03 removed: Create edge-03 from blueprints/nginx v2',
        '  PackageVariant: default/edge-03',
        '  Upstream: blueprints/nginx v2',
        '',
        'kpt:{"package":"edge-01","workspaceName":"packagevariant-1","revision":"v1"}',
        'kpt:{"package":"edge-02","workspaceName":"packagevariant-1","revision":"v2"}',
        'kpt:{"package":"edge-03","workspaceName":"packagevariant-1","revision":""}',
        '',
      ].join('\n'),
    )
  })
})
