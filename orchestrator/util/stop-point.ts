/**
 * Named points where a run can be held for a test, so that it kills the run
 * exactly there rather than after a guessed delay: with
 * `KPT_VARIANTS_TEST_STOP_AT=<name>` in its environment, a run that reaches
 * point `<name>` says `kpt-variants: stopped at <name>` on stderr (once) and
 * waits there forever. Without it a stop point costs one comparison.
 */
const stopAt = process.env['KPT_VARIANTS_TEST_STOP_AT']
let announced = false

/** The points, in the order a `render --git --publish` reaches them. */
export type StopPoint =
  'rendered' | 'git-trees-written' | 'git-commits-imported' | 'git-pushed' | 'committed' | 'recorded'

/** Holds the run at `name` when the environment asks for it (see above); returns at once otherwise. */
export function stopPoint(name: StopPoint): Promise<void> {
  if (stopAt !== name) return Promise.resolve()
  if (!announced) process.stderr.write(`kpt-variants: stopped at ${name}\n`)
  announced = true
  return new Promise<void>(() => {})
}
