/**
 * The fleet page at 10,000 variants (issue 32: under 20 MB, interactive
 * within 2 s in Chromium on this machine). The fleet is the render
 * benchmarks' (bench/fleet-fixture.ts, a 50-resource package per cluster),
 * rendered, then moved to upstream revision 2: the page is that update's
 * `--dry-run --report`, so every variant has a diff, the heaviest page a
 * render makes. Timed: opening the page in Debian's Chromium (playwright-core)
 * until its script marks it ready (matrix drawn, filters live), and opening
 * one variant until its diff is drawn. The page's own clock (ms from
 * navigation to ready) is reported beside. Baseline: the same page of 100
 * variants, so the ratio shows what 100 times the fleet costs.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'
import type { BrowserContext, Page } from 'playwright-core'
import { createFleet, setText } from './fleet-fixture.js'
import type { Benchmark } from './harness.js'
import { benchTmp } from './scratch.js'

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)))
const launcher = join(root, 'bin', 'kpt-variants')
const chromiumPath = process.env['KPT_VARIANTS_CHROMIUM'] || '/usr/bin/chromium'

interface PageWork {
  file: string
  megabytes: number
  context: BrowserContext
  page: Page
  readyMs: number[]
}

/** A fleet of `size` variants, rendered, then the page of its update to revision 2 (dry run, every diff). */
async function makePage(size: number): Promise<string> {
  const dir = mkdtempSync(join(benchTmp(), `kpt-variants-bench-page-${size}-`))
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
  const fleet = await createFleet(dir, { variants: size, resources: 50 })
  const render = (...extra: string[]) => {
    const run = spawnSync(
      process.execPath,
      [launcher, 'render', fleet, '--out', join(dir, 'out'), '--cache', join(dir, 'cache'), '--no-progress', ...extra],
      { encoding: 'utf8', maxBuffer: 2 ** 30 },
    )
    if (run.status !== 0) throw new Error(`kpt-variants render exited ${run.status}:\n${run.stderr.slice(-4000)}`)
    return run.stderr
  }
  render()
  writeFileSync(join(fleet, 'set.yaml'), setText(2))
  const file = join(dir, 'fleet.html')
  const summary = render('--dry-run', '--report', file)
  if (!summary.includes(`${size} variant(s): 0 created, ${size} updated`))
    throw new Error(`unexpected render: ${summary.slice(-2000)}`)
  return file
}

async function openBrowser(file: string): Promise<PageWork> {
  const profile = mkdtempSync(join(benchTmp(), 'kpt-variants-bench-chromium-'))
  process.once('exit', () => rmSync(profile, { recursive: true, force: true }))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    viewport: { width: 1400, height: 900 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
  return {
    file,
    megabytes: Math.round((statSync(file).size / 1e6) * 100) / 100,
    context,
    page: await context.newPage(),
    readyMs: [],
  }
}

/** Loads the page until its script says it is ready; records the page's own time to ready. */
async function open(work: PageWork): Promise<void> {
  await work.page.goto(`file://${work.file}`)
  await work.page.waitForSelector('html[data-ready]')
  work.readyMs.push(Number(await work.page.getAttribute('html', 'data-ready')))
}

/** Opens the variant of the matrix's 5th row and waits for its diff. */
async function openVariant(work: PageWork): Promise<void> {
  await work.page.click('#matrix-body .row:nth-child(5) .cell')
  await work.page.waitForSelector('#diff[data-drawn]')
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? NaN
}

const pages = new Map<number, Promise<PageWork>>()
const pageOf = (size: number) => pages.get(size) ?? pages.set(size, makePage(size).then(openBrowser)).get(size)!

async function closeAll(): Promise<void> {
  for (const work of pages.values()) await (await work).context.close()
  pages.clear()
}

const size = 10_000
const baselineSize = 100

const openCase: Benchmark = {
  name: `fleet page of ${size.toLocaleString('en-US')} variants (an upstream update, every diff): open until interactive in Chromium`,
  goal: { maxMs: 2000, maxFigure: { name: 'page MB', max: 20 }, label: '< 2 s, page < 20 MB' },
  iterations: 7,
  setup: async () => {
    const work = await pageOf(size)
    openCase.name = `${openCase.name} (page ${work.megabytes} MB)`
    await pageOf(baselineSize)
    return work
  },
  run: (input) => open(input as PageWork),
  baseline: { name: `the same page of ${baselineSize} variants`, run: async () => open(await pageOf(baselineSize)) },
  figures: async (input) => {
    const work = input as PageWork
    return {
      'page MB': work.megabytes,
      "ready, by the page's clock (ms)": median(work.readyMs),
      [`page MB at ${baselineSize}`]: (await pageOf(baselineSize)).megabytes,
    }
  },
}

const detailCase: Benchmark = {
  name: `fleet page of ${size.toLocaleString('en-US')} variants: open a variant until its diff is drawn`,
  goal: { maxMs: 500 },
  iterations: 7,
  setup: () => pageOf(size),
  beforeEach: (input) => open(input as PageWork),
  run: (input) => openVariant(input as PageWork),
  baseline: {
    name: `the same in the page of ${baselineSize} variants`,
    beforeEach: async () => open(await pageOf(baselineSize)),
    run: async () => openVariant(await pageOf(baselineSize)),
  },
  teardown: closeAll,
}

if (!existsSync(chromiumPath))
  console.log(`  SKIPPED: the fleet page benchmarks need Chromium at ${chromiumPath} (apt-get install chromium)`)

export const benchmarks: Benchmark[] = existsSync(chromiumPath) ? [openCase, detailCase] : []
