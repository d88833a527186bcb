/**
 * The reports people read, end to end on the demo fleet (examples/fleet, laid
 * out as `npm run demo` does): the pull-request summary of the README's
 * upgrade step, rendered as GitHub-flavoured Markdown, and the fleet page
 * opened in a real Chromium (test/support/browser.ts), checked against the
 * `--json` report of the same run.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { micromark } from 'micromark'
import { gfm, gfmHtml } from 'micromark-extension-gfm'
import type { Page } from 'playwright-core'
import { countStates } from '../orchestrator/page/view.js'
import { modelFromReport, modelFromStatus } from '../orchestrator/page/model.js'
import { pageStates } from '../orchestrator/page/types.js'
import { commentLimit } from '../orchestrator/report/markdown.js'
import type { RunReport } from '../orchestrator/report/report.js'
import { createDemoFleet } from '../scripts/demo-fleet.js'
import { launchChromium, testWithChromium } from './support/browser.js'
import { runCli } from './support/cli-run.js'
import type { Run } from './support/cli-run.js'

const timeout = 120_000
let dir: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kpt-variants-reports-'))
  await createDemoFleet(dir)
  const first = await kptVariants('render', 'fleet', '--out', 'rendered')
  expect(first.exitCode).toBe(0)
}, timeout)
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function kptVariants(...args: string[]): Promise<Run> {
  return runCli(dir, [...args, '--cache', join(dir, 'cache')], { baseEnv: process.env, env: { NO_COLOR: '1' } })
}

/** `sed -i s/from/to/ file` */
function edit(file: string, from: string, to: string): void {
  const path = join(dir, file)
  const text = readFileSync(path, 'utf8')
  if (!text.includes(from)) throw new Error(`${file} has no ${from}`)
  writeFileSync(path, text.replace(from, to))
}

/** README "Render a fleet", steps 1 and 2: a downstream edit, and the set moved to revision 2 (once: the tests build on each other). */
function readmeUpgradeStep(): void {
  if (readFileSync(join(dir, 'fleet', 'nginx-set.yaml'), 'utf8').includes('revision: 2')) return
  edit('rendered/edge-01/nginx/deployment.yaml', 'replicas: 2', 'replicas: 5')
  edit('fleet/nginx-set.yaml', 'revision: 1', 'revision: 2')
}

const gfmToHtml = (md: string) =>
  micromark(md, { allowDangerousHtml: true, extensions: [gfm()], htmlExtensions: [gfmHtml()] })

test(
  "the summary of the README's upgrade step is one comment that GitHub renders as a table and a collapsed diff per variant",
  async () => {
    readmeUpgradeStep()
    const run = await kptVariants('render', 'fleet', '--out', 'rendered', '--dry-run', '--diff', '--format', 'markdown')
    expect(run.exitCode).toBe(0)
    const md = run.stdout
    expect(md.length).toBeLessThanOrEqual(commentLimit)
    const html = gfmToHtml(md)
    expect(html).toContain(
      'Dry run (nothing written): 12 variant(s): <strong>0</strong> created, <strong>12</strong> updated',
    )
    const table = /<table>[\s\S]*?<\/table>/.exec(html)![0]
    // The header, the 12 variants, and edge-05's cert-manager, which nginx v2 needs upgraded (it was installed outside git).
    expect(table.match(/<tr>/g)).toHaveLength(14)
    expect(html).toContain(
      'edge-05: upgrade cert-manager v1.12.3 -&gt; v1.14.4 (installed outside git until now), required by nginx &gt;=1.13.0',
    )
    expect(table).toContain('<td>updated</td>\n<td><code>edge-07/nginx</code></td>')
    // Every diff, whole (nothing cut: it fits), each in its own collapsed block.
    const blocks = [
      ...html.matchAll(
        /<details>\n<summary><code>(edge-\d+)\/nginx<\/code> updated: 5 file\(s\), [^<]*<\/summary>\n<pre><code class="language-diff">([\s\S]*?)<\/code><\/pre>\n<\/details>/g,
      ),
    ]
    expect(blocks.map((b) => b[1]).sort()).toEqual(
      Array.from({ length: 12 }, (_, i) => `edge-${String(i + 1).padStart(2, '0')}`),
    )
    expect(html).not.toContain('To stay within')
    const edge01 = blocks.find((b) => b[1] === 'edge-01')![2]!
    expect(edge01).toContain('+        image: nginx:1.27.3')
    expect(edge01).toContain('+++ b/edge-01/nginx/pdb.yaml')
    // The same diffs --diff prints as text.
    const text = await kptVariants('render', 'fleet', '--out', 'rendered', '--dry-run', '--diff')
    expect(
      text.stdout.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;'),
    ).toContain(edge01)
    console.log(`markdown summary of the README's upgrade step: ${md.length} characters (limit ${commentLimit})`)
  },
  timeout,
)

