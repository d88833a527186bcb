import { parseObjects } from '../krm/index.js'
import { source } from '../../test/support/source.js'
import { readRollout } from './rollout.js'

/** The example, as docs/rollouts.md shows it. */
const exampleRollout = source`
  apiVersion: kpt-variants.dev/v1alpha1
  kind: Rollout
  metadata: {name: edge-monitor, namespace: default}
  spec:
    packageVariantSet: edge-monitor
    steps:
    - name: canary
      targets: {matchLabels: {tier: canary}}
    - name: eu
      targets: {matchLabels: {region: eu-west1}}
      maxConcurrent: 50%
    - name: rest
    gates:
      soak: 30m
      health:
        condition: Ready
        revisionAnnotation: kpt-variants.dev/running-revision
      approval: manual
    paused: false
    windows:
    - {schedule: "0 9 * * 1-5", duration: 8h, timeZone: Europe/Berlin}
`

function read(yaml: string) {
  const [object] = parseObjects(yaml, 'rollout.yaml')
  return readRollout(object!)
}

function errors(yaml: string): string[] {
  const result = read(yaml)
  return result.ok ? [] : result.errors.map((e) => e.message)
}

const head = source`
  apiVersion: kpt-variants.dev/v1alpha1
  kind: Rollout
  metadata:
    name: r
  spec:
    packageVariantSet: s
`

