import { canary, eu, issueRollout, now, oldRevision, revision, rolloutOf, variant } from '../../test/support/rollout.js'
import { concurrencyLimit, evaluateRollout } from './evaluate.js'
import type { RolloutVariant } from './types.js'
import type { Rollout } from '../../functions/api/rollout.js'

function run(rollout: Rollout, variants: RolloutVariant[], at = now, rev = revision) {
  return evaluateRollout({ rollout, revision: rev, variants, now: at })
}

/** Each held variant's reason, by target name. */
function reasons(result: ReturnType<typeof run>): Record<string, string> {
  return Object.fromEntries(
    result.decisions
      .filter((d) => !d.publish)
      .map((d) => [d.key.replace('default/', ''), (d as { reason: string }).reason]),
  )
}

const states = (result: ReturnType<typeof run>) => result.steps.map((s) => `${s.name}:${s.state}`)

/** The fleet of the issue at a new revision: one canary, four in eu, two elsewhere; every variant has a draft. */
function fleet(over: Record<string, Parameters<typeof variant>[1]> = {}): RolloutVariant[] {
  const base: [string, Record<string, string>][] = [
    ['edge-01', canary],
    ['eu-1', eu],
    ['eu-2', eu],
    ['eu-3', eu],
    ['eu-4', eu],
    ['us-1', { region: 'us-east1' }],
    ['us-2', { region: 'us-east1' }],
  ]
  return base.map(([name, labels]) => variant(name, { labels, published: 'old', ...over[name] }))
}

const canaryDone = { draft: false, published: true, ready: 'True' } as const

