/**
 * Hostile inputs for every bin/ program: what a careless or malicious package
 * author, platform team or PackageVariant author could feed a function. Each
 * case is a whole stdin; `expect` says what the run must give:
 * - `error`: exit 1 and an error result matching `message`;
 * - `any`: exit 0 or 1 (some functions never read the bad part), as long as
 *   the run meets the invariants every run must meet (see hostile.test.ts).
 */

export interface HostileCase {
  name: string
  /** stdin; a function builds it per program, with that program's valid functionConfig. */
  input: (program: string) => string | Buffer
  expect: 'error' | 'any'
  /** For `error`: what an error result must say. */
  message?: RegExp
  /** For `error`: the programs that must fail (the others may not read the bad part); default all. */
  errorIn?: string[]
  /** Run through the real executables too (crash, memory or decoding risks); `only`: there only (slow cases, kept out of jest's slower module runtime). */
  process?: boolean | 'only'
  /** The programs the case is for (the others never read that kind of input); default all. */
  programs?: string[]
  /** The heap the process may use, in MiB (default 512). */
  heapMb?: number
}

const header = 'apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n'

/** A package as kpt sends it: a Kptfile, its context ConfigMap, and what fan-out and injection read. */
const packageItems = `- apiVersion: kpt.dev/v1
  kind: Kptfile
  metadata:
    name: pkg
    annotations:
      config.kubernetes.io/local-config: "true"
      internal.config.kubernetes.io/path: 'Kptfile'
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: kptfile.kpt.dev
    annotations:
      config.kubernetes.io/local-config: "true"
      internal.config.kubernetes.io/path: 'package-context.yaml'
  data:
    name: pkg
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: endpoints
    namespace: shop
    annotations:
      kpt.dev/config-injection: optional
      internal.config.kubernetes.io/path: 'endpoints.yaml'
  data:
    url: https://example.com
- apiVersion: config.porch.kpt.dev/v1alpha1
  kind: Repository
  metadata:
    name: edge
    namespace: default
    labels:
      region: eu
  spec:
    type: git
    deployment: true
    git:
      repo: https://example.com/edge.git
- apiVersion: porch.kpt.dev/v1alpha1
  kind: PackageRevision
  metadata:
    name: blueprints.nginx.v1
    namespace: default
  spec:
    packageName: nginx
    repository: blueprints
    revision: 1
    workspaceName: v1
    lifecycle: Published
`

const packageVariant = `functionConfig:
  apiVersion: config.porch.kpt.dev/v1alpha1
  kind: PackageVariant
  metadata:
    name: pv
    namespace: shop
  spec:
    upstream: {repo: blueprints, package: nginx, workspaceName: v1}
    downstream: {repo: edge, package: nginx}
    packageContext:
      data: {region: eu}
    pipeline:
      mutators:
      - name: set-labels
        image: set-labels:v1
    injectors:
    - name: endpoints
`

const packageVariantSet = (target: string) => `functionConfig:
  apiVersion: config.porch.kpt.dev/v1alpha2
  kind: PackageVariantSet
  metadata:
    name: set
    namespace: default
  spec:
    upstream: {repo: blueprints, package: nginx, workspaceName: v1}
    targets:
${target}`

const repositorySelector = `    - repositorySelector:
        matchLabels: {region: eu}
`

/** A valid functionConfig for each program (dependency-check reads the package with none). */
export function validConfig(program: string): string {
  if (program === 'fan-out') return packageVariantSet(repositorySelector)
  if (program === 'dependency-check') return ''
  return packageVariant
}

/** A ResourceList with the package items, extra items, and the program's functionConfig (or `functionConfig`). */
const list =
  (extraItems = '', functionConfig?: string) =>
  (program: string) =>
    `${header}items:\n${packageItems}${extraItems}${functionConfig ?? validConfig(program)}`

const configMap = (body: string) =>
  `- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: bad\n    namespace: shop\n${body}`
