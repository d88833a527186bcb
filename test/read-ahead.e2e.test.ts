/**
 * A run that reads the variants' packages before rendering them (a --force
 * re-render, an upstream update) reads them on a second thread, ahead of the
 * render (orchestrator/output/directory/read-ahead.ts). Each variant must get its own
 * package, whatever the thread read before: one edited locally, one deleted
 * in the middle of the fleet, all through a re-render and an update.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { clusterName, createFleet, setText } from '../bench/fleet-fixture.js'
import { filesBelow } from './e2e/runner.js'
import { runCliOk } from './support/cli-run.js'

// Enough for the thread: it starts with 16 or more packages left after the first one found.
const variants = 40

/** Every file below `dir` with its text. */
function tree(dir: string): Record<string, string> {
  return Object.fromEntries(filesBelow(dir).map((path) => [path, readFileSync(join(dir, path), 'utf8')]))
}

let dir: string
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test('a re-render with --force and an upstream update give each variant its own package', async () => {
  dir = mkdtempSync(join(tmpdir(), 'kpt-variants-read-ahead-'))
  await createFleet(dir, { variants, resources: 8 })
  const render = async (...extra: string[]) => {
    const run = await runCliOk(dir, ['render', 'fleet', '--out', 'out', '--json', '--no-progress', ...extra], {
      env: { XDG_CACHE_HOME: join(dir, 'cache') },
    })
    return JSON.parse(run.stdout) as { summary: Record<string, number>; variants: { path: string; status: string }[] }
  }
  const out = join(dir, 'out')
  expect((await render()).summary.created).toBe(variants)
  const rendered = tree(out)

  // A file of the downstream's own in one package, and another package deleted.
  const local =
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: local\n  namespace: app\ndata:\n  owner: edge-team\n'
  writeFileSync(join(out, clusterName(5), 'app', 'local.yaml'), local)
  rmSync(join(out, clusterName(30)), { recursive: true })

  const forced = await render('--force')
  expect(forced.summary).toMatchObject({ created: 1, updated: 0, unchanged: variants - 1, failed: 0 })
  expect(forced.variants.find((v) => v.status === 'created')?.path).toBe(`${clusterName(30)}/app`)
  expect(tree(out)).toEqual({ ...rendered, [`${clusterName(5)}/app/local.yaml`]: local })

  writeFileSync(join(dir, 'fleet', 'set.yaml'), setText(2))
  const updated = await render()
  expect(updated.summary).toMatchObject({ updated: variants, failed: 0 })
  for (let i = 0; i < variants; i++) {
    const pkg = join(out, clusterName(i), 'app')
    expect(readFileSync(join(pkg, 'package-context.yaml'), 'utf8')).toContain(`cluster: ${clusterName(i)}\n`)
    expect(readFileSync(join(pkg, 'Kptfile'), 'utf8')).toContain('ref: app/v2\n')
    expect(existsSync(join(pkg, 'local.yaml'))).toBe(i === 5)
  }
  // Kept, and marked as kpt marks every resource after an update.
  expect(readFileSync(join(out, clusterName(5), 'app', 'local.yaml'), 'utf8')).toMatch(
    /^metadata: # kpt-merge: app\/local\n {2}name: local\n[\s\S]*owner: edge-team\n$/m,
  )
}, 120_000)
