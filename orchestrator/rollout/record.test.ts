import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, chmodSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { readRollout } from '../../functions/api/rollout.js'
import type { Rollout } from '../../functions/api/rollout.js'
import { source } from '../../test/support/source.js'
import { rolloutOf } from '../../test/support/rollout.js'
import { buildFleet } from '../fleet/fleet.js'
import { loadFleetDirectory } from '../fleet/load.js'
import { editFleetObject, FleetEditError, keepUntouchedLines } from './fleet-file.js'
import { applyRolloutEdit, planRolloutEdit, rolloutPatches } from './record.js'
import type { RolloutCommand } from './record.js'

const revision = 'nginx/v2@222222222222'
const time = new Date('2025-06-02T09:30:00Z')
const steps = '[{name: canary, targets: {matchLabels: {tier: canary}}}, {name: eu}]'

function plan(rollout: Rollout, command: RolloutCommand) {
  const planned = planRolloutEdit(rollout, command)
  if (!planned.ok) throw new Error(planned.error)
  return planned.edit
}

describe('planRolloutEdit', () => {
  test('approve adds the step for the revision', () => {
    const edit = plan(rolloutOf(`{packageVariantSet: s, steps: ${steps}, gates: {approval: manual}}`), {
      action: 'approve',
      step: 'eu',
      revision,
      time,
    })
    expect(edit).toEqual({
      changed: true,
      message: `approved step eu of rollout edge-monitor for ${revision}`,
      approvals: [{ step: 'eu', revision, time: '2025-06-02T09:30:00Z' }],
    })
  })

  test('approving again changes nothing', () => {
    const rollout = rolloutOf(
      `{packageVariantSet: s, steps: ${steps}}`,
      `{approvals: [{step: eu, revision: "${revision}", time: "2025-06-01T08:00:00Z"}]}`,
    )
    expect(plan(rollout, { action: 'approve', step: 'eu', revision, time })).toEqual({
      changed: false,
      message: `step eu of rollout edge-monitor was already approved for ${revision} at 2025-06-01T08:00:00Z`,
    })
  })

  test('approvals of other revisions are dropped: they can never count for this one, and a rollback to theirs asks again', () => {
    const rollout = rolloutOf(
      `{packageVariantSet: s, steps: ${steps}, gates: {approval: manual}}`,
      `{approvals: [{step: eu, revision: old, time: "2025-05-01T08:00:00Z"}, {step: canary, revision: "${revision}", time: "2025-06-01T08:00:00Z"}]}`,
    )
    expect(plan(rollout, { action: 'approve', step: 'eu', revision, time }).approvals).toEqual([
      { step: 'canary', revision, time: '2025-06-01T08:00:00Z' },
      { step: 'eu', revision, time: '2025-06-02T09:30:00Z' },
    ])
  })

  test('an unknown step is an error naming the steps', () => {
    expect(
      planRolloutEdit(rolloutOf(`{packageVariantSet: s, steps: ${steps}}`), {
        action: 'approve',
        step: 'us',
        revision,
        time,
      }),
    ).toEqual({
      ok: false,
      error: 'rollout edge-monitor has no step "us": its steps are canary, eu',
    })
  })

  test('approving under approval: auto says it has no effect', () => {
    expect(
      plan(rolloutOf(`{packageVariantSet: s, steps: ${steps}}`), { action: 'approve', step: 'eu', revision, time })
        .message,
    ).toBe(
      `approved step eu of rollout edge-monitor for ${revision} (its gates.approval is auto: approvals only count with manual)`,
    )
  })

  test.each([
    ['pause', false, { changed: true, message: 'paused rollout edge-monitor', paused: true }],
    ['pause', true, { changed: false, message: 'rollout edge-monitor is already paused' }],
    ['resume', true, { changed: true, message: 'resumed rollout edge-monitor', paused: false }],
    ['resume', false, { changed: false, message: 'rollout edge-monitor is already running' }],
  ] as const)('%s when paused is %s', (action, paused, want) => {
    expect(plan(rolloutOf(`{packageVariantSet: s, steps: ${steps}, paused: ${paused}}`), { action })).toEqual(want)
  })
})

describe('rolloutPatches', () => {
  test('pause patches the spec; approvals go to the status subresource with the resourceVersion read', () => {
    expect(rolloutPatches({ changed: true, message: '', paused: true })).toEqual([
      { patch: { spec: { paused: true } } },
    ])
    const approvals = [{ step: 'eu', revision, time: '2025-06-02T09:30:00Z' }]
    expect(rolloutPatches({ changed: true, message: '', approvals }, '4711')).toEqual([
      { subresource: 'status', patch: { metadata: { resourceVersion: '4711' }, status: { approvals } } },
    ])
  })
})

