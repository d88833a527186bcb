import { parseObjects } from '../krm/index.js'
import { source } from '../../test/support/source.js'
import { combineErrors } from './package-variant.js'
import { readPackageVariantSet, validatePackageVariantSet } from './package-variant-set.js'

function validate(yaml: string): string {
  const [object] = parseObjects(yaml, 'pvs.yaml')
  const read = readPackageVariantSet(object!)
  if (!read.ok) throw new Error(read.errors.map((e) => e.message).join('; '))
  return combineErrors(validatePackageVariantSet(read.value))
}

const head = source`
  apiVersion: config.porch.kpt.dev/v1alpha2
  kind: PackageVariantSet
  metadata:
    name: my-pvs
`
const upstream = source`
  upstream:
    repo: blueprints
    package: nginx
    revision: 1
`
const spec = (body: string) => `${head}spec:\n${(upstream + body).replace(/^/gm, '  ')}`

describe('validatePackageVariantSet', () => {
  test.each([
    ['a valid set', spec('targets:\n- repositories:\n  - name: edge\n'), ''],
    ['no spec at all', head, 'spec.upstream is a required field; must specify at least one item in spec.targets'],
    [
      'empty upstream',
      `${head}spec:\n  upstream: {}\n  targets: []\n`,
      'spec.upstream.package is a required field; spec.upstream.repo is a required field; either spec.upstream.revision or spec.upstream.workspaceName must be specified; must specify at least one item in spec.targets',
    ],
    [
      'workspaceName alone is enough',
      `${head}spec:\n  upstream: {repo: r, package: p, workspaceName: ws}\n  targets: [{repositorySelector: {}}]\n`,
      '',
    ],
    [
      'empty repositories list, empty names',
      spec('targets:\n- repositories: []\n- repositories:\n  - name: ""\n    packageNames: [a, ""]\n'),
      'spec.targets[0].repositories must not be an empty list if specified; spec.targets[1].repositories[0].name cannot be empty; spec.targets[1].repositories[0].packageNames[1] cannot be empty',
    ],
    [
      'objectSelector without apiVersion and kind',
      spec('targets:\n- objectSelector: {matchLabels: {a: b}}\n'),
      'spec.targets[0].objectselector.apiVersion cannot be empty; spec.targets[0].objectselector.kind cannot be empty',
    ],
    [
      'no selector, two selectors',
      spec('targets:\n- template: {}\n- repositorySelector: {}\n  objectSelector: {apiVersion: v1, kind: ConfigMap}\n'),
      'spec.targets[0] must specify one of `repositories`, `repositorySelector`, or `objectSelector`; spec.targets[1] must specify one of `repositories`, `repositorySelector`, or `objectSelector`',
    ],
    [
      'every template rule, in order',
      spec(source`
        targets:
        - repositorySelector: {}
          template:
            adoptionPolicy: ""
            deletionPolicy: keep
            downstream: {repo: a, repoExpr: b, package: c, packageExpr: d}
            labelExprs:
            - {key: k, keyExpr: "'k'", value: v, valueExpr: "'v'"}
            annotationExprs:
            - {value: v, valueExpr: "'v'"}
            packageContext:
              dataExprs:
              - {key: k, keyExpr: "'k'"}
            injectors:
            - {name: a, nameExpr: "'b'"}
            - {kind: ConfigMap}
            pipeline:
              validators:
              - {name: v.1}
              mutators:
              - {image: set-labels, name: m.1}
      `),
      [
        'spec.targets[0].template.adoptionPolicy can only be "adoptNone" or "adoptExisting"',
        'spec.targets[0].template.deletionPolicy can only be "orphan" or "delete"',
        'spec.targets[0].template may specify only one of `downstream.repo` and `downstream.repoExpr`',
        'spec.targets[0].template may specify only one of `downstream.package` and `downstream.packageExpr`',
        'spec.targets[0].template.labelExprs[0] may specify only one of `key` and `keyExpr`',
        'spec.targets[0].template.labelExprs[0] may specify only one of `value` and `valueExpr`',
        'spec.targets[0].template.annotationExprs[0] may specify only one of `value` and `valueExpr`',
        'spec.targets[0].template.packageContext.dataExprs[0] may specify only one of `key` and `keyExpr`',
        'spec.targets[0].template.injectors[0] may specify only one of `name` and `nameExpr`',
        'spec.targets[0].template.injectors[1] must specify either `name` or `nameExpr`',
        'spec.targets[0].template.pipeline.validators[0].image must not be empty',
        "spec.targets[0].template.pipeline.validators[0].name must not contain '.'",
        "spec.targets[0].template.pipeline.mutators[0].name must not contain '.'",
      ].join('; '),
    ],
    [
      'configMapExprs and removeKeyExprs are not validated',
      spec(source`
      targets:
      - repositorySelector: {}
        template:
          packageContext: {removeKeyExprs: ["'x'"]}
          pipeline:
            mutators:
            - image: fn
              configMapExprs: [{key: a, keyExpr: "'a'"}]
    `),
      '',
    ],
  ])('%s', (_, yaml, want) => {
    expect(validate(yaml)).toBe(want)
  })

  test('type errors are field errors, not stack traces', () => {
    const [object] = parseObjects(`${head}spec:\n  targets: {a: b}\n  upstream: {revision: [1]}\n`, 'pvs.yaml')
    const read = readPackageVariantSet(object!)
    expect(read.ok).toBe(false)
    if (read.ok) return
    expect(read.errors.map((e) => e.field)).toEqual(['spec.upstream.revision', 'spec.targets'])
  })

  test('reads presence: a present empty string is not the same as absent', () => {
    const [object] = parseObjects(
      spec('targets:\n- repositorySelector: {}\n  template:\n    downstream: {repo: ""}\n'),
      'pvs.yaml',
    )
    const read = readPackageVariantSet(object!)
    expect(read.ok && read.value.spec.targets![0]!.template!.downstream).toEqual({ repo: '' })
  })

  test("older Porch's string revisions and tag are read into today's fields, each with a warning naming the current form", () => {
    const read = (upstream: string) => {
      const [object] = parseObjects(`${head}spec:\n  upstream: {repo: r, package: p, ${upstream}}\n`, 'pvs.yaml')
      const result = readPackageVariantSet(object!)
      if (!result.ok) return { errors: result.errors.map((e) => e.message) }
      return { upstream: result.value.spec.upstream, warnings: result.value.warnings.map((w) => w.message) }
    }
    expect(read('revision: 3')).toEqual({ upstream: { repo: 'r', package: 'p', revision: 3 }, warnings: [] })
    expect(read('revision: v1')).toEqual({
      upstream: { repo: 'r', package: 'p', revision: 1 },
      warnings: [
        '`spec.upstream.revision: "v1"` is older Porch\'s string form: read as revision 1; write `revision: 1`',
      ],
    })
    expect(read('revision: "2"').upstream).toEqual({ repo: 'r', package: 'p', revision: 2 })
    expect(read('revision: r2')).toEqual({
      upstream: { repo: 'r', package: 'p', workspaceName: 'r2' },
      warnings: [
        '`spec.upstream.revision: "r2"` is older Porch\'s string form: read as the revision named "r2" (the tag <package>/r2, else the head of branch r2); write `workspaceName: r2`',
      ],
    })
    expect(read('revision: v4.0.0').upstream).toEqual({ repo: 'r', package: 'p', workspaceName: 'v4.0.0' })
    expect(read('tag: main').upstream).toEqual({ repo: 'r', package: 'p', workspaceName: 'main' })
    expect(read('revision: main, workspaceName: main').upstream).toEqual({
      repo: 'r',
      package: 'p',
      workspaceName: 'main',
    })
    expect(read('revision: main, workspaceName: v2')).toEqual({
      errors: ['`spec.upstream.revision` "main" names another revision than `workspaceName: v2`'],
    })
  })
})
