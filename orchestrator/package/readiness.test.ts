import { textFile } from './files.js'
import { kptfileNotReady, notReadyReason } from './readiness.js'

const kptfile = (extra: string) => `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: nginx
${extra}`

describe('notReadyReason', () => {
  test('names each unmet gate with its status and message', () => {
    const text = kptfile(`info:
  readinessGates:
  - conditionType: config.injection.ConfigMap.region-endpoints
  - conditionType: example.com/approved
status:
  conditions:
  - type: config.injection.ConfigMap.region-endpoints
    status: "False"
    reason: NoResourceSelected
    message: no resource matched any injection selector for this injection point
`)
    expect(notReadyReason(new Map([['Kptfile', textFile(text)]]))).toBe(
      'not ready: config.injection.ConfigMap.region-endpoints False: no resource matched any injection selector for this injection point; example.com/approved Unknown: no condition of this type in status.conditions',
    )
  })

  test('a package without gates, or with every gate True, or without a Kptfile, is ready', () => {
    expect(kptfileNotReady(kptfile(''))).toBeUndefined()
    expect(
      kptfileNotReady(
        kptfile(`info:
  readinessGates: [{conditionType: a}]
status:
  conditions: [{type: a, status: "True"}]
`),
      ),
    ).toBeUndefined()
    expect(notReadyReason(new Map())).toBeUndefined()
  })

  test('a Kptfile the plain reader declines (comments, flow style) is parsed: the same answer', () => {
    const plain = kptfile(`info:
  readinessGates:
  - conditionType: a
status:
  conditions:
  - type: a
    status: "False"
    message: m
`)
    const commented = plain
      .replace('info:', '# gates\ninfo: # of the package')
      .replace('- type: a', '- {type: a, status: "False", message: m}')
      .replace(/\n {4}status: "False"\n {4}message: m/, '')
    expect(kptfileNotReady(plain)).toBe('not ready: a False: m')
    expect(kptfileNotReady(commented)).toBe('not ready: a False: m')
  })

  test('an unreadable Kptfile has no gates to meet here (its render reports it)', () => {
    expect(kptfileNotReady('readinessGates: [')).toBeUndefined()
  })
})
