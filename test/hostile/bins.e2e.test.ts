/**
 * The corpus cases with crash, memory or decoding risks through the real
 * executables in bin/: each run ends within a time limit, under a memory cap,
 * with the same contract as in-process (hostile.test.ts runs every case).
 */
import { join } from 'node:path'
import { execa } from 'execa'
import { functionBins, repoRoot } from '../e2e/runner.js'
import { corpus } from './corpus.js'
import type { HostileCase } from './corpus.js'
import { expectContract } from './invariants.js'

const bins = functionBins()
/** Runs one case through a real executable and checks the contract. */
async function runCase(name: string, hostile: HostileCase): Promise<void> {
  const run = await execa(join(repoRoot, 'bin', name), [], {
    input: hostile.input(name),
    reject: false,
    timeout: 60_000,
    env: { NODE_OPTIONS: `--max-old-space-size=${hostile.heapMb ?? 512}` },
    stripFinalNewline: false,
  })
  expect({ case: hostile.name, timedOut: run.timedOut, signal: run.signal }).toEqual({
    case: hostile.name,
    timedOut: false,
    signal: undefined,
  })
  expectContract(hostile, name, {
    exitCode: run.exitCode ?? -1,
    stdout: String(run.stdout),
    stderr: String(run.stderr),
  })
}

// The small cases of one program run side by side: each is a separate process, and the machine has more than one core.
test.each(bins)(
  'bin/%s',
  async (name) => {
    const cases = corpus.filter((c) => c.process === true && (c.programs ?? [name]).includes(name))
    await Promise.all(cases.map((hostile) => runCase(name, hostile)))
  },
  90_000,
)

// The large ones (kept out of jest's slower in-process runtime) one at a time.
const large = bins.flatMap((name) =>
  corpus
    .filter((c) => c.process === 'only' && (c.programs ?? [name]).includes(name))
    .map((hostile) => ({ name, hostile })),
)
test.each(large)('bin/$name: $hostile.name', async ({ name, hostile }) => runCase(name, hostile), 90_000)
