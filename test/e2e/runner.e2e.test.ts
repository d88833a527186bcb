/**
 * The e2e runner holds a case's second run to the first run's expectations:
 * the same stderr, and for a case that is expected to fail the same results
 * (it changed nothing, so it must fail alike). The cases run a small exec
 * function through the real kpt; it keeps a marker outside the package, so its
 * second run differs from its first while the package itself never changes.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { CaseConfig } from './runner.js'

// The runner in update mode (read once, as it loads): the first run writes `.expected/` of a case made here, later
// runs are held to it. The variable goes at once, so nothing else in this process runs in update mode.
process.env['KPT_E2E_UPDATE_EXPECTED'] = 'true'
const { runCase } = await import('./runner.js')
delete process.env['KPT_E2E_UPDATE_EXPECTED']

/**
 * Passes the items through; says (on stderr and as a result) whether it ran
 * before, or the same every run with E2E_SAME; with E2E_FAIL the result is an
 * error and it exits 1.
 */
const functionSource = `#!/usr/bin/env node
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
const input = readFileSync(0, 'utf8')
const again = existsSync(process.env.E2E_STATE)
writeFileSync(process.env.E2E_STATE, '')
const said = process.env.E2E_SAME ? 'every run' : again ? 'a later run' : 'the first run'
process.stderr.write(said + '\\n')
const severity = process.env.E2E_FAIL ? 'error' : 'info'
process.stdout.write((input.endsWith('\\n') ? input : input + '\\n') + 'results:\\n- message: ' + said + '\\n  severity: ' + severity + '\\n')
process.exitCode = process.env.E2E_FAIL ? 1 : 0
`

let root: string

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'kpt-variants-runner-'))
  writeFileSync(join(root, 'fn.mjs'), functionSource)
  chmodSync(join(root, 'fn.mjs'), 0o755)
})

afterEach(() => rmSync(root, { recursive: true, force: true }))

/** A package (Kptfile and a ConfigMap, as kpt writes them) evaluated with the function; `.expected/` starts empty. */
function makeCase(config: Omit<CaseConfig, 'testType' | 'execPath'>, env: Record<string, string> = {}) {
  const dir = join(root, 'case')
  mkdirSync(join(dir, '.expected'), { recursive: true })
  writeFileSync(join(dir, 'Kptfile'), 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n')
  writeFileSync(join(dir, 'cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n')
  const full: CaseConfig = {
    testType: 'eval',
    execPath: join(root, 'fn.mjs'),
    ...config,
    env: { E2E_STATE: join(root, 'state'), ...env },
  }
  return { name: 'runner/case', dir, config: full }
}

describe('e2e runner: the second run', () => {
  test('is checked for the stderr the first run printed', async () => {
    await expect(runCase(makeCase({ stdErr: 'the first run' }))).rejects.toThrow(
      /\(run 2\): stderr does not contain "the first run"/,
    )
  })

  test('of a failing case is checked against the results the first run wrote', async () => {
    await expect(runCase(makeCase({ exitCode: 1 }, { E2E_FAIL: '1' }))).rejects.toThrow(
      /\(run 2\): .*results\.yaml differs/,
    )
  })

  test('passes when it prints and reports what the first run did', async () => {
    await expect(runCase(makeCase({ stdErr: 'every run' }, { E2E_SAME: '1' }))).resolves.toBeUndefined()
    rmSync(join(root, 'case'), { recursive: true })
    await expect(
      runCase(makeCase({ exitCode: 1, stdErr: 'every run' }, { E2E_SAME: '1', E2E_FAIL: '1' })),
    ).resolves.toBeUndefined()
  })

  test('of a succeeding case may report other results (what it changed this time)', async () => {
    await expect(runCase(makeCase({}))).resolves.toBeUndefined()
  })
})
