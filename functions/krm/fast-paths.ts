/**
 * The fast paths: code that gives byte for byte what a plainer way gives,
 * sooner. Each can be turned off, for an oracle and for measuring it:
 * `KPT_VARIANTS_NO_FAST_PATHS=all` runs the plain way everywhere (CI runs the
 * unit suite once so: a fast path that changed output fails it), and a list
 * of names (`spawner,memo`) turns off those (`npm run bench` measures each
 * against its absence in the same run: bench/RESULTS.md, "Fast paths").
 *
 * - `yaml`: the YAML layer's own readers, printers and caches
 *   (functions/krm/yaml/: the plain reader, the simple printer, repeated
 *   parses, items kept as text); off, the `yaml` library parses and prints
 *   everything;
 * - `threads`: render threads; off, one thread renders the fleet;
 * - `stat-thread`, `read-ahead`, `staging-thread`: packages digested, read and
 *   staged on threads of their own; off, on the thread that needs them;
 * - `spawner`: git started by a helper process; off, by this one;
 * - `memo`: the record of earlier renders answers for unchanged variants;
 *   off, every variant is rendered again and compared (as `--force`);
 * - `quiet-run`: a run in which nothing can have changed answered from its
 *   record; off, never.
 *
 * Output never depends on the switch; only time does.
 */
export const fastPathNames = [
  'yaml',
  'threads',
  'stat-thread',
  'read-ahead',
  'staging-thread',
  'spawner',
  'memo',
  'quiet-run',
] as const

export type FastPath = (typeof fastPathNames)[number]

const variable = 'KPT_VARIANTS_NO_FAST_PATHS'

/** The fast paths `value` (the variable's) turns off; an unknown name is an error, not a path silently left on. */
export function parseFastPathsOff(value: string | undefined): ReadonlySet<FastPath> {
  const names = (value ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean)
  if (names.includes('all')) return new Set(fastPathNames)
  for (const name of names)
    if (!(fastPathNames as readonly string[]).includes(name))
      throw new Error(
        `${variable}: unknown fast path ${JSON.stringify(name)} (known: all, ${fastPathNames.join(', ')})`,
      )
  return new Set(names as FastPath[])
}

let off: ReadonlySet<FastPath> | undefined

/** Whether fast path `name` is on (read once from the environment; threads inherit it). */
export function fastPath(name: FastPath): boolean {
  off ??= parseFastPathsOff(globalThis.process?.env?.[variable])
  return !off.has(name)
}

/** Sets which fast paths are off, whatever the environment says: the tests of a fast path itself test it on. */
export function setFastPathsOff(names: Iterable<FastPath>): void {
  off = new Set(names)
}
