/**
 * The hostile corpus through every bin/ program's function, in-process (the
 * same runMain a bin calls, with stdin and stdout in memory): each case gives
 * a clear error or a correct result, and the same input the same output.
 * bins.e2e.test.ts runs the cases with crash or memory risks through the real
 * executables, under a time and memory limit.
 */
import { runMain } from '../../functions/krm/main.js'
import type { MainIO } from '../../functions/krm/main.js'
import type { KrmFunction } from '../../functions/krm/run.js'
import { functionPrograms } from '../../scripts/programs.js'
import { functionBins } from '../e2e/runner.js'
import { corpus } from './corpus.js'
import { expectContract } from './invariants.js'

/** bin/<name> → the function it runs (the bundled programs' table), so a new bin joins the corpus by itself. */
const programs = functionBins().map((name) => {
  const program = functionPrograms.find((p) => p.name === name)
  if (!program) throw new Error(`bin/${name}: not in scripts/programs.ts`)
  return { name, exportName: program.fn, dir: name }
})

async function run(fn: KrmFunction, stdin: string | Buffer) {
  const out = { stdout: '', stderr: '' }
  const io: MainIO = {
    readStdin: async () => (typeof stdin === 'string' ? Buffer.from(stdin) : stdin),
    stdinIsTTY: false,
    stdout: (t) => void (out.stdout += t),
    stderr: (t) => void (out.stderr += t),
    env: {},
  }
  const exitCode = await runMain(fn, [], io)
  return { exitCode, ...out }
}

describe.each(programs)('bin/$name', ({ name, exportName, dir }) => {
  let fn: KrmFunction
  beforeAll(async () => {
    fn = ((await import(`../../functions/${dir}/index.js`)) as Record<string, KrmFunction>)[exportName]!
  })

  const cases = corpus.filter((c) => c.process !== 'only' && (c.programs ?? [name]).includes(name))
  test.each(cases)(
    '$name',
    async (hostile) => {
      const input = hostile.input(name)
      const first = await run(fn, input)
      expectContract(hostile, name, first)
      if (input.length > 200_000) return // the large cases only check bounds; determinism is checked on the rest
      const second = await run(fn, input)
      expect(second.stdout).toBe(first.stdout)
    },
    30_000,
  )
})
