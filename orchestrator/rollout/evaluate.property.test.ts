import fc from 'fast-check'
import { now, revision, rolloutOf, variant } from '../../test/support/rollout.js'
import { concurrencyLimit, evaluateRollout } from './evaluate.js'
import type { RolloutVariant } from './types.js'

const tiers = ['canary', 'a', 'b']
const arbitraryRollout = fc.record({
  selectors: fc.array(fc.constantFrom(...tiers), { minLength: 1, maxLength: 3 }),
  catchAll: fc.boolean(),
  max: fc.option(
    fc.oneof(
      fc.integer({ min: 1, max: 4 }).map(String),
      fc.integer({ min: 1, max: 100 }).map((p) => `"${p}%"`),
    ),
    { nil: undefined },
  ),
  health: fc.boolean(),
  paused: fc.boolean(),
  soak: fc.constantFrom('0s', '30m'),
})
const arbitraryVariant = fc.record({
  tier: fc.constantFrom(...tiers, 'other'),
  draft: fc.boolean(),
  published: fc.constantFrom(false, 'old' as const, true),
  ready: fc.constantFrom(undefined, 'True' as const, 'False' as const, 'Unknown' as const),
  ago: fc.integer({ min: 0, max: 120 }),
})

type RolloutShape = typeof arbitraryRollout extends fc.Arbitrary<infer T> ? T : never
type VariantShape = typeof arbitraryVariant extends fc.Arbitrary<infer T> ? T : never

function build(r: RolloutShape, vs: VariantShape[]) {
  const steps = [...new Set(r.selectors)].map(
    (tier, i) => `{name: s${i}, targets: {matchLabels: {tier: ${tier}}}${r.max ? `, maxConcurrent: ${r.max}` : ''}}`,
  )
  if (r.catchAll) steps.push('{name: rest}')
  const gates = `{soak: ${r.soak}${r.health ? ', health: {condition: Ready}' : ''}}`
  const rollout = rolloutOf(
    `{packageVariantSet: s, steps: [${steps.join(', ')}], gates: ${gates}, paused: ${r.paused}}`,
  )
  const variants: RolloutVariant[] = vs.map((v, i) =>
    variant(`v${String(i).padStart(2, '0')}`, {
      labels: { tier: v.tier },
      draft: v.draft,
      published: v.published,
      ready: v.ready,
      publishedAgo: v.ago,
    }),
  )
  return { rollout, variants }
}

describe('evaluateRollout, for any rollout and fleet', () => {
  test('publishes only in the first step that is not done, within its limit, never while halted or paused', () => {
    fc.assert(
      fc.property(arbitraryRollout, fc.array(arbitraryVariant, { maxLength: 14 }), (r, vs) => {
        const { rollout, variants } = build(r, vs)
        const result = evaluateRollout({ rollout, revision, variants, now })
        const drafts = variants.filter((v) => v.draft).map((v) => v.key)
        // One decision per draft, each held one with a reason.
        expect(result.decisions.map((d) => d.key)).toEqual(drafts)
        for (const d of result.decisions) if (!d.publish) expect(d.reason).not.toBe('')
        if (result.publish.length === 0) return
        expect(result.state).not.toBe('halted')
        expect(rollout.paused).toBe(false)
        const step = result.decisions.find((d) => d.publish)!.step!
        const index = result.steps.findIndex((s) => s.name === step)
        expect(result.decisions.filter((d) => d.publish).every((d) => d.step === step)).toBe(true)
        expect(result.steps.slice(0, index).every((s) => s.state === 'done')).toBe(true)
        expect(result.steps[index]!.state).toBe('active')
        const report = result.steps[index]!
        const inFlight = report.published - report.healthy
        expect(inFlight + result.publish.length).toBeLessThanOrEqual(
          concurrencyLimit(rollout.steps[index]!.maxConcurrent, report.variants.length),
        )
      }),
    )
  })

  test('a failed target at the revision halts everything', () => {
    fc.assert(
      fc.property(arbitraryRollout, fc.array(arbitraryVariant, { maxLength: 14 }), (r, vs) => {
        const { rollout, variants } = build({ ...r, health: true }, vs)
        const result = evaluateRollout({ rollout, revision, variants, now })
        const failing = result.steps.some((s) => s.state === 'halted')
        expect(result.state === 'halted').toBe(failing)
        if (failing) expect(result.publish).toEqual([])
      }),
    )
  })

  test('the order of the variants does not matter', () => {
    fc.assert(
      fc.property(arbitraryRollout, fc.array(arbitraryVariant, { maxLength: 14 }), (r, vs) => {
        const { rollout, variants } = build(r, vs)
        const forward = evaluateRollout({ rollout, revision, variants, now })
        const backward = evaluateRollout({ rollout, revision, variants: [...variants].reverse(), now })
        expect([...backward.publish].sort()).toEqual([...forward.publish].sort())
        expect(backward.steps).toEqual(forward.steps)
      }),
    )
  })
})
