/**
 * The acceptance check, through the real kpt: rendering a package whose
 * Kptfile pipeline runs `package-variant` with a `configPath` PackageVariant
 * gives the same files as applying package-context, pipeline-prepend and
 * config-injection one by one with `kpt fn eval`.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { execa } from 'execa'
import { repoRoot } from './e2e/runner.js'
import { readTree } from './support/files.js'

const example = join(repoRoot, 'functions', 'package-variant', 'examples', 'render-for-deployment')
const env = {
  ...process.env,
  KPT_VARIANTS_SOURCES: 'cluster',
  PATH: `${join(repoRoot, 'bin')}${delimiter}${process.env['PATH'] ?? ''}`,
}

/** Every file under `dir` (dot-entries skipped), by relative path. */
async function kpt(cwd: string, ...args: string[]): Promise<void> {
  const run = await execa('kpt', args, { cwd, env, reject: false, stdin: 'ignore' })
  if (run.exitCode !== 0) throw new Error(`kpt ${args.join(' ')} exited ${run.exitCode}:\n${String(run.stderr)}`)
}

describe('package-variant in a Kptfile pipeline', () => {
  let work: string
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'kpt-variants-chain-'))
  })
  afterAll(() => rmSync(work, { recursive: true, force: true }))

  test('kpt fn render equals the three functions applied one by one', async () => {
    const rendered = join(work, 'rendered')
    const stepwise = join(work, 'stepwise')
    cpSync(example, rendered, { recursive: true })
    cpSync(example, stepwise, { recursive: true })
    const before = readTree(rendered)

    await kpt(rendered, 'fn', 'render', '.', '--allow-exec')
    for (const fn of ['package-context', 'pipeline-prepend', 'config-injection']) {
      await kpt(stepwise, 'fn', 'eval', '.', '--exec', fn, '--fn-config', 'pv.yaml')
    }

    const after = readTree(rendered)
    expect(after).toEqual(readTree(stepwise))
    // Each of the three mutations did change something.
    expect(after.get('package-context.yaml')).not.toBe(before.get('package-context.yaml'))
    expect(after.get('Kptfile')).toContain('- name: PackageVariant.nginx-us-east1.region.0')
    expect(after.get('Kptfile')).toContain('reason: ConfigInjected')
    expect(after.get('endpoints.yaml')).toContain('api: https://api.us-east1.example.com')
  }, 60_000)
})