describe('editFleetObject', () => {
  const other = source`
    # Not a rollout: kept byte for byte.
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: other}   # flow style
    data: {a: "1"}
  `
  const rolloutText = source`
    # Pace the edge-monitor set.
    apiVersion: kpt-variants.dev/v1alpha1
    kind: Rollout
    metadata: {name: edge-monitor}
    spec:
      packageVariantSet: edge-monitor   # the set
      steps:
      - name: canary
        targets: {matchLabels: {tier: canary}}
      - name: eu   # second
      gates: {approval: manual}
  `
  let dir: string
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'rollout-edit-'))
    writeFileSync(join(dir, 'rollouts.yaml'), `${other}---\n${rolloutText}`)
    chmodSync(join(dir, 'rollouts.yaml'), 0o640)
  })
  afterEach(() => rmSync(dir, { recursive: true, force: true }))

  /** Loads the fleet, runs a command on its Rollout, writes the file; returns the edit. */
  function command(cmd: RolloutCommand, between?: () => void) {
    const fleet = buildFleet(loadFleetDirectory(dir))
    const object = fleet.objects.find((o) => o.kind === 'Rollout')!
    const read = readRollout(object)
    if (!read.ok) throw new Error(read.errors.map((e) => e.message).join('; '))
    const edit = plan(read.value, cmd)
    const ref = {
      apiVersion: object.apiVersion,
      kind: object.kind,
      name: object.name,
      namespace: object.namespace,
      origin: object.origin!,
    }
    const written = editFleetObject(dir, ref, (o) => {
      applyRolloutEdit(o, edit)
      between?.()
    })
    return { edit, written }
  }
  const file = () => readFileSync(join(dir, 'rollouts.yaml'), 'utf8')

  test('approve writes status.approvals into the Rollout, every comment and the other document kept', () => {
    expect(command({ action: 'approve', step: 'eu', revision, time }).written).toBe(true)
    expect(file()).toBe(
      `${other}---\n${rolloutText}status:\n  approvals:\n  - step: eu\n    revision: ${revision}\n    time: "2025-06-02T09:30:00Z"\n`,
    )
    const fleet = buildFleet(loadFleetDirectory(dir))
    const read = readRollout(fleet.objects.find((o) => o.kind === 'Rollout')!)
    expect(read.ok && read.value.approvals).toEqual([{ step: 'eu', revision, time }])
    expect(statSync(join(dir, 'rollouts.yaml')).mode & 0o777).toBe(0o640)
    expect(readdirSync(dir)).toEqual(['rollouts.yaml'])
  })

  test('pause then resume: spec.paused set, the file otherwise unchanged; a repeated command writes nothing', () => {
    command({ action: 'pause' })
    expect(file()).toBe(
      `${other}---\n${rolloutText}`.replace(
        '  gates: {approval: manual}\n',
        '  gates: {approval: manual}\n  paused: true\n',
      ),
    )
    command({ action: 'resume' })
    expect(file()).toBe(
      `${other}---\n${rolloutText}`.replace(
        '  gates: {approval: manual}\n',
        '  gates: {approval: manual}\n  paused: false\n',
      ),
    )
    const before = file()
    expect(command({ action: 'resume' }).written).toBe(false)
    expect(file()).toBe(before)
  })

  test('a file changed during the edit is left as the other writer made it', () => {
    const theirs = `${other}---\n${rolloutText.replace('canary', 'canaries')}`
    expect(() => command({ action: 'pause' }, () => writeFileSync(join(dir, 'rollouts.yaml'), theirs))).toThrow(
      FleetEditError,
    )
    expect(file()).toBe(theirs)
    expect(readdirSync(dir)).toEqual(['rollouts.yaml'])
  })

  test('a JSON file is not rewritten as YAML', () => {
    writeFileSync(join(dir, 'rollouts.yaml'), '')
    writeFileSync(
      join(dir, 'r.json'),
      JSON.stringify({
        apiVersion: 'kpt-variants.dev/v1alpha1',
        kind: 'Rollout',
        metadata: { name: 'edge-monitor' },
        spec: { packageVariantSet: 's', steps: [{ name: 'a' }] },
      }),
    )
    expect(() => command({ action: 'pause' })).toThrow(
      'r.json: Rollout default/edge-monitor is in a JSON file, which this edit would rewrite as YAML: edit it by hand, or move it to a .yaml file',
    )
  })
})

describe('keepUntouchedLines', () => {
  test('takes untouched lines from the file, edited and new ones from the print', () => {
    const original = 'a: 1   # one\nb: 2\n'
    const unedited = 'a: 1 # one\nb: 2\n'
    expect(keepUntouchedLines(original, unedited, 'a: 1 # one\nb: 3\nc: 4\n')).toBe('a: 1   # one\nb: 3\nc: 4\n')
  })

  test('a print that moved lines about stands as printed', () => {
    expect(keepUntouchedLines('a: [1,\n  2]\n', 'a: [ 1, 2 ]\n', 'a: [ 1, 2 ]\nb: 1\n')).toBe('a: [ 1, 2 ]\nb: 1\n')
  })
})
