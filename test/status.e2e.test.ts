/**
 * `kpt-variants status --out DIR` end to end on the demo fleet (examples/fleet,
 * laid out as `npm run demo` does), through the CLI: after the README's
 * render, after a hand edit, after the set moves to revision 2, after a
 * variant fails, with another cache, after `render --force`; as text, as
 * `--json` and as the fleet page. Each test builds on the one before.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { RunReport } from '../orchestrator/report/report.js'
import type { FleetStatus, VariantStatusRow } from '../orchestrator/status/fleet-status.js'
import { createDemoFleet } from '../scripts/demo-fleet.js'
import { runCli } from './support/cli-run.js'

const timeout = 120_000
const clusters = Array.from({ length: 12 }, (_, i) => `edge-${String(i + 1).padStart(2, '0')}`)
let dir: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kpt-variants-status-'))
  await createDemoFleet(dir)
  const first = await kptVariants('render', 'fleet', '--out', 'rendered')
  expect(first.exitCode).toBe(0)
}, timeout)
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function kptVariants(...args: string[]) {
  const cache = args.includes('--cache') ? [] : ['--cache', join(dir, 'cache')]
  return runCli(dir, [...args, ...cache], { baseEnv: process.env, env: { NO_COLOR: '1' } })
}

/** `status fleet --out rendered --json`, its exit code and rows by package. */
async function status(
  ...extra: string[]
): Promise<{ exitCode: number | undefined; status: FleetStatus; rows: Map<string, VariantStatusRow> }> {
  const run = await kptVariants('status', 'fleet', '--out', 'rendered', '--json', ...extra)
  expect(run.stderr).toBe('')
  const parsed = JSON.parse(run.stdout) as FleetStatus
  return { exitCode: run.exitCode, status: parsed, rows: new Map(parsed.variants.map((r) => [r.package!, r])) }
}

/** `sed -i s/from/to/ file` */
function edit(file: string, from: string, to: string): void {
  const path = join(dir, file)
  const text = readFileSync(path, 'utf8')
  if (!text.includes(from)) throw new Error(`${file} has no ${from}`)
  writeFileSync(path, text.replace(from, to))
}

const nginx = (cluster: string) => `${cluster}/nginx`
/** edge-06 to edge-12 had no cert-manager: the first render installed it (README, docs/package-dependencies.md). */
const installedThere = clusters.slice(5)

test(
  "after the README's render: every variant current and unedited, the dependencies it installed with their version, each repository's graph as render's",
  async () => {
    const { exitCode, status: fleet, rows } = await status()
    expect(exitCode).toBe(0)
    expect(fleet.output).toBe('directory')
    for (const c of clusters) {
      expect(rows.get(nginx(c))).toEqual({
        variant: `default/nginx-${c}-nginx`,
        package: nginx(c),
        upstream: 'blueprints/nginx v1 (nginx/v1)',
        renderedUpstream: 'nginx/v1',
        state: 'current',
        localEdits: 'none',
      })
    }
    expect(fleet.variants.filter((r) => r.variant.startsWith('Dependency ')).map((r) => r.package)).toEqual(
      installedThere.map((c) => `${c}/cert-manager`),
    )
    expect(rows.get('edge-06/cert-manager')).toEqual({
      variant: 'Dependency edge-06/cert-manager',
      package: 'edge-06/cert-manager',
      renderedUpstream: 'cert-manager/v2',
      state: 'installed',
      dependency: { name: 'cert-manager', version: 'v1.14.4' },
      localEdits: 'none',
    })
    // The graph of what the directory holds is the one render draws of it.
    const preview = await kptVariants('render', 'fleet', '--out', 'rendered', '--dry-run', '--json')
    const report = JSON.parse(preview.stdout) as RunReport
    expect(fleet.repositories).toEqual(report.dependencies!.map(({ name, packages }) => ({ name, packages })))
    expect(fleet.repositories.find((r) => r.name === 'edge-06')!.packages).toEqual([
      { name: 'cert-manager', version: 'v1.14.4', installedAsDependency: true, requires: [] },
      {
        name: 'nginx',
        version: 'v1.0.0',
        installedAsDependency: false,
        requires: [{ name: 'cert-manager', range: '>= v1.12.0' }],
      },
    ])

    const text = await kptVariants('status', 'fleet', '--out', 'rendered')
    expect(text.stdout.split('\n').slice(0, 2)).toEqual([
      'PACKAGE               VARIANT                          EDITS  UPSTREAM',
      'edge-01/nginx         default/nginx-edge-01-nginx      none   current: blueprints/nginx v1 (nginx/v1)',
    ])
    expect(text.stdout).toContain(
      '\nedge-06/cert-manager  Dependency edge-06/cert-manager  none   installed: cert-manager v1.14.4 (cert-manager/v2)\n',
    )
    // Without --out, status reads git as before: nothing there yet.
    const git = JSON.parse((await kptVariants('status', 'fleet', '--json')).stdout) as FleetStatus
    expect([git.output, new Set(git.variants.map((r) => r.state))]).toEqual(['git', new Set(['unpublished'])])
  },
  timeout,
)