test(
  'a report nobody could read is a usage error: both on stdout, a page in no directory',
  async () => {
    const both = await kptVariants(
      'render',
      'fleet',
      '--out',
      'rendered',
      '--dry-run',
      '--json',
      '--format',
      'markdown',
    )
    expect([both.exitCode, both.stderr]).toEqual([
      2,
      'kpt-variants: --format markdown and --json both print on stdout: give one',
    ])
    const nowhere = await kptVariants(
      'render',
      'fleet',
      '--out',
      'rendered',
      '--dry-run',
      '--report',
      'no/such/dir/fleet.html',
    )
    expect([nowhere.exitCode, nowhere.stderr]).toEqual([
      2,
      `kpt-variants: --report ${join(dir, 'no/such/dir/fleet.html')}: directory ${join(dir, 'no/such/dir')} does not exist`,
    ])
    const status = await kptVariants('status', 'fleet', '--html', 'fleet')
    expect([status.exitCode, status.stderr]).toEqual([2, `kpt-variants: --html ${join(dir, 'fleet')} is a directory`])
  },
  timeout,
)

/** The counts the page shows, per state. */
async function pageCounts(page: Page): Promise<Record<string, number>> {
  return page.$$eval('#counts [data-state]', (chips) =>
    Object.fromEntries(
      chips.map((c) => [(c as HTMLElement).dataset['state'], Number(c.querySelector('b')!.textContent)]),
    ),
  )
}

async function cellsByState(page: Page): Promise<Record<string, number>> {
  const classes = await page.$$eval('#matrix-body .cell:not(.empty)', (cells) => cells.map((c) => c.className))
  const counts: Record<string, number> = {}
  for (const c of classes) {
    const state = /s-(\w+)/.exec(c)![1]!
    counts[state] = (counts[state] ?? 0) + 1
  }
  return counts
}

const nonZero = (counts: Record<string, number>) => Object.fromEntries(Object.entries(counts).filter(([, n]) => n > 0))

const browserTest = testWithChromium()