const aliasBomb = (indent: string) =>
  [
    'a: &a [x, x, x, x, x, x, x, x, x, x]',
    ...'bcdefgh'.split('').map((c, i) => `${c}: &${c} [${Array(10).fill(`*${'abcdefgh'[i]}`).join(', ')}]`),
  ]
    .map((line) => `${indent}${line}\n`)
    .join('')

const celTarget = (expr: string) => `    - repositorySelector:
        matchLabels: {region: eu}
      template:
        annotationExprs:
        - key: example.com/x
          valueExpr: ${JSON.stringify(expr)}
`

/** `count` packages in a catalog, each needing the next; `cycle` closes the chain. */
function dependencyChain(count: number, cycle: boolean): string {
  const packages: string[] = []
  for (let i = 0; i < count; i++) {
    const next = i + 1 < count ? `p${i + 1}` : cycle ? 'p0' : undefined
    packages.push(
      `    - name: p${i}\n      versions:\n      - version: 1.0.0${next ? `\n        dependencies:\n        - name: ${next}` : ''}`,
    )
  }
  return `- apiVersion: kpt-variants.dev/v1alpha1
  kind: PackageManifest
  metadata:
    name: root
    annotations:
      config.kubernetes.io/local-config: "true"
  spec:
    version: v1.0.0
    dependencies:
    - name: p0
- apiVersion: kpt-variants.dev/v1alpha1
  kind: PackageCatalog
  metadata:
    name: main
  spec:
    packages:
${packages.join('\n')}
`
}

const malformed = /malformed YAML in ResourceList items\[5\]/

