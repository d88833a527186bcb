/** Hostile inputs for fan-out: label selectors and CEL expressions. */
import { list, packageVariantSet } from './build.js'
import type { HostileCase } from './build.js'

const celTarget = (expr: string) => `    - repositorySelector:
        matchLabels: {region: eu}
      template:
        annotationExprs:
        - key: example.com/x
          valueExpr: ${JSON.stringify(expr)}
`

export const fanOutCases: HostileCase[] = [
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
]