browserTest(
  'the fleet page shows the counts --json reports, filters, and opens a variant with its diff',
  async () => {
    readmeUpgradeStep()
    // The upgrade plus a conflict, a cluster relabelled out of the set, and a PackageVariant whose revision does not exist.
    edit('rendered/edge-02/nginx/deployment.yaml', 'image: nginx:1.25.5', 'image: nginx:1.25.5-alpine')
    const clusters = readFileSync(join(dir, 'fleet', 'clusters.yaml'), 'utf8')
    writeFileSync(
      join(dir, 'fleet', 'clusters.yaml'),
      clusters.replace(/(name: edge-12\n[\s\S]*?nephio.org\/site-type:) edge/, '$1 core'),
    )
    writeFileSync(
      join(dir, 'fleet', 'broken.yaml'),
      'apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: broken\n  namespace: default\nspec:\n  upstream: {repo: blueprints, package: nginx, revision: 9}\n  downstream: {repo: edge-03, package: broken}\n',
    )
    const run = await kptVariants(
      'render',
      'fleet',
      '--out',
      'rendered',
      '--dry-run',
      '--json',
      '--report',
      'fleet.html',
    )
    expect(run.exitCode).toBe(1)
    expect(run.stderr).toContain(`fleet page: ${join(dir, 'fleet.html')}`)
    const report = JSON.parse(run.stdout) as RunReport & { summary: Record<string, number> }
    // Beside the variants: edge-05's cert-manager put in git (nginx v2 needs it newer), edge-12's orphaned (nothing needs it; the catalog says orphan).
    expect(report.summary).toMatchObject({ created: 1, updated: 11, deleted: 1, orphaned: 1, failed: 1 })
    const expected = nonZero(
      countStates(
        modelFromReport(report, '').variants,
        report.variants.map((_, i) => i),
      ),
    )
    expect(expected).toEqual({ failed: 1, conflicts: 1, updated: 10, deleted: 1, created: 1, orphaned: 1 })
    expect(statSync(join(dir, 'fleet.html')).size).toBeLessThan(1_000_000)

    const browser = await launchChromium()
    try {
      const page = await browser.context.newPage()
      const errors: string[] = []
      page.on('pageerror', (e) => errors.push(e.message))
      page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())))
      // Nothing but the file itself is loaded.
      const requests: string[] = []
      page.on('request', (r) => void requests.push(r.url()))
      await page.goto(`file://${join(dir, 'fleet.html')}`)
      await page.waitForSelector('html[data-ready]')
      expect(nonZero(await pageCounts(page))).toEqual(expected)
      expect(await cellsByState(page)).toEqual(expected)
      expect(await page.textContent('#shown')).toBe('15 of 15 package(s) in 12 repositories')

      // Filters: a state, then a repository prefix, then the search; the counts follow.
      await page.click('#counts [data-state="updated"]')
      expect(await cellsByState(page)).toEqual({ updated: 10 })
      await page.fill('#repo', 'edge-0*')
      expect(await cellsByState(page)).toEqual({ updated: 8 })
      await page.click('#counts [data-state="updated"]')
      // edge-05's cert-manager among them.
      expect(await cellsByState(page)).toEqual({ updated: 8, conflicts: 1, failed: 1, created: 1 })
      await page.fill('#search', 'broken')
      expect(await cellsByState(page)).toEqual({ failed: 1 })
      await page.click('#matrix-body .cell.s-failed')
      expect(await page.textContent('#detail')).toContain('could not find upstream package revision')
      await page.fill('#search', '')
      await page.fill('#repo', '')
      await page.selectOption('#label', 'config.porch.kpt.dev/packagevariantset=nginx')
      // The deleted package's PackageVariant is gone, and with it its labels.
      expect(await cellsByState(page)).toEqual({ updated: 10, conflicts: 1 })
      await page.selectOption('#label', '')

      // A variant: its detail, and its diff drawn by diff2html, highlighted, unified then side by side.
      await page.click('#matrix-body .row:has(.repo[title="edge-02"]) .cell')
      const detail = page.locator('#detail')
      await page.waitForSelector('#diff[data-drawn="line-by-line"]')
      expect(await detail.textContent()).toContain('conflicts')
      expect(await detail.locator('table.conflicts td').allTextContents()).toEqual(
        expect.arrayContaining(['nginx:1.25.5-alpine', 'nginx:1.27.3', 'nginx:1.25.5', 'upstream']),
      )
      expect(await detail.locator('.d2h-file-name').allTextContents()).toContain('edge-02/nginx/pdb.yaml')
      expect(await detail.locator('.d2h-ins .d2h-code-line-ctn').allTextContents()).toContain(
        '# Keep one replica up during node drains (new in v2).',
      )
      expect(await detail.locator('.d2h-ins .hljs-attr').count()).toBeGreaterThan(0)
      // edge-02's graph: nginx, and the cert-manager it needs (installed there outside git).
      expect(await detail.locator('svg.graph .node').count()).toBe(2)
      await page.click('#diff-format')
      await page.waitForSelector('#diff[data-drawn="side-by-side"]')
      expect(await detail.locator('.d2h-file-side-diff').count()).toBeGreaterThan(0)
      expect(errors).toEqual([])
      expect(requests.filter((u) => u !== `file://${join(dir, 'fleet.html')}`)).toEqual([])
    } finally {
      await browser.close()
    }
  },
  timeout,
)

