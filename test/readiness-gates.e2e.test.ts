/**
 * Readiness gates hold publishing, on the README's demo fleet through the CLI
 * with real git repositories: with the us-east1 endpoints gone from the
 * fleet, nginx's required `region-endpoints` injection point is unmet on
 * edge-01 to edge-03, their Kptfile gate `config.injection.ConfigMap.region-
 * endpoints` is False, and no publish path lets those drafts out until the
 * ConfigMap returns (or a person says --force).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDemoFleet } from '../scripts/demo-fleet.js'
import { runCli } from './support/cli-run.js'
import type { Run } from './support/cli-run.js'
import { git } from './support/git-repo.js'

const timeout = 240_000
const gate = 'config.injection.ConfigMap.region-endpoints'
const notReady = `not ready: ${gate} False: no resource matched any injection selector for this injection point`
const east = ['edge-01', 'edge-02', 'edge-03']

let dir: string
let endpoints: string
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kpt-variants-readiness-'))
  await createDemoFleet(dir)
  endpoints = readFileSync(join(dir, 'fleet', 'endpoints.yaml'), 'utf8')
  // The us-east1 endpoints removed from the fleet.
  writeFileSync(
    join(dir, 'fleet', 'endpoints.yaml'),
    endpoints
      .split(/^---\n/m)
      .filter((doc) => !doc.includes('name: us-east1-endpoints'))
      .join('---\n'),
  )
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

function kptVariants(...args: string[]): Promise<Run> {
  return runCli(dir, [...args, '--cache', join(dir, 'cache')])
}

const tags = async (cluster: string) =>
  (await git(join(dir, 'repos', `${cluster}.git`), 'tag', '--list')).split('\n').filter(Boolean)

test(
  'an unready draft is held by publish --fleet, refused when named or by URL, shown by status; published once the ConfigMap returns',
  async () => {
    const render = await kptVariants('render', 'fleet', '--git', '--json')
    expect(render.exitCode).toBe(0)
    const rendered = JSON.parse(render.stdout) as { variants: { path?: string; notReady?: string }[] }
    expect(rendered.variants.filter((v) => v.notReady).map((v) => [v.path, v.notReady])).toEqual(
      east.map((c) => [`${c}/nginx`, notReady]),
    )
    expect(render.stderr).toContain(
      `Not ready (readiness gates not all True: a draft of it is not published):\n  edge-01/nginx: ${notReady}`,
    )

    // The repository's drafts, as publish --fleet takes them: held back, not a failure.
    const fleetPublish = await kptVariants('publish', 'edge-01', '--fleet', 'fleet')
    expect(fleetPublish.exitCode).toBe(0)
    expect(fleetPublish.stderr).toBe(
      `edge-01/nginx: ${notReady}\n\n0 published, 0 removed, 1 held back, 0 not published`,
    )
    // Named, it fails; so does a repository given by URL (no fleet).
    const named = await kptVariants('publish', 'edge-01', 'nginx', '--fleet', 'fleet')
    expect(named.exitCode).toBe(1)
    expect(named.stderr).toContain(`edge-01/nginx: not published: ${notReady}; --force publishes it anyway`)
    const byUrl = await kptVariants('publish', join(dir, 'repos', 'edge-02.git'))
    expect(byUrl.exitCode).toBe(1)
    expect(byUrl.stderr).toBe(`nginx: not published: ${notReady}; --force publishes it anyway`)
    // render --git --publish publishes the nine others and holds these.
    const auto = await kptVariants('render', 'fleet', '--git', '--publish', '--json')
    expect(auto.exitCode).toBe(0)
    const held = (JSON.parse(auto.stdout) as { variants: { path?: string; held?: string }[] }).variants.filter(
      (v) => v.held,
    )
    expect(held.map((v) => [v.path, v.held])).toEqual(east.map((c) => [`${c}/nginx`, notReady]))
    for (const c of east) expect(await tags(c)).toEqual([])
    expect(await tags('edge-04')).toEqual(['nginx/v1'])

    // status says why, as text and as JSON.
    const status = await kptVariants('status', 'fleet')
    expect(status.stderr + status.stdout).toContain(
      `Not ready (not published until every readiness gate is True):\n  edge-01/nginx: ${notReady}\n  edge-02/nginx: ${notReady}\n  edge-03/nginx: ${notReady}`,
    )
    const json = JSON.parse((await kptVariants('status', 'fleet', '--json')).stdout) as {
      variants: { package?: string; notReady?: string }[]
    }
    expect(json.variants.find((v) => v.package === 'edge-02/nginx')!.notReady).toBe(notReady)

    // --force publishes it anyway, and says so.
    const forced = await kptVariants('publish', 'edge-03', 'nginx', '--fleet', 'fleet', '--force')
    expect(forced.exitCode).toBe(0)
    expect(forced.stderr).toContain(`edge-03/nginx: published nginx/v1 although ${notReady} (--force)`)

    // The ConfigMap back: the next render fills the point, the drafts are ready and publish.
    writeFileSync(join(dir, 'fleet', 'endpoints.yaml'), endpoints)
    const filled = await kptVariants('render', 'fleet', '--git', '--json')
    expect(filled.exitCode).toBe(0)
    expect((JSON.parse(filled.stdout) as { variants: { notReady?: string }[] }).variants.some((v) => v.notReady)).toBe(
      false,
    )
    const published = await kptVariants('publish', '--fleet', 'fleet')
    expect(published.exitCode).toBe(0)
    expect(published.stderr).toContain('edge-01/nginx: published nginx/v1')
    expect(published.stderr).toContain('edge-02/nginx: published nginx/v1')
    expect(published.stderr).toContain('edge-03/nginx: published nginx/v2')
    expect(await git(join(dir, 'repos', 'edge-01.git'), 'show', 'nginx/v1:nginx/Kptfile')).toContain(
      `type: ${gate}\n    status: "True"`,
    )
  },
  timeout,
)
