/**
 * A downstream Kptfile's `upstream.updateStrategy` through `kpt-variants
 * render` (a real process, as render.e2e.test.ts runs it): each package is
 * updated with its own strategy; a refused fast-forward fails that variant
 * alone, in kpt's words.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseValue } from '../functions/krm/yaml/index.js'
import { writeTree } from './support/git-repo.js'
import { createBlueprints, fleetFiles, threeClusters, v2Image } from './support/fleet.js'
import { runCli } from './support/cli-run.js'

interface Report {
  summary: Record<string, number>
  variants: { path?: string; status: string; reasons: { code: string; message: string }[] }[]
}

let dir: string
const clusters = threeClusters.slice(0, 2)

async function render(): Promise<{ exitCode: number; report: Report }> {
  const run = await runCli(dir, ['render', 'fleet', '--out', 'out', '--json'], {
    env: { XDG_CACHE_HOME: join(dir, 'cache') },
  })
  return { exitCode: run.exitCode, report: JSON.parse(run.stdout) as Report }
}

function writeFleet(revision: number): void {
  rmSync(join(dir, 'fleet'), { recursive: true, force: true })
  mkdirSync(join(dir, 'fleet'), { recursive: true })
  writeTree(join(dir, 'fleet'), fleetFiles({ clusters, revision }))
}

/** Sets a rendered downstream's strategy and raises its replicas by hand. */
function editDownstream(cluster: string, strategy: string): void {
  const pkg = join(dir, 'out', cluster, 'nginx')
  const kptfile = readFileSync(join(pkg, 'Kptfile'), 'utf8')
  writeFileSync(join(pkg, 'Kptfile'), kptfile.replace('updateStrategy: resource-merge', `updateStrategy: ${strategy}`))
  const deployment = readFileSync(join(pkg, 'deployment.yaml'), 'utf8')
  writeFileSync(join(pkg, 'deployment.yaml'), deployment.replace('replicas: 2 #', 'replicas: 5 #'))
}

const deployment = (cluster: string) =>
  parseValue(readFileSync(join(dir, 'out', cluster, 'nginx', 'deployment.yaml'), 'utf8')) as {
    spec: { replicas: number; template: { spec: { containers: { image: string }[] } } }
  }

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kpt-variants-strategies-e2e-'))
  await createBlueprints(join(dir, 'repos', 'blueprints'))
  writeFleet(1)
  expect((await render()).exitCode).toBe(0)
}, 30_000)
afterEach(() => rmSync(dir, { recursive: true, force: true }))

test('a fast-forward over local changes fails that variant in kpt words; the other one updates', async () => {
  editDownstream('edge-01', 'fast-forward')
  const before = readFileSync(join(dir, 'out', 'edge-01', 'nginx', 'deployment.yaml'), 'utf8')
  writeFleet(2)
  const { exitCode, report } = await render()
  expect(exitCode).toBe(1)
  const failed = report.variants.find((v) => v.path === 'edge-01/nginx')!
  expect(failed.status).toBe('failed')
  // The PackageVariant's own changes (its package context and injected endpoints) are local changes too, as in kpt and Porch.
  expect(failed.reasons.map((r) => r.code)).toEqual(['MergeConflict'])
  expect(failed.reasons.map((r) => r.message).join('\n')).toMatch(
    /local package files have been modified: \[[^\]]*deployment\.yaml[^\]]*\]\.\n {2}use a different update --strategy\./,
  )
  expect(readFileSync(join(dir, 'out', 'edge-01', 'nginx', 'deployment.yaml'), 'utf8')).toBe(before)
  expect(report.variants.find((v) => v.path === 'edge-02/nginx')!.status).toBe('updated')
}, 30_000)

test('force-delete-replace drops the local edit, and the PackageVariant applies its own changes again', async () => {
  editDownstream('edge-01', 'force-delete-replace')
  writeFleet(2)
  const { exitCode, report } = await render()
  expect({ exitCode, reasons: report.variants.flatMap((v) => v.reasons) }).toEqual({ exitCode: 0, reasons: [] })
  expect(report.summary).toMatchObject({ updated: 2, failed: 0 })
  expect(deployment('edge-01').spec.replicas).toBe(2)
  expect(deployment('edge-01').spec.template.spec.containers[0]!.image).toBe(v2Image)
  expect(
    (parseValue(readFileSync(join(dir, 'out', 'edge-01', 'nginx', 'package-context.yaml'), 'utf8')) as any).data,
  ).toMatchObject({
    cluster: 'edge-01',
  })
  expect(readFileSync(join(dir, 'out', 'edge-01', 'nginx', 'Kptfile'), 'utf8')).toContain(
    'updateStrategy: force-delete-replace',
  )
}, 30_000)