test(
  'a hand edit shows as a local edit; moving the set to revision 2 puts every variant behind',
  async () => {
    edit('rendered/edge-01/nginx/deployment.yaml', 'replicas: 2', 'replicas: 5')
    const edited = await status()
    expect(clusters.map((c) => edited.rows.get(nginx(c))!.localEdits)).toEqual([
      'edited',
      ...clusters.slice(1).map(() => 'none'),
    ])

    edit('fleet/nginx-set.yaml', 'revision: 1', 'revision: 2')
    const behind = await status()
    expect(behind.exitCode).toBe(0)
    for (const c of clusters)
      expect(behind.rows.get(nginx(c))).toMatchObject({
        state: 'behind',
        renderedUpstream: 'nginx/v1',
        upstream: 'blueprints/nginx v2 (nginx/v2)',
      })
    expect(behind.rows.get(nginx('edge-01'))!.localEdits).toBe('edited')
    const text = await kptVariants('status', 'fleet', '--out', 'rendered')
    expect(text.stdout).toContain(
      '\nedge-01/nginx         default/nginx-edge-01-nginx      edited  behind: nginx/v1 -> blueprints/nginx v2 (nginx/v2)\n',
    )
  },
  timeout,
)

test(
  "a variant that failed: its failure from the directory's record, exit code 1, its edits unknown; the render absorbed the others' edits",
  async () => {
    // edge-02's image edited by hand while nginx v2 changes it too: a conflict, which --on-conflict fail makes a failure.
    edit('rendered/edge-02/nginx/deployment.yaml', 'image: nginx:1.25.5', 'image: nginx:1.25.5-alpine')
    const render = await kptVariants('render', 'fleet', '--out', 'rendered', '--on-conflict', 'fail')
    expect(render.exitCode).toBe(1)
    const { exitCode, rows } = await status()
    expect(exitCode).toBe(1)
    expect(rows.get(nginx('edge-02'))).toMatchObject({
      state: 'behind',
      localEdits: 'unknown',
      localEditsReason: 'the cache holds no record of its last render',
      lastFailure: expect.stringMatching(
        /^\d{4}-\d\d-\d\dT[\d:.]+Z: 3-way merge failed; conflict in deployment\.yaml Deployment web\/nginx .*image/,
      ),
    })
    for (const c of clusters.filter((c) => c !== 'edge-02'))
      expect(rows.get(nginx(c))).toMatchObject({ state: 'current', renderedUpstream: 'nginx/v2', localEdits: 'none' })
    for (const [, row] of rows) if (row.package !== nginx('edge-02')) expect(row.lastFailure).toBeUndefined()
    const text = await kptVariants('status', 'fleet', '--out', 'rendered')
    expect(text.exitCode).toBe(1)
    expect(text.stdout).toMatch(
      /\nLast failures:\n {2}edge-02\/nginx: \S+: 3-way merge failed; conflict in deployment\.yaml/,
    )
    expect(text.stdout).toMatch(
      /\nLocal edits unknown:\n {2}1 package\(s\): the cache holds no record of its last render$/,
    )

    // The directory's failures are its own: not the fleet's in git, nor another cache's.
    const git = JSON.parse((await kptVariants('status', 'fleet', '--json')).stdout) as FleetStatus
    expect(git.variants.filter((r) => r.lastFailure)).toEqual([])
    const elsewhere = await status('--cache', join(dir, 'other-cache'))
    expect(elsewhere.exitCode).toBe(0)
    expect(new Set([...elsewhere.rows.values()].map((r) => [r.localEdits, r.localEditsReason].join(': ')))).toEqual(
      new Set(['unknown: the cache holds no record of its last render']),
    )
  },
  timeout,
)

test(
  'render --force records what it left: an edit it kept is no longer a local edit',
  async () => {
    edit('rendered/edge-03/nginx/deployment.yaml', 'replicas: 2', 'replicas: 4')
    expect((await status()).rows.get(nginx('edge-03'))!.localEdits).toBe('edited')
    // The edit is kept (a 3-way merge from the same upstream), and the package recorded as it is now.
    expect(
      (await kptVariants('render', 'fleet', '--out', 'rendered', '--force', '--on-conflict', 'fail')).exitCode,
    ).toBe(1)
    expect(readFileSync(join(dir, 'rendered/edge-03/nginx/deployment.yaml'), 'utf8')).toContain('replicas: 4')
    expect((await status()).rows.get(nginx('edge-03'))!.localEdits).toBe('none')
  },
  timeout,
)

test(
  "--html writes the fleet page of the same status: its states, and the repositories' graphs as read",
  async () => {
    const run = await kptVariants('status', 'fleet', '--out', 'rendered', '--json', '--html', 'status.html')
    expect(run.exitCode).toBe(1)
    expect(run.stderr).toBe(`fleet page: ${join(dir, 'status.html')}`)
    const fleet = JSON.parse(run.stdout) as FleetStatus
    const html = readFileSync(join(dir, 'status.html'), 'utf8')
    const embedded = new RegExp('<script id="fleet-model" type="application/json">(.*?)</script>', 's').exec(html)![1]!
    const model = JSON.parse(embedded) as { title: string; variants: { state: string }[]; repositories: unknown }
    expect(model.title).toBe('kpt-variants status fleet --out rendered')
    const states: Record<string, number> = {}
    for (const v of model.variants) states[v.state] = (states[v.state] ?? 0) + 1
    expect(states).toEqual({ failed: 1, current: 11, installed: installedThere.length })
    expect(model.repositories).toEqual(fleet.repositories)

    const nowhere = await kptVariants('status', 'fleet', '--out', 'no-such-dir')
    expect([nowhere.exitCode, nowhere.stderr]).toEqual([2, 'kpt-variants: --out no-such-dir is not a directory'])
  },
  timeout,
)
