/**
 * Named points where a run can be held for a test, so that it kills the run
 * exactly there, or breaks the world around it there, rather than after a
 * guessed delay: with `KPT_VARIANTS_TEST_STOP_AT=<name>` in its environment,
 * a run that reaches point `<name>` says `kpt-variants: stopped at <name>`
 * on stderr (once) and waits there, every time it reaches the point, until
 * the process receives SIGUSR2: it then says `kpt-variants: resumed at
 * <name>` and goes on, and never stops again. Without it a stop point costs
 * one comparison. The points are on the main thread (a worker thread gets
 * no signal).
 */
const stopAt = process.env['KPT_VARIANTS_TEST_STOP_AT']
/** Resolves once the run may go on: set when the point is first reached. */
let held: Promise<void> | undefined

/**
 * The points, in the order a `render --git --publish` reaches them; then
 * `status-computed`, where `render --cluster` and each controller cycle have
 * written their packages and are about to write status; `watch-listed`,
 * where the controller's watch of a resource has its list and is about to
 * watch from it; and `watches-synced`, where the controller has listed
 * every resource it watches and is about to work out which kinds its sets
 * and variants name.
 */
export type StopPoint =
  | 'rendered'
  | 'git-trees-written'
  | 'git-commits-imported'
  | 'git-pushed'
  | 'committed'
  | 'recorded'
  | 'status-computed'
  | 'watch-listed'
  | 'watches-synced'

/** Holds the run at `name` when the environment asks for it (see above); returns at once otherwise. */
export function stopPoint(name: StopPoint): Promise<void> {
  if (stopAt !== name) return Promise.resolve()
  if (!held) {
    // A pending promise and a signal listener keep no process alive: the run would end there, as if done.
    const alive = setInterval(() => {}, 2 ** 30)
    held = new Promise<void>((resolve) =>
      process.once('SIGUSR2', () => {
        clearInterval(alive)
        process.stderr.write(`kpt-variants: resumed at ${name}\n`)
        resolve()
      }),
    )
    process.stderr.write(`kpt-variants: stopped at ${name}\n`)
  }
  return held
}
