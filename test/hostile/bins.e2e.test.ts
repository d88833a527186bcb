/**
 * The corpus cases with crash, memory or decoding risks through the real
 * executables in bin/: each run ends within a time limit, under a memory cap,
 * with the same contract as in-process (hostile.test.ts runs every case).
 */
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { execa } from 'execa'
import { repoRoot } from '../e2e/runner.js'
import { corpus } from './corpus.js'
import { expectContract } from './invariants.js'

const bins = readdirSync(join(repoRoot, 'bin')).filter((name) => !name.startsWith('.') && name !== 'kpt-variants')
describe.each(bins)('bin/%s', (name) => {
  const cases = corpus.filter((c) => c.process && (c.programs ?? [name]).includes(name))
  test.each(cases)('$name', async (hostile) => {
    const run = await execa(join(repoRoot, 'bin', name), [], {
      input: hostile.input(name),
      reject: false,
      timeout: 30_000,
      env: { NODE_OPTIONS: '--max-old-space-size=512' },
      stripFinalNewline: false,
    })
    expect(run.timedOut).toBe(false)
    expect(run.signal).toBeUndefined()
    expectContract(hostile, name, { exitCode: run.exitCode ?? -1, stdout: String(run.stdout), stderr: String(run.stderr) })
  }, 45_000)
})