browserTest(
  'status --html shows drafts and published revisions as status --json reports them',
  async () => {
    rmSync(join(dir, 'fleet', 'broken.yaml'), { force: true })
    expect((await kptVariants('render', 'fleet', '--git')).exitCode).toBe(0)
    expect((await kptVariants('publish', 'edge-01', '--fleet', 'fleet')).exitCode).toBe(0)
    const status = await kptVariants('status', 'fleet', '--json', '--html', 'status.html')
    expect(status.exitCode).toBe(0)
    const rows = JSON.parse(status.stdout) as { variants: Parameters<typeof modelFromStatus>[0]['variants'] }
    const expected = nonZero(
      countStates(
        modelFromStatus(rows, '').variants,
        rows.variants.map((_, i) => i),
      ),
    )
    // 11 variants (edge-12 is out of the set), and the cert-manager drafts of edge-06 to edge-11 (nginx needs it).
    expect(expected).toEqual({ draft: 16, published: 1 })
    expect(rows.variants.filter((r) => r.variant.startsWith('Dependency ')).map((r) => [r.package, r.draft])).toEqual(
      ['06', '07', '08', '09', '10', '11'].map((n) => [
        `edge-${n}/cert-manager`,
        'drafts/cert-manager/packagevariant-1',
      ]),
    )
    const browser = await launchChromium()
    try {
      const page = await browser.context.newPage()
      await page.goto(`file://${join(dir, 'status.html')}`)
      await page.waitForSelector('html[data-ready]')
      expect(nonZero(await pageCounts(page))).toEqual(expected)
      expect(await cellsByState(page)).toEqual(expected)
      for (const state of pageStates)
        expect(await page.isVisible(`#counts [data-state="${state}"]`)).toBe(state in expected)
      await page.click('#matrix-body .cell.s-published')
      expect(await page.textContent('#detail')).toContain('nginx/v1')
    } finally {
      await browser.close()
    }
  },
  timeout,
)

browserTest(
  'status --out --html shows the output directory as status --out --json reports it: behind, local edits, the dependencies installed',
  async () => {
    readmeUpgradeStep()
    rmSync(join(dir, 'fleet', 'broken.yaml'), { force: true })
    const status = await kptVariants('status', 'fleet', '--out', 'rendered', '--json', '--html', 'status-out.html')
    expect(status.exitCode).toBe(0)
    const rows = JSON.parse(status.stdout) as Parameters<typeof modelFromStatus>[0]
    const expected = nonZero(
      countStates(
        modelFromStatus(rows, '').variants,
        rows.variants.map((_, i) => i),
      ),
    )
    // Rendered at nginx v1, the set wants v2 (edge-12 is out of it); the cert-manager the first render installed on edge-06 to edge-12.
    expect(expected).toEqual({ behind: 11, installed: 7 })
    const browser = await launchChromium()
    try {
      const page = await browser.context.newPage()
      const errors: string[] = []
      page.on('pageerror', (e) => errors.push(e.message))
      await page.goto(`file://${join(dir, 'status-out.html')}`)
      await page.waitForSelector('html[data-ready]')
      expect(nonZero(await pageCounts(page))).toEqual(expected)
      expect(await cellsByState(page)).toEqual(expected)
      // The two packages edited by hand (README step 1, and edge-02's image), found by their local edits.
      await page.fill('#search', 'edited')
      expect(await cellsByState(page)).toEqual({ behind: 2 })
      await page.click('#matrix-body .row:has(.repo[title="edge-01"]) .cell')
      const detail = await page.textContent('#detail')
      expect(detail).toContain('local editsedited')
      expect(detail).toContain('previous upstreamnginx/v1')
      await page.fill('#search', '')
      await page.click('#matrix-body .row:has(.repo[title="edge-06"]) .cell.s-installed')
      expect(await page.textContent('#detail')).toContain('Dependencyedge-06/cert-manager')
      expect(await page.textContent('#detail')).toContain('versionv1.14.4')
      // edge-06's graph as the directory holds it: nginx, and the cert-manager installed for it.
      expect(await page.locator('#detail svg.graph .node').count()).toBe(2)
      expect(await page.locator('#detail svg.graph .node.dependency').count()).toBe(1)
      expect(errors).toEqual([])
    } finally {
      await browser.close()
    }
  },
  timeout,
)