describe('evaluateRollout', () => {
  test('a canary whose variant cannot be rendered holds its step and every later one, by name', () => {
    const broken = fleet()
    broken[0] = { ...broken[0]!, draft: false, failure: 'downstream repository "edge-01" not found' }
    delete broken[0].published
    const result = run(issueRollout(), broken)
    expect(result.publish).toEqual([])
    expect(states(result)).toEqual(['canary:halted', 'eu:waiting', 'rest:waiting'])
    const why = `edge-01's variant cannot be rendered: downstream repository "edge-01" not found`
    expect(result.steps[0]!.reason).toBe(why)
    expect(reasons(result)['eu-1']).toBe(`waiting: step eu starts after canary renders every variant: ${why}`)
    expect(result).toMatchObject({
      state: 'halted',
      reason: `step canary: ${why}: it and the steps after it wait until every one renders`,
    })
  })

  test('a broken target holds the drafts of its own step too; the steps before it go on', () => {
    const variants = fleet({ 'edge-01': canaryDone })
    variants[2] = { ...variants[2]!, draft: false, failure: 'template.downstream.repoExpr: no such key: site' }
    const result = run(issueRollout(), variants)
    expect(states(result)).toEqual(['canary:done', 'eu:halted', 'rest:waiting'])
    expect(result.publish).toEqual([])
    expect(reasons(result)['eu-1']).toBe(
      "held: step eu: eu-2's variant cannot be rendered: template.downstream.repoExpr: no such key: site",
    )
  })

  test('a target that left the set is no variant: an empty step is done', () => {
    const result = run(
      issueRollout(),
      fleet().filter((v) => v.target.name !== 'edge-01'),
    )
    expect(result.steps[0]).toMatchObject({ state: 'done', reason: 'no variant is in this step' })
  })

  test('a new revision publishes the canary first; the other steps wait for it', () => {
    const result = run(issueRollout(), fleet())
    expect(result.publish).toEqual(['default/edge-01'])
    expect(states(result)).toEqual(['canary:active', 'eu:waiting', 'rest:waiting'])
    expect(reasons(result)).toMatchObject({
      'eu-1': `waiting: step eu starts after canary is published at ${revision}: edge-01 is not yet`,
      'us-1': 'waiting: step rest starts after eu is done',
    })
    expect(result.steps[0]).toMatchObject({
      reason: '0 of 1 published; publishing 1 now',
      publishing: 1,
      variants: ['default/edge-01'],
    })
    expect(result).toMatchObject({ state: 'progressing', rollout: 'default/edge-monitor', unmatched: [] })
  })

  test('the next step waits while the canary has no health condition', () => {
    const result = run(issueRollout(), fleet({ 'edge-01': { draft: false, published: true } }))
    expect(result.publish).toEqual([])
    expect(reasons(result)['eu-1']).toBe(
      'waiting: step eu starts after canary is healthy: edge-01 has no Ready condition',
    )
    expect(result.steps[0]).toMatchObject({
      state: 'active',
      reason: 'waiting for edge-01 has no Ready condition',
      published: 1,
      healthy: 0,
    })
    expect(result.state).toBe('progressing')
  })

  test("a canary whose condition is False halts the rollout, in the issue's words", () => {
    const result = run(issueRollout(), fleet({ 'edge-01': { draft: false, published: true, ready: 'False' } }))
    expect(result.publish).toEqual([])
    expect(reasons(result)['eu-1']).toBe('waiting: step eu starts after canary is healthy: edge-01 Ready is False')
    expect(states(result)).toEqual(['canary:halted', 'eu:waiting', 'rest:waiting'])
    expect(result.steps[0]!.reason).toBe('edge-01 Ready is False: ImagePullBackOff')
    expect(result).toMatchObject({
      state: 'halted',
      reason: 'edge-01 Ready is False: ImagePullBackOff: nothing is published until it recovers',
    })
  })

  test('the next step waits for the soak since the step last published', () => {
    const result = run(issueRollout(), fleet({ 'edge-01': { ...canaryDone, publishedAgo: 12 } }))
    expect(result.publish).toEqual([])
    expect(reasons(result)['eu-1']).toBe(
      'waiting: step eu starts after canary has soaked 30m since its last publish (2025-06-02T09:48:00Z): 18m left',
    )
    expect(result.steps[0]!.reason).toBe('soaking: 18m left of 30m after the last publish (2025-06-02T09:48:00Z)')
  })

  test('once healthy and soaked, the next step publishes at most maxConcurrent (50% of 4)', () => {
    const result = run(issueRollout(), fleet({ 'edge-01': { ...canaryDone, publishedAgo: 30 } }))
    expect(result.publish).toEqual(['default/eu-1', 'default/eu-2'])
    expect(states(result)).toEqual(['canary:done', 'eu:active', 'rest:waiting'])
    expect(reasons(result)['eu-3']).toBe('waiting: step eu publishes at most 2 at once: eu-1 and eu-2 go first')
    expect(result.steps[1]).toMatchObject({ publishing: 2, reason: '0 of 4 published; publishing 2 now' })
  })

  test('a published variant that turns healthy frees its place in the batch', () => {
    const result = run(
      issueRollout(),
      fleet({
        'edge-01': canaryDone,
        'eu-1': { draft: false, published: true, ready: 'True' },
        'eu-2': { draft: false, published: true, ready: 'Unknown' },
      }),
    )
    expect(result.publish).toEqual(['default/eu-3'])
    expect(reasons(result)['eu-4']).toBe(
      'waiting: step eu publishes at most 2 at once: eu-2 is published and not yet healthy; eu-3 goes first',
    )
  })

  test('a failed target inside the active step halts it too', () => {
    const result = run(
      issueRollout(),
      fleet({ 'edge-01': canaryDone, 'eu-1': { draft: false, published: true, ready: 'False' } }),
    )
    expect(result.publish).toEqual([])
    expect(reasons(result)).toMatchObject({
      'eu-2': 'halted: eu-1 Ready is False',
      'us-1': 'waiting: step rest starts after eu is healthy: eu-1 Ready is False',
    })
    expect(states(result)).toEqual(['canary:done', 'eu:halted', 'rest:waiting'])
    expect(result.state).toBe('halted')
  })

  test('a failed target of an earlier step halts the steps after it', () => {
    const result = run(
      issueRollout(),
      fleet({
        'edge-01': { draft: false, published: true, ready: 'False' },
        'eu-1': { draft: false, published: true, ready: 'True' },
      }),
    )
    expect(result.publish).toEqual([])
    expect(reasons(result)['eu-2']).toBe('waiting: step eu starts after canary is healthy: edge-01 Ready is False')
  })

  test('a target failing at the old revision does not halt the new one (a rollback can fix it)', () => {
    const result = run(issueRollout(), fleet({ 'edge-01': { published: 'old', ready: 'False' } }))
    expect(result.publish).toEqual(['default/edge-01'])
    expect(result.state).toBe('progressing')
  })

  test('paused holds everything', () => {
    const result = run(
      issueRollout(undefined, ', paused: true'),
      fleet({ 'edge-01': { ...canaryDone, publishedAgo: 30 } }),
    )
    expect(result.publish).toEqual([])
    expect(reasons(result)['eu-1']).toBe(
      'paused: rollout edge-monitor is paused: `kpt-variants rollout resume edge-monitor` resumes it',
    )
    expect(result.state).toBe('paused')
    expect(states(result)).toEqual(['canary:done', 'eu:active', 'rest:waiting'])
  })

  test('manual approval: a step after the first starts only once approved for this revision', () => {
    const gates = '{soak: 30m, health: {condition: Ready}, approval: manual}'
    const variants = fleet({ 'edge-01': { ...canaryDone, publishedAgo: 30 } })
    const unapproved = run(issueRollout(gates), variants)
    expect(unapproved.publish).toEqual([])
    expect(reasons(unapproved)['eu-1']).toBe(
      'waiting: step eu needs approval: kpt-variants rollout approve edge-monitor eu',
    )
    expect(states(unapproved)).toEqual(['canary:done', 'eu:waiting', 'rest:waiting'])

    const approvedFor = (rev: string) =>
      rolloutOf(
        `{packageVariantSet: s, steps: [{name: canary, targets: {matchLabels: {tier: canary}}}, {name: eu, targets: {matchLabels: {region: eu-west1}}, maxConcurrent: 50%}, {name: rest}], gates: ${gates}}`,
        `{approvals: [{step: eu, revision: "${rev}", time: "2025-06-02T09:59:00Z"}]}`,
      )
    expect(run(approvedFor(revision), variants).publish).toEqual(['default/eu-1', 'default/eu-2'])
    expect(run(approvedFor(oldRevision), variants).publish).toEqual([])
  })

  test('the first step needs no approval', () => {
    expect(run(issueRollout('{approval: manual}'), fleet()).publish).toEqual(['default/edge-01'])
  })

  test('every new upstream revision rolls out from the first step again', () => {
    // Everything is published and healthy at v2; v3 is rendered: drafts everywhere.
    const done = fleet(
      Object.fromEntries(
        ['edge-01', 'eu-1', 'eu-2', 'eu-3', 'eu-4', 'us-1', 'us-2'].map((n) => [
          n,
          { published: true, ready: 'True' as const },
        ]),
      ),
    )
    const result = run(issueRollout(), done, now, 'nginx/v3@333333333333')
    expect(result.publish).toEqual(['default/edge-01'])
    expect(states(result)).toEqual(['canary:active', 'eu:waiting', 'rest:waiting'])
  })

  test('every run after the last step is a no-op', () => {
    const done = fleet(
      Object.fromEntries(
        ['edge-01', 'eu-1', 'eu-2', 'eu-3', 'eu-4', 'us-1', 'us-2'].map((n) => [
          n,
          { draft: false, published: true, ready: 'True' as const },
        ]),
      ),
    )
    const result = run(issueRollout(), done)
    expect(result).toMatchObject({
      publish: [],
      decisions: [],
      state: 'complete',
      reason: `every step is done at ${revision}`,
    })
    expect(states(result)).toEqual(['canary:done', 'eu:done', 'rest:done'])
  })

  test('a variant no step selects is held and listed', () => {
    const rollout = rolloutOf('{packageVariantSet: s, steps: [{name: canary, targets: {matchLabels: {tier: canary}}}]}')
    const result = run(rollout, [variant('edge-01', { labels: canary }), variant('lost', { labels: { tier: 'prod' } })])
    expect(result.publish).toEqual(['default/edge-01'])
    expect(result.unmatched).toEqual(['default/lost'])
    expect(reasons(result)['lost']).toBe(
      'held: no step of rollout edge-monitor selects lost: add a step without `targets` to take the variants no other step selects',
    )
  })

  test('a variant belongs to the first step whose selector matches its target', () => {
    const both = { tier: 'canary', region: 'eu-west1' }
    const result = run(issueRollout(), [variant('edge-01', { labels: both }), variant('eu-1', { labels: eu })])
    expect(result.decisions).toEqual([
      { key: 'default/edge-01', step: 'canary', publish: true },
      expect.objectContaining({ key: 'default/eu-1', step: 'eu', publish: false }),
    ])
  })

  test('a variant without a draft that is not at the revision keeps its step from completing', () => {
    const result = run(issueRollout(), fleet({ 'edge-01': { draft: false, published: 'old' } }))
    expect(result.publish).toEqual([])
    expect(result.steps[0]!.reason).toBe(`0 of 1 published; edge-01 has no draft at ${revision} to publish`)
    expect(reasons(result)['eu-1']).toBe(
      `waiting: step eu starts after canary is published at ${revision}: edge-01 is not yet`,
    )
  })

  test('an empty step is done', () => {
    const result = run(
      issueRollout(),
      fleet({ 'edge-01': { ...canaryDone, publishedAgo: 30 } }).filter((v) => !v.key.startsWith('default/eu')),
    )
    expect(states(result)).toEqual(['canary:done', 'eu:done', 'rest:active'])
    expect(result.publish).toEqual(['default/us-1', 'default/us-2'])
  })

  test('without a health gate, maxConcurrent publishes one batch a run', () => {
    const rollout = rolloutOf('{packageVariantSet: s, steps: [{name: all, maxConcurrent: 1}]}')
    const first = run(rollout, [variant('a'), variant('b')])
    expect(first.publish).toEqual(['default/a'])
    expect(reasons(first)['b']).toBe(
      'waiting: step all publishes at most 1 at once, and without a health gate one batch a run: a goes first',
    )
    expect(run(rollout, [variant('a', { draft: false, published: true }), variant('b')]).publish).toEqual(['default/b'])
  })

  test('a changed draft of a variant already at the revision is paced too (a template change)', () => {
    const result = run(
      issueRollout(),
      fleet({ 'edge-01': { published: true, ready: 'True' }, 'eu-1': { published: true, ready: 'True' } }),
    )
    expect(result.publish).toEqual(['default/edge-01'])
    expect(reasons(result)['eu-1']).toBe(
      `waiting: step eu starts after canary is published at ${revision}: edge-01 is not yet`,
    )
  })

  describe('revisionAnnotation', () => {
    const gates = '{health: {condition: Ready, revisionAnnotation: kpt-variants.dev/running-revision}}'
    const withAnnotation = (value: string | undefined, ready: 'True' | 'False') => {
      const annotations: Record<string, string> =
        value === undefined ? {} : { 'kpt-variants.dev/running-revision': value }
      return run(issueRollout(gates), fleet({ 'edge-01': { draft: false, published: true, ready, annotations } }))
    }

    test.each([
      ['the tag', 'nginx/v2', 'True', []],
      ['the commit', 'c2', 'True', []],
      ['an older tag', 'nginx/v1', 'True', ['edge-01 runs nginx/v1, not nginx/v2']],
      ['none', undefined, 'True', ['edge-01 has no kpt-variants.dev/running-revision annotation']],
    ] as const)('the target reports %s', (_, value, ready, waiting) => {
      const result = withAnnotation(value, ready)
      if (waiting.length === 0) expect(result.publish).toEqual(['default/eu-1', 'default/eu-2'])
      else expect(reasons(result)['eu-1']).toBe(`waiting: step eu starts after canary is healthy: ${waiting[0]}`)
    })

    test('a False condition about the revision the target still runs does not halt', () => {
      const result = withAnnotation('nginx/v1', 'False')
      expect(result.state).toBe('progressing')
      expect(withAnnotation('nginx/v2', 'False').state).toBe('halted')
    })
  })

  describe('windows', () => {
    const berlin = '{schedule: "0 9 * * 1-5", duration: 8h, timeZone: Europe/Berlin}'
    const inWindows = (windows: string) =>
      issueRollout(`{soak: 30m, health: {condition: Ready}}, windows: [${windows}]`)

    test('publishing happens only inside a window', () => {
      // Monday 2 June 2025, 18:30 in Berlin: the window closed at 17:00.
      const closed = run(inWindows(berlin), fleet(), new Date('2025-06-02T16:30:00Z'))
      expect(closed.publish).toEqual([])
      expect(reasons(closed)['edge-01']).toBe(
        "waiting: outside the rollout's windows: the next opens at 2025-06-03T07:00:00Z (2025-06-03 09:00 Europe/Berlin)",
      )
      expect(closed.state).toBe('outside-window')
      expect(run(inWindows(berlin), fleet(), new Date('2025-06-02T07:30:00Z')).publish).toEqual(['default/edge-01'])
    })

    test('a window in Europe/Berlin is not a window in UTC', () => {
      const utc = '{schedule: "0 9 * * 1-5", duration: 8h}'
      // 08:30 UTC is 10:30 in Berlin (summer time): open there, not yet in UTC.
      const at = new Date('2025-06-02T08:30:00Z')
      expect(run(inWindows(berlin), fleet(), at).publish).toEqual(['default/edge-01'])
      expect(run(inWindows(utc), fleet(), at).publish).toEqual([])
      // 16:30 UTC is 18:30 in Berlin: closed there, still open in UTC.
      const late = new Date('2025-06-02T16:30:00Z')
      expect(run(inWindows(berlin), fleet(), late).publish).toEqual([])
      expect(run(inWindows(utc), fleet(), late).publish).toEqual(['default/edge-01'])
    })

    test('any one open window is enough', () => {
      const night = '{schedule: "0 22 * * *", duration: 2h}'
      expect(run(inWindows(`${berlin}, ${night}`), fleet(), new Date('2025-06-02T23:00:00Z')).publish).toEqual([
        'default/edge-01',
      ])
    })
  })
})

describe('concurrencyLimit', () => {
  test.each([
    [undefined, 7, Infinity],
    [{ count: 5 }, 3, 5],
    [{ percent: 50 }, 4, 2],
    [{ percent: 50 }, 3, 1],
    [{ percent: 10 }, 5, 1],
    [{ percent: 100 }, 7, 7],
    [{ percent: 34 }, 100, 34],
  ])('%j of %i variants is %d', (max, variants, want) => {
    expect(concurrencyLimit(max, variants)).toBe(want)
  })
})