export const corpus: HostileCase[] = [
  // Malformed YAML inside an item: never printed back verbatim.
  {
    name: 'an unclosed flow mapping in an item',
    input: list(configMap('  data: {a: 1\n')),
    expect: 'error',
    message: malformed,
  },
  {
    name: 'a truncated quoted scalar in an item',
    input: list(configMap('  data:\n    a: "abc\n')),
    expect: 'error',
    message: malformed,
  },
  {
    name: 'an implicit key over 1,024 characters',
    input: list(configMap(`  data:\n    ${'k'.repeat(1100)}: x\n`)),
    expect: 'error',
    message: malformed,
  },
  {
    name: 'a duplicate key in an item',
    input: list(configMap('  data:\n    a: x\n    a: y\n')),
    expect: 'error',
    message: /items\[5\] \(ConfigMap\/shop\/bad\): duplicate key `data.a`/,
  },
  {
    name: 'a duplicate metadata key',
    input: list('- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n    name: b\n'),
    expect: 'error',
    message: /duplicate key `metadata.name`/,
  },
  // Aliases.
  {
    name: 'an alias before its anchor in an item',
    input: list(configMap('  data:\n    a: *x\n    b: &x y\n')),
    expect: 'error',
    message: /items\[5\].*Unresolved alias/,
  },
  {
    name: 'an alias bomb in an item',
    input: list(configMap(`  data:\n${aliasBomb('    ')}`)),
    expect: 'error',
    message: /items\[5\].*Excessive alias count/,
    process: true,
  },
  {
    name: 'an alias bomb in the functionConfig',
    input: list(
      '',
      `functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: fc\n  data:\n${aliasBomb('    ')}`,
    ),
    expect: 'error',
    message: /functionConfig.*Excessive alias count/,
  },
  {
    name: 'an alias before its anchor in the functionConfig',
    input: list('', 'functionConfig:\n  kind: *k\n  apiVersion: &k v1\n'),
    expect: 'error',
    message: /functionConfig.*Unresolved alias/,
  },
  {
    name: 'a duplicate key in the functionConfig',
    input: list('', 'functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  kind: Secret\n'),
    expect: 'error',
    message: /functionConfig: duplicate key `kind`/,
  },
  { name: 'benign anchors and aliases', input: list(configMap('  data:\n    a: &x y\n    b: *x\n')), expect: 'any' },
  // Nesting.
  {
    name: 'a flow collection 100,000 deep',
    input: list(configMap(`  data:\n    x: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`)),
    expect: 'error',
    message: /nested deeper than 500 levels/,
    process: true,
  },
  {
    name: 'a flow collection 100,000 deep, never closed',
    input: list(configMap(`  data:\n    x: ${'{a: '.repeat(100_000)}\n`)),
    expect: 'error',
    message: /nested deeper than 500 levels/,
  },
  {
    name: 'block sequences 10,000 deep',
    input: list(configMap(`  data:\n    x:\n    ${'- '.repeat(10_000)}x\n`)),
    expect: 'error',
    message: /nested deeper than 500 levels/,
  },
  {
    name: 'a functionConfig 100,000 deep',
    input: list('', `functionConfig: ${'['.repeat(100_000)}\n`),
    expect: 'error',
    message: /nested deeper than 500 levels/,
  },
  // Wrong types: rejected, not taken as absent.
  {
    name: '`metadata.annotations` as a list',
    input: list('- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: bad\n    annotations:\n    - x\n'),
    expect: 'any',
  },
  {
    name: 'an annotation value that is a map',
    input: list(
      '- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: bad\n    annotations:\n      kpt.dev/config-injection: {a: b}\n',
    ),
    expect: 'any',
  },
  // Every program reads item paths (annotations), so `metadata` must be a map for all but dependency-check,
  // which looks at kinds first; only fan-out and dependency-check read every item's kind.
  {
    name: '`metadata` as a list',
    input: list('- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n  - name: bad\n'),
    expect: 'error',
    message: /ConfigMap\/: `metadata` must be a map/,
    errorIn: ['config-injection', 'fan-out', 'package-context', 'package-variant', 'pipeline-prepend'],
  },
  {
    name: '`kind` as a list',
    input: list('- apiVersion: v1\n  kind: [a]\n  metadata:\n    name: bad\n'),
    expect: 'error',
    message: /`kind` must be a string/,
    errorIn: ['fan-out', 'dependency-check'],
  },
  {
    name: 'the functionConfig with `spec` a string',
    input: (program) =>
      list(
        '',
        validConfig(program || 'x').replace(/ {2}spec:\n(?: {4}.*\n)*/, '  spec: hello\n') ||
          'functionConfig:\n  apiVersion: kpt-variants.dev/v1alpha1\n  kind: DependencyCheck\n  metadata:\n    name: c\n  spec: hello\n',
      )(program),
    expect: 'error',
    message: /`spec` must be (a map|an object)/,
  },
  {
    name: 'the functionConfig with `metadata` a list',
    input: (program) =>
      list(
        '',
        (
          validConfig(program) ||
          'functionConfig:\n  apiVersion: kpt-variants.dev/v1alpha1\n  kind: DependencyCheck\n  metadata:\n    name: c\n'
        ).replace(/ {2}metadata:\n(?: {4}.*\n)*/, '  metadata:\n  - name: x\n'),
      )(program),
    expect: 'error',
    message: /`metadata` must be a map/,
  },
  {
    name: 'a PackageRevision with `spec` a string',
    input: list(
      '- apiVersion: porch.kpt.dev/v1alpha1\n  kind: PackageRevision\n  metadata:\n    name: blueprints.nginx.v2\n    namespace: default\n  spec: hello\n',
    ),
    expect: 'any',
  },
  {
    name: 'a Repository with `metadata.labels` a string',
    input: list(
      '- apiVersion: config.porch.kpt.dev/v1alpha1\n  kind: Repository\n  metadata:\n    name: r\n    namespace: default\n    labels: eu\n  spec: {type: git}\n',
    ),
    expect: 'any',
  },
  // The input as a whole.
  { name: 'empty stdin', input: () => '', expect: 'error', message: /input is empty/ },
  {
    name: 'whitespace and comments only',
    input: () => '\n  \n# nothing\n',
    expect: 'error',
    message: /input is empty|not a ResourceList/,
  },
  { name: 'a YAML scalar', input: () => 'hello\n', expect: 'error', message: /not a ResourceList/ },
  { name: 'a YAML list', input: () => '- a\n- b\n', expect: 'error', message: /not a ResourceList/ },
  {
    name: 'several documents',
    input: (program) => `${list()(program)}---\n${list()(program)}`,
    expect: 'error',
    message: /malformed YAML|ResourceList/,
  },
  {
    name: '`items` as a map',
    input: () => `${header}items: {a: b}\n`,
    expect: 'error',
    message: /`items` must be a list/,
  },
  // One reader for every program: a key twice at the top is an error, as in kpt's go-yaml, never the first or last one silently.
  {
    name: 'two `items` keys',
    input: (program) =>
      `${list()(program)}items:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: second\n`,
    expect: 'error',
    message: /malformed YAML in ResourceList: duplicate key `items`/,
  },
  {
    name: 'two `items` keys, the second one empty',
    input: (program) => `${list()(program)}items: []\n`,
    expect: 'error',
    message: /malformed YAML in ResourceList: duplicate key `items`/,
  },
  {
    name: 'two `functionConfig` keys',
    input: (program) =>
      `${list()(program)}${'functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: second\n'.repeat(program === 'dependency-check' ? 2 : 1)}`,
    expect: 'error',
    message: /malformed YAML in ResourceList: duplicate key `functionConfig`/,
  },
  {
    name: 'two `kind` keys',
    input: (program) => `kind: List\n${list()(program)}`,
    expect: 'error',
    message: /malformed YAML in ResourceList: duplicate key `kind`/,
  },
  {
    name: 'an item that is a string',
    input: () => `${header}items:\n- hello\n`,
    expect: 'error',
    message: /is not an object/,
  },
  {
    name: 'truncated stdin',
    input: (program) => list(configMap('  data:\n    a: "abc def'))(program).slice(0, -1),
    expect: 'any',
  },
  { name: 'truncated in the middle of a key', input: (program) => `${list()(program).slice(0, 400)}`, expect: 'any' },
  {
    name: 'binary stdin',
    input: () => Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256)),
    expect: 'error',
    message: /not valid UTF-8/,
    process: true,
  },
  {
    name: 'a NUL byte',
    input: (program) => list(configMap('  data:\n    a: "x\0y"\n'))(program),
    expect: 'error',
    message: /NUL character/,
  },
  { name: 'a byte-order mark', input: (program) => `\ufeff${list()(program)}`, expect: 'any' },
  { name: 'CRLF line ends', input: (program) => list()(program).replace(/\n/g, '\r\n'), expect: 'any' },
  {
    name: 'mixed CRLF and LF',
    input: (program) => list()(program).replace(/name: pkg\n/, 'name: pkg\r\n'),
    expect: 'any',
  },
  {
    name: 'a tab in indentation',
    input: list(configMap('  data:\n\ta: x\n')),
    expect: 'error',
    message: /malformed YAML/,
  },
  {
    name: 'control characters and line separators',
    input: list(configMap('  data:\n    a: "\\u0007\\u2028\\u0085"\n    b: x\u2028y\n')),
    expect: 'any',
  },
  // Size.
  {
    name: 'a 5 MB scalar',
    input: list(configMap(`  data:\n    big: ${'x'.repeat(5_000_000)}\n`)),
    expect: 'any',
    process: true,
  },
  {
    name: 'a 100,000-character name',
    input: list(`- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: ${'n'.repeat(100_000)}\n`),
    expect: 'any',
  },
  {
    name: 'a 100,000-character annotation key',
    input: list(
      `- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: bad\n    annotations:\n      ${'k'.repeat(100_000)}: x\n`,
    ),
    expect: 'any',
  },
  {
    name: '10,000 items',
    input: list(
      Array.from(
        { length: 10_000 },
        (_, i) => `- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c${i}\n`,
      ).join(''),
    ),
    expect: 'any',
  },
  {
    name: 'a map of 20,000 keys',
    input: list(configMap(`  data:\n${Array.from({ length: 20_000 }, (_, i) => `    k${i}: v\n`).join('')}`)),
    expect: 'any',
  },
  // Label selectors (fan-out; the others reject the functionConfig's kind or ignore it).
  {
    name: 'an invalid label selector operator',
    input: list(
      '',
      packageVariantSet(
        '    - repositorySelector:\n        matchExpressions:\n        - {key: region, operator: Bogus}\n',
      ),
    ),
    expect: 'error',
    message: /Bogus|operator/,
    errorIn: ['fan-out'],
  },
  {
    name: 'an invalid label selector key',
    input: list('', packageVariantSet('    - repositorySelector:\n        matchLabels: {"bad key!": x}\n')),
    expect: 'error',
    message: /bad key!/,
    errorIn: ['fan-out'],
  },
  {
    name: 'a label selector with 10,000 values',
    input: list(
      '',
      packageVariantSet(
        `    - repositorySelector:\n        matchExpressions:\n        - key: region\n          operator: In\n          values: [${Array.from({ length: 10_000 }, (_, i) => `v${i}`).join(', ')}]\n`,
      ),
    ),
    expect: 'any',
    programs: ['fan-out'],
  },
  // Hostile CEL (fan-out).
  {
    name: 'CEL nested 10,000 deep',
    input: list('', packageVariantSet(celTarget(`${'('.repeat(10_000)}'a'${')'.repeat(10_000)}`))),
    expect: 'error',
    message: /nested too deeply/,
    errorIn: ['fan-out'],
  },
  {
    name: 'CEL: a chain of 15,000 additions',
    input: list('', packageVariantSet(celTarget(Array(15_000).fill("'a'").join(' + ')))),
    expect: 'error',
    message: /nested too deeply/,
    errorIn: ['fan-out'],
  },
  {
    name: 'CEL: an expression over 100,000 characters',
    input: list('', packageVariantSet(celTarget(`'${'a'.repeat(200_000)}'`))),
    expect: 'error',
    message: /code point size exceeds limit/,
    errorIn: ['fan-out'],
  },
  {
    name: 'CEL building a huge string',
    input: list(
      '',
      packageVariantSet(
        celTarget(
          `${'[1,2,3,4,5,6,7,8,9,10].map(x, '.repeat(5)}${Array(50).fill('repository.name').join(' + ')}${')'.repeat(5)}`,
        ),
      ),
    ),
    expect: 'error',
    message: /budget|cost|string/,
    errorIn: ['fan-out'],
  },
  {
    name: 'CEL with a long comprehension',
    input: list(
      '',
      packageVariantSet(
        celTarget(
          "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, true))))) ? 'x' : 'y'",
        ),
      ),
    ),
    expect: 'error',
    message: /budget|cost/,
    errorIn: ['fan-out'],
  },
  {
    name: 'CEL reading a field it may not see',
    input: list('', packageVariantSet(celTarget('repository.spec.git.repo'))),
    expect: 'error',
    message: /no such key|spec/,
    errorIn: ['fan-out'],
  },
  // Dependencies (dependency-check; the others never read them).
  {
    name: 'a 10,000-package dependency chain',
    input: list(dependencyChain(10_000, false)),
    expect: 'any',
    process: 'only',
    programs: ['dependency-check'],
  },
  {
    name: 'a 10,000-package dependency cycle',
    input: list(dependencyChain(10_000, true)),
    expect: 'error',
    message: /cycle|CONFLICT|conflict/,
    process: 'only',
    programs: ['dependency-check'],
    // The exact resolver's proof that a 10,000-long cycle has no solution holds ~10,000 derived facts.
    heapMb: 1024,
  },
]