describe('readRollout', () => {
  test("reads the issue's example", () => {
    const result = read(exampleRollout)
    if (!result.ok) throw new Error(result.errors.map((e) => e.message).join('; '))
    const r = result.value
    expect(r.spec.packageVariantSet).toBe('edge-monitor')
    expect(r.steps.map((s) => s.name)).toEqual(['canary', 'eu', 'rest'])
    expect(r.steps[0]!.matches!({ tier: 'canary' })).toBe(true)
    expect(r.steps[0]!.matches!({ tier: 'prod' })).toBe(false)
    expect(r.steps[1]!.maxConcurrent).toEqual({ percent: 50 })
    expect(r.steps[2]!.matches).toBeUndefined()
    expect(r.soakMs).toBe(30 * 60_000)
    expect(r.health).toEqual({ condition: 'Ready', revisionAnnotation: 'kpt-variants.dev/running-revision' })
    expect(r.approval).toBe('manual')
    expect(r.paused).toBe(false)
    expect(r.windows.map((w) => [w.schedule, w.durationMs, w.timeZone])).toEqual([
      ['0 9 * * 1-5', 8 * 3_600_000, 'Europe/Berlin'],
    ])
    expect(r.approvals).toEqual([])
    expect(r.warnings).toEqual([])
  })

  test('defaults: approval auto, no soak, no health, not paused, windows in UTC', () => {
    const result = read(`${head}  steps: [{name: all}]\n  windows: [{schedule: "0 22 * * *", duration: 1h}]\n`)
    if (!result.ok) throw new Error(result.errors.map((e) => e.message).join('; '))
    expect(result.value).toMatchObject({ approval: 'auto', soakMs: 0, paused: false })
    expect(result.value.health).toBeUndefined()
    expect(result.value.windows[0]!.timeZone).toBe('UTC')
  })

  test('reads approvals from status', () => {
    const result = read(
      `${head}  steps: [{name: a}, {name: b}]\nstatus:\n  approvals:\n  - {step: b, revision: nginx/v2@abc, time: "2025-06-02T09:00:00Z"}\n`,
    )
    if (!result.ok) throw new Error(result.errors.map((e) => e.message).join('; '))
    expect(result.value.approvals).toEqual([
      { step: 'b', revision: 'nginx/v2@abc', time: new Date('2025-06-02T09:00:00Z') },
    ])
  })

  test.each([
    [
      'no spec',
      'apiVersion: kpt-variants.dev/v1alpha1\nkind: Rollout\nmetadata: {name: r}\n',
      ['`spec.packageVariantSet` is required'],
    ],
    [
      'another version',
      `${head.replace('v1alpha1', 'v1beta1')}  steps: [{name: a}]\n`,
      ['`apiVersion` "kpt-variants.dev/v1beta1" is not served: use kpt-variants.dev/v1alpha1'],
    ],
    ['no steps', head, ['`spec.steps` must have at least one step']],
    ['steps not a list', `${head}  steps: {name: a}\n`, ['`spec.steps` must be a list']],
    [
      'a step without a name',
      `${head}  steps: [{targets: {matchLabels: {a: b}}}]\n`,
      ['`spec.steps[0].name` is required'],
    ],
    [
      'duplicate step names',
      `${head}  steps: [{name: a}, {name: a}]\n`,
      ['`spec.steps[1].name` "a" is also the name of spec.steps[0]: step names must be unique'],
    ],
    [
      'a step name that is not a DNS label',
      `${head}  steps: [{name: Canary}]\n`,
      [
        expect.stringMatching(
          /^`spec\.steps\[0\]\.name` "Canary" is not a valid step name: a lowercase RFC 1123 label/,
        ),
      ],
    ],
    [
      'an invalid selector',
      `${head}  steps: [{name: a, targets: {matchExpressions: [{key: tier, operator: Has}]}}]\n`,
      ['`spec.steps[0].targets` is not a valid label selector: "Has" is not a valid label selector operator'],
    ],
    [
      'maxConcurrent 0',
      `${head}  steps: [{name: a, maxConcurrent: 0}]\n`,
      [
        expect.stringMatching(
          /^`spec\.steps\[0\]\.maxConcurrent` 0 must be a count of at least 1 or a percentage from 1% to 100%/,
        ),
      ],
    ],
    [
      'maxConcurrent 150%',
      `${head}  steps: [{name: a, maxConcurrent: 150%}]\n`,
      [expect.stringMatching(/^`spec\.steps\[0\]\.maxConcurrent` "150%" must be/)],
    ],
    [
      'maxConcurrent a quoted count',
      `${head}  steps: [{name: a, maxConcurrent: "3"}]\n`,
      [expect.stringMatching(/^`spec\.steps\[0\]\.maxConcurrent` "3" must be/)],
    ],
    [
      'maxConcurrent a map',
      `${head}  steps: [{name: a, maxConcurrent: {n: 1}}]\n`,
      ['`spec.steps[0].maxConcurrent` must be a count or a percentage (e.g. 2 or 50%)'],
    ],
    [
      'a soak that is not a duration',
      `${head}  steps: [{name: a}]\n  gates: {soak: 30 minutes}\n`,
      ['`spec.gates.soak` "30 minutes" is not a duration (e.g. 30m, 8h, 1h30m)'],
    ],
    [
      'a negative soak',
      `${head}  steps: [{name: a}]\n  gates: {soak: -5m}\n`,
      ['`spec.gates.soak` "-5m" must not be negative'],
    ],
    [
      'a health gate without condition',
      `${head}  steps: [{name: a}]\n  gates: {health: {}}\n`,
      [expect.stringMatching(/^`spec\.gates\.health\.condition` is required/)],
    ],
    [
      'a bad revision annotation key',
      `${head}  steps: [{name: a}]\n  gates: {health: {condition: Ready, revisionAnnotation: "a b"}}\n`,
      [expect.stringMatching(/^`spec\.gates\.health\.revisionAnnotation` "a b" is not an annotation key/)],
    ],
    [
      'an unknown approval',
      `${head}  steps: [{name: a}]\n  gates: {approval: always}\n`,
      ['`spec.gates.approval` "always" must be "manual" or "auto"'],
    ],
    ['paused not a boolean', `${head}  steps: [{name: a}]\n  paused: "yes"\n`, ['`spec.paused` must be a boolean']],
    [
      'a window with six fields',
      `${head}  steps: [{name: a}]\n  windows: [{schedule: "0 0 9 * * 1-5", duration: 8h}]\n`,
      [
        '`spec.windows[0].schedule` "0 0 9 * * 1-5" is not a cron schedule of five fields (e.g. "0 9 * * 1-5": minute, hour, day of month, month, day of week)',
      ],
    ],
    [
      'a window hour out of range',
      `${head}  steps: [{name: a}]\n  windows: [{schedule: "0 25 * * *", duration: 8h}]\n`,
      [
        expect.stringMatching(
          /^`spec\.windows\[0\]\.schedule` "0 25 \* \* \*" is not a cron schedule: Invalid value for hour: 25/,
        ),
      ],
    ],
    [
      'a window that never opens',
      `${head}  steps: [{name: a}]\n  windows: [{schedule: "0 9 31 2 *", duration: 8h}]\n`,
      ['`spec.windows[0].schedule` "0 9 31 2 *" names no time that exists (e.g. 31 February)'],
    ],
    [
      'a window without duration',
      `${head}  steps: [{name: a}]\n  windows: [{schedule: "0 9 * * *"}]\n`,
      ['`spec.windows[0].duration` "" is not a duration (e.g. 30m, 8h, 1h30m)'],
    ],
    [
      'a zero-length window',
      `${head}  steps: [{name: a}]\n  windows: [{schedule: "0 9 * * *", duration: 0s}]\n`,
      ['`spec.windows[0].duration` "0s" must be longer than 0'],
    ],
    [
      'an unknown time zone',
      `${head}  steps: [{name: a}]\n  windows: [{schedule: "0 9 * * *", duration: 1h, timeZone: Europe/Berln}]\n`,
      [
        '`spec.windows[0].timeZone` "Europe/Berln" is not a time zone this machine knows (an IANA name, e.g. Europe/Berlin, America/New_York, UTC)',
      ],
    ],
    [
      'an approval without a valid time',
      `${head}  steps: [{name: a}]\nstatus:\n  approvals: [{step: a, revision: r, time: "2025-06-02 09:00"}]\n`,
      [expect.stringMatching(/^`status\.approvals\[0\]\.time` "2025-06-02 09:00" is not an RFC 3339 time/)],
    ],
  ])('%s', (_, yaml, want) => {
    expect(errors(yaml)).toEqual(want)
  })

  test('reports every bad field at once', () => {
    const yaml = `${head}  steps: [{name: a, maxConcurrent: 0}, {name: a}]\n  gates: {soak: soon, approval: never}\n`
    expect(errors(yaml).map((m) => m.split(' ')[0])).toEqual([
      '`spec.steps[0].maxConcurrent`',
      '`spec.steps[1].name`',
      '`spec.gates.soak`',
      '`spec.gates.approval`',
    ])
  })

  test('warns of a step after a step without targets', () => {
    const result = read(`${head}  steps: [{name: rest}, {name: eu, targets: {matchLabels: {region: eu}}}]\n`)
    if (!result.ok) throw new Error('should be valid')
    expect(result.value.warnings).toEqual([
      {
        field: 'spec.steps[1]',
        message:
          '`spec.steps[1]` step "eu" can get no variant: step "rest" before it has no `targets` and takes every variant left',
      },
    ])
  })
})
